package campaigndir

import (
	"bytes"
	"encoding/json"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/perfdag/perfdag/schema"
)

// The reading side of the atlas row formats (normalized.json and atlas.jsonl). Rows are read
// back far more often than they are written — a million-row atlas is unioned, scanned by the
// report, the lake and the champion — so each row is decoded once, by encoding/json/v2 (the
// github.com/go-json-experiment/json mirror, which the standard library adopts in Go 1.27),
// about 2.5× faster than encoding/json. encoding/json stays the reference: a row v2 refuses (an
// unknown field, a duplicate or case-folded name, invalid UTF-8) is decoded again by
// encoding/json, whose verdict and error stand, so what reads and what fails is unchanged.

// strictV2 refuses unknown fields, as DisallowUnknownFields does.
var strictV2 = jsonv2.RejectUnknownMembers(true)

// decodeRow decodes one JSON object into row (reset first), strictly; ok is false when v2
// refused it and the caller must fall back to encoding/json.
func decodeRow(b []byte, row *schema.AtlasRow) (ok bool) {
	*row = schema.AtlasRow{}
	return jsonv2.Unmarshal(b, row, strictV2) == nil
}

// decodeRowV1 is the reference decoding of one row: encoding/json, unknown fields refused,
// nothing after the object.
func decodeRowV1(b []byte, row *schema.AtlasRow) error {
	*row = schema.AtlasRow{}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(row)
}

// decodeRows decodes a normalized.json. The form WriteCell writes — "[", one compact row per
// line ending in "," but the last, "]" — is decoded row by row; anything else (the indented
// form older versions wrote, a file that is not valid) is decoded as one array by
// DecodeStrict, which also names what is wrong.
func decodeRows(name string, b []byte) ([]schema.AtlasRow, error) {
	if rows, ok := decodeCompactRows(b); ok {
		return rows, nil
	}
	var rows []schema.AtlasRow
	if err := DecodeStrict(name, b, &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// decodeCompactRows decodes b when it is exactly in the compact form and v2 accepts every row;
// ok is false otherwise.
func decodeCompactRows(b []byte) (rows []schema.AtlasRow, ok bool) {
	body, ok := bytes.CutPrefix(b, []byte("[\n"))
	if !ok {
		return nil, false
	}
	if body, ok = bytes.CutSuffix(body, []byte("]\n")); !ok {
		return nil, false
	}
	if len(body) == 0 {
		return []schema.AtlasRow{}, true
	}
	if body[len(body)-1] != '\n' {
		return nil, false
	}
	rows = make([]schema.AtlasRow, 0, bytes.Count(body, []byte("\n")))
	for len(body) > 0 {
		i := bytes.IndexByte(body, '\n')
		line := body[:i]
		body = body[i+1:]
		last := len(body) == 0
		if !last {
			if line, ok = bytes.CutSuffix(line, []byte(",")); !ok {
				return nil, false
			}
		}
		if len(line) == 0 || line[0] != '{' {
			return nil, false
		}
		rows = append(rows, schema.AtlasRow{})
		if !decodeRow(line, &rows[len(rows)-1]) {
			return nil, false
		}
	}
	return rows, true
}

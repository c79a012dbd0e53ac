package campaigndir

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"

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
//
// Rows and lines are appended to rows and lines (empty, with storage to reuse). lines holds, for
// each row, its line in the file (inside b), when the file is in that form and
// its first row's line is byte for byte what AtlasEncoder writes for it: the file came from this
// version's encoder, so every row's line is its atlas line and need not be encoded again. lines
// is empty otherwise (an indented file, or a compact one from a version whose rows had other
// fields). The one way a row of such a file can differ from its re-encoding is a value only its
// text holds exactly — a number in extra beyond float64's precision, an invalid UTF-8 byte
// written as \ufffd — which the copied line keeps as written and which reads back the same.
func decodeRows(name string, b []byte, rows []schema.AtlasRow, lines [][]byte) ([]schema.AtlasRow, [][]byte, error) {
	if rows, lines, ok := decodeCompactRows(b, rows, lines); ok {
		if len(rows) == 0 || !encodesAs(&rows[0], lines[0]) {
			lines = lines[:0]
		}
		return rows, lines, nil
	}
	rows = nil // encoding/json would reuse what the slots hold
	if err := DecodeStrict(name, b, &rows); err != nil {
		return nil, nil, err
	}
	return rows, lines[:0], nil
}

// encodesAs reports whether AtlasEncoder writes row as line.
func encodesAs(row *schema.AtlasRow, line []byte) bool {
	var buf bytes.Buffer
	if newRowEncoder(&buf).Encode(row) != nil {
		return false
	}
	return bytes.Equal(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), line)
}

// newRowEncoder is the encoding of an atlas row, in normalized.json and atlas.jsonl alike:
// compact, HTML characters as they are, a newline after each row.
func newRowEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// decodeCompactRows appends the rows of b and their lines to rows and lines when b is exactly
// in the compact form and v2 accepts every row; ok is false otherwise.
func decodeCompactRows(b []byte, rows []schema.AtlasRow, lines [][]byte) (_ []schema.AtlasRow, _ [][]byte, ok bool) {
	body, ok := bytes.CutPrefix(b, []byte("[\n"))
	if !ok {
		return nil, nil, false
	}
	if body, ok = bytes.CutSuffix(body, []byte("]\n")); !ok {
		return nil, nil, false
	}
	if len(body) > 0 && body[len(body)-1] != '\n' {
		return nil, nil, false
	}
	for len(body) > 0 {
		i := bytes.IndexByte(body, '\n')
		line := body[:i]
		body = body[i+1:]
		if len(body) > 0 { // every row but the last ends in a comma
			if line, ok = bytes.CutSuffix(line, []byte(",")); !ok {
				return nil, nil, false
			}
		}
		if len(line) == 0 || line[0] != '{' {
			return nil, nil, false
		}
		rows = slices.Grow(rows, 1)[:len(rows)+1]
		if !decodeRow(line, &rows[len(rows)-1]) {
			return nil, nil, false
		}
		lines = append(lines, line)
	}
	if rows == nil {
		rows = []schema.AtlasRow{}
	}
	return rows, lines, true
}

package campaigndir

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

// TestDecodeRowsAgreesWithEncodingJSON: the fast row decoding reads and refuses exactly what
// the reference decoding (encoding/json, unknown fields refused, one array) does, with the
// same rows — in the compact form, the indented one, and inputs v2 alone would refuse.
func TestDecodeRowsAgreesWithEncodingJSON(t *testing.T) {
	rows := []schema.AtlasRow{
		{Schema: "atlas_v1", CellID: "a", Concurrency: 1, CellStatus: schema.CellFull, TTFTP50Ms: schema.F(1.5),
			Flags: []string{schema.FlagUsageMismatch}, Extra: map[string]any{"k": "<v>", "n": 3.0, "l": []any{"x", 1.0}},
			Gates: []schema.GateVerdict{{Gate: "g", Severity: "fail", Cell: "a", Concurrency: 1}}},
		{Schema: "atlas_v1", CellID: "a", Concurrency: 2, CellStatus: schema.CellFull},
	}
	_, compact, _, err := EncodeCell("a", rows, schema.CellFull)
	if err != nil {
		t.Fatal(err)
	}
	indented, err := EncodeJSON(rows)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(compact), "\n") // "[", row 1 + ",", row 2, "]", ""
	edit := func(i int, old, new string) string {
		l := append([]string(nil), lines...)
		l[i] = strings.Replace(l[i], old, new, 1)
		return strings.Join(l, "\n")
	}
	for _, tc := range []struct {
		name, in string
		fast     bool   // read row by row by v2
		wantErr  string // empty: decodes
	}{
		{"compact", string(compact), true, ""},
		{"indented", string(indented), false, ""},
		{"empty", "[\n]\n", true, ""},
		{"one line", "[" + strings.Join(lines[1:3], "") + "]", false, ""},
		{"two rows on a line", "[\n" + lines[1] + lines[2] + "\n]\n", false, ""},
		{"no final newline", strings.TrimSuffix(string(compact), "\n"), false, ""},
		{"case-folded name", edit(2, `"cell_id"`, `"CELL_ID"`), false, ""},
		{"duplicate name", edit(2, `"concurrency":2`, `"concurrency":2,"concurrency":3`), false, ""},
		{"invalid UTF-8", edit(2, `"atlas_v1"`, "\"atlas\xff\""), false, ""},
		{"unknown field", edit(2, `"cell_id"`, `"bogus":1,"cell_id"`), false, `unknown field "bogus"`},
		{"trailing comma", edit(2, "}", "},"), false, "invalid character ']'"},
		{"missing comma", edit(1, "},", "}"), false, "invalid character '{' after array element"},
		{"wrong type", edit(2, `"concurrency":2`, `"concurrency":"2"`), false, "cannot unmarshal string"},
		{"truncated", string(compact[:len(compact)/2]), false, "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []schema.AtlasRow
			wantErr := DecodeStrict("n.json", []byte(tc.in), &want)
			if _, _, fast := decodeCompactRows([]byte(tc.in), nil, nil); fast != tc.fast {
				t.Errorf("read row by row: %v, want %v", fast, tc.fast)
			}
			got, _, err := decodeRows("n.json", []byte(tc.in), nil, nil)
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("error %v, encoding/json says %v", err, wantErr)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("rows\n%+v\nencoding/json reads\n%+v", got, want)
			}
		})
	}
}

// TestAtlasDecoderAgreesWithEncodingJSON: each atlas line reads as encoding/json reads it, and
// a line it refuses is an error naming the file and line.
func TestAtlasDecoderAgreesWithEncodingJSON(t *testing.T) {
	row := `{"schema":"atlas_v1","cell_id":"a","concurrency":1,"ttft_p50_ms":1.5,"extra":{"k":[1,"x"]}}`
	for _, tc := range []struct {
		name, line, wantErr string
	}{
		{"compact", row, ""},
		{"case-folded name", strings.Replace(row, "cell_id", "Cell_Id", 1), ""},
		{"duplicate name", strings.Replace(row, `"concurrency":1`, `"concurrency":1,"concurrency":4`, 1), ""},
		{"unknown field", strings.Replace(row, `"cell_id"`, `"bogus":true,"cell_id"`, 1), `atlas.jsonl:3: json: unknown field "bogus"`},
		{"wrong type", strings.Replace(row, `1.5`, `"1.5"`, 1), "atlas.jsonl:3: json: cannot unmarshal string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want schema.AtlasRow
			if err := decodeRowV1([]byte(tc.line), &want); (err != nil) != (tc.wantErr != "") {
				t.Fatalf("encoding/json: %v", err)
			}
			in := row + "\n\n" + tc.line + "\n"
			dec := NewAtlasDecoder(strings.NewReader(in), "atlas.jsonl")
			var got schema.AtlasRow
			if err := dec.Next(&got); err != nil {
				t.Fatal(err)
			}
			err := dec.Next(&got)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) || dec.Line() != 3 {
				t.Fatalf("line %d: %+v, encoding/json reads %+v", dec.Line(), got, want)
			}
			if err := dec.Next(&got); err != io.EOF {
				t.Fatalf("after the last row: %v", err)
			}
		})
	}
}

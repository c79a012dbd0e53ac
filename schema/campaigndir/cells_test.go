package campaigndir

import (
	"os"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

// TestReadCellReadsBothEncodings: a cell written now (compact rows) and one an older version
// wrote (indented JSON) read back to the same rows.
func TestReadCellReadsBothEncodings(t *testing.T) {
	rows := []schema.AtlasRow{
		{CellID: "a", Concurrency: 1, CellStatus: schema.CellFull, TTFTP50Ms: schema.F(1.5), Extra: map[string]any{"k": "<v>"}},
		{CellID: "a", Concurrency: 2, CellStatus: schema.CellFull},
	}
	for _, tc := range []struct {
		name   string
		legacy bool
	}{{"compact", false}, {"indented", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files, err := WriteCell(dir, "a", rows, schema.CellFull)
			if err != nil {
				t.Fatal(err)
			}
			if tc.legacy {
				b, err := EncodeJSON(rows)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(Abs(dir, files.Normalized), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, status, err := ReadCell(Reader{Dir: dir}, files)
			if err != nil {
				t.Fatal(err)
			}
			if status != schema.CellFull || len(got) != 2 || got[0].Concurrency != 1 || *got[0].TTFTP50Ms != 1.5 || got[0].Extra["k"] != "<v>" || got[1].Concurrency != 2 {
				t.Fatalf("got %+v %q", got, status)
			}
		})
	}
}

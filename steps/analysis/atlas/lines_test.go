package atlas

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// TestAggregateDirMatchesReference: the on-disk pass — rows decoded by encoding/json/v2, lines
// of compact files copied rather than encoded again — writes byte for byte the atlas of the
// reference path (every file decoded by encoding/json, every row sorted and encoded), over cells
// written compact, rewritten indented as older versions wrote them, compact but out of order,
// and compact by "an older version" whose rows lack fields this one writes.
func TestAggregateDirMatchesReference(t *testing.T) {
	dir := t.TempDir()
	cells := fixture40(t, dir)
	for i, f := range cells {
		if i%3 == 0 { // every third cell as an older version wrote it: indented
			var rows []schema.AtlasRow
			b, err := os.ReadFile(campaigndir.Abs(dir, f.Normalized))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &rows); err != nil {
				t.Fatal(err)
			}
			writeRaw(t, dir, f.Normalized, mustIndent(t, rows))
		}
	}
	rich := schema.AtlasRow{Schema: "atlas_v1", Campaign: "glm51-multihw", CellID: "rich", Concurrency: 8, CellStatus: schema.CellPartial,
		Engine: "vllm", Shape: "aa-1k <&> é \u2028", TTFTP50Ms: schema.F(0.1 + 0.2), OutputTokPerSPerGPU: schema.F(1e21), MeanInputTokens: schema.F(1000),
		Flags: []string{schema.FlagSteadyWindowUndercount}, ErrorMessages: map[string][]string{"5xx": {"bad <gateway>"}},
		Gates: []schema.GateVerdict{{Gate: "ttft", Node: "run", Cell: "rich", Concurrency: 8, Severity: "fail", Rule: "ttft_p50_ms < 1", Value: "ttft_p50_ms=0.3"}},
		Extra: map[string]any{"z": "last", "a": []any{1.5, "x", nil, true}, "m": map[string]any{"k": -0.0}}}
	second := rich
	second.Concurrency, second.Extra = 2, nil
	// rows out of atlas order, written as they are (WriteCell would sort them)
	files, normalized, status, err := campaigndir.EncodeCell("rich", []schema.AtlasRow{rich, second}, schema.CellPartial)
	if err != nil {
		t.Fatal(err)
	}
	writeRaw(t, dir, files.Normalized, normalized)
	writeRaw(t, dir, files.Status, status)
	cells = append(cells, files)
	// compact, but from a version whose rows had fewer fields: decoded, then encoded anew
	old := `[` + "\n" + `{"schema":"atlas_v1","cell_id":"old","concurrency":1,"cell_status":"full","plot_ready":true,"ttft_p50_ms":12}` + "\n]\n"
	oldFiles := campaigndir.CellFiles{Cell: "old", Normalized: campaigndir.Normalized("old"), Status: campaigndir.CellStatus("old")}
	writeRaw(t, dir, oldFiles.Normalized, []byte(old))
	writeRaw(t, dir, oldFiles.Status, []byte(schema.CellFull+"\n"))
	cells = append(cells, oldFiles)

	r := campaigndir.Unrecorded(dir)
	copied := 0
	var all []schema.AtlasRow
	for _, f := range cells {
		_, lines, _, err := campaigndir.ReadCellLines(r, f)
		if err != nil {
			t.Fatal(err)
		}
		if lines != nil {
			copied++
		}
		b, err := os.ReadFile(campaigndir.Abs(dir, f.Normalized))
		if err != nil {
			t.Fatal(err)
		}
		var rows []schema.AtlasRow
		if err := json.Unmarshal(b, &rows); err != nil {
			t.Fatal(err)
		}
		all = append(all, rows...)
	}
	if want := 40 - 14 + 1; copied != want { // 14 of fixture40 indented, "old" re-encoded
		t.Errorf("%d cells copied line by line, want %d", copied, want)
	}
	var want bytes.Buffer
	wantCov, err := Aggregate(&want, all...)
	if err != nil {
		t.Fatal(err)
	}
	cov, err := AggregateDir(context.Background(), r, campaigndir.Atlas(), cells)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Atlas()))
	if err != nil {
		t.Fatal(err)
	}
	if cov != wantCov || cov.Rows != 240+3 {
		t.Errorf("coverage %+v, reference %+v", cov, wantCov)
	}
	if !bytes.Equal(got, want.Bytes()) {
		gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want.Bytes(), []byte("\n"))
		for i := range min(len(gl), len(wl)) {
			if !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("atlas line %d\n got %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("atlas has %d lines, the reference %d", len(gl), len(wl))
	}
}

func mustIndent(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func writeRaw(t *testing.T, dir, rel string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(campaigndir.Abs(dir, rel)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(campaigndir.Abs(dir, rel), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

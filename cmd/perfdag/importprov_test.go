package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/lake"
	"github.com/perfdag/perfdag/steps/testkit"
)

const sampleModel = "meta-llama/Llama-3.1-8B-Instruct"

// sampleBases is the token basis each cell of pipelines/imports.yaml names: perfdag's own for
// the measured cell, the source tool's counts (as its file states them) for the imported ones.
var sampleBases = map[string]string{
	"measured":     schema.TokenBasisServer,
	"aiperf":       "imported:aiperf tokenizer " + sampleModel,
	"vllm-bench":   "imported:vllm-bench server usage, else tokenizer " + sampleModel,
	"sglang-bench": "imported:sglang-bench server usage, else requested length",
}

// sampleTimes are the imported points' started_at / ended_at: AIPerf's epoch-ns records
// exactly, vLLM's date as its file states it (local time, no zone; the start unknown), SGLang
// none (its file states no wall-clock).
var sampleTimes = map[string][2]string{
	"aiperf":       {"2025-06-12T10:15:30.123456789Z", "2025-06-12T10:15:30.561389789Z"},
	"vllm-bench":   {"", "2025-06-12T10:15:30"},
	"sglang-bench": {"", ""},
}

// checkImportedProvenance: each imported point.json and atlas row names its source's token
// basis and the file's own times (never a 1970 date read off a monotonic clock), and the
// report's cover says whose token counts the imported points rest on.
func checkImportedProvenance(t *testing.T, dir string, rows []schema.AtlasRow) {
	t.Helper()
	for cell, basis := range sampleBases {
		var p schema.Point
		b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Point(cell, schema.Conc(4))))
		if err == nil {
			err = json.Unmarshal(b, &p)
		}
		if err != nil {
			t.Fatalf("%s point: %v", cell, err)
		}
		if p.TokenBasis != basis {
			t.Errorf("%s point.json token_basis %q, want %q", cell, p.TokenBasis, basis)
		}
		if want, ok := sampleTimes[cell]; ok && (p.StartedAt != want[0] || p.EndedAt != want[1] || p.Import == nil || p.Import.Clock == "") {
			t.Errorf("%s point.json started_at %q ended_at %q (import %+v), want %q %q and a clock note", cell, p.StartedAt, p.EndedAt, p.Import, want[0], want[1])
		}
	}
	for _, r := range rows {
		if want := sampleBases[r.CellID]; r.TokenBasis != want {
			t.Errorf("%s atlas row token_basis %q, want %q", r.CellID, r.TokenBasis, want)
		}
	}
	text := coverText(t, campaigndir.Abs(dir, campaigndir.Report()))
	for _, want := range []string{
		"Token counts: OSL, ITL and tok/s count the server's usage (1 point); ISL is the asked prompt in o200k_base tokens.",
		"none counted by perfdag - aiperf: tokenizer " + sampleModel + " (1 point); sglang-bench: server usage, else requested length (1 point); " +
			"vllm-bench: server usage, else tokenizer " + sampleModel + " (1 point).",
		"(perfdag's points: ISL o200k_base, OSL server usage; imported points: ISL and OSL as their source tool counted them)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("cover lacks %q", want)
		}
	}
	if strings.Contains(text, "o200k_base count") {
		t.Error("cover says some points count on the client's o200k_base count: no point of this campaign does")
	}
}

// coverText is the report's first page as text, whitespace folded.
func coverText(t *testing.T, pdf string) string {
	t.Helper()
	bin := testkit.NeedTool(t, "pdftotext")
	out, err := exec.Command(bin, "-layout", "-f", "1", "-l", "1", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// checkLakeBases: the lake's atlas rows carry each point's token basis as the atlas has it.
func checkLakeBases(t *testing.T, url, campaignID string) {
	t.Helper()
	ctx := context.Background()
	l, err := lake.Open(ctx, url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	rows, err := l.Read(ctx, lake.AtlasTable, campaignID)
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := lake.TableNamed(lake.AtlasTable)
	cellCol, basisCol := -1, -1
	for i, c := range tb.Columns {
		switch c.Name {
		case "cell_id":
			cellCol = i
		case "token_basis":
			basisCol = i
		}
	}
	if len(rows) != len(sampleBases) || cellCol < 0 || basisCol < 0 {
		t.Fatalf("lake holds %d atlas rows of %s (cell_id column %d, token_basis %d), want %d", len(rows), campaignID, cellCol, basisCol, len(sampleBases))
	}
	for _, r := range rows {
		cell, _ := r[cellCol].(string)
		if got, want := r[basisCol], sampleBases[cell]; got != want {
			t.Errorf("lake row %s token_basis %v, want %q", cell, got, want)
		}
	}
}

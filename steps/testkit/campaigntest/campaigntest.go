// Package campaigntest writes finished campaign directories (atlas.jsonl, tpm_summary.json,
// a roofline sweep, champion.json, the frozen config and run.json) for publish tests, from
// the deterministic campaigns of steps/testkit/laketest.
package campaigntest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/engine/workspace"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	strictpublish "github.com/perfdag/perfdag/steps/strict-publish"
	"github.com/perfdag/perfdag/steps/testkit/fixture"
	"github.com/perfdag/perfdag/steps/testkit/laketest"
)

// Campaign is a campaign directory to write.
type Campaign struct {
	laketest.Spec
	Kind     string // throughput (default), latency, mixed
	Publish  string // the publish: block's YAML body, indented two spaces; "" for none
	Champion string // champion arm; "" writes no champion.json
}

// ID is the campaign directory name (and so the campaign_id of its lake rows).
func (c Campaign) ID() string { return "20261202T130455Z-" + c.Campaign }

// YAML is the campaign file: its cells match the atlas cells, and the pipeline is the one
// strict-publish step (the analysis outputs are written by Write, not by other steps).
func (c Campaign) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\ncampaign: %s\nkind: %s\nendpoints:\n  main: {url: \"sim://\", model: m}\ncells:\n", c.Campaign, or(c.Kind, "throughput"))
	for i := range c.Cells {
		fmt.Fprintf(&b, "  - id: cell-%03d\n    workload: {shape: aa-1k}\n    concurrencies: [1]\n", i)
	}
	if c.FailedCell {
		b.WriteString("  - id: failed-cell\n    workload: {shape: aa-1k}\n    concurrencies: [1]\n")
	}
	if c.Publish != "" {
		b.WriteString("publish:\n" + c.Publish)
		if !strings.HasSuffix(c.Publish, "\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString("pipeline:\n  - {id: evidence, kind: fixture, with: {atlas: fixture/atlas.jsonl, tpm: fixture/tpm.json")
	if len(laketest.Roofline(c.Spec)) > 0 {
		b.WriteString(", sweeps: {" + laketest.RooflineImportID + "-decode: fixture/sweep.json}")
	}
	if c.Champion != "" {
		b.WriteString(", champion: fixture/decision.json")
	}
	b.WriteString("}}\n  - {id: publish, kind: strict-publish, needs: [evidence]}\n")
	return b.String()
}

// Write creates root/<ID>: the campaign's analysis files as a fixture step offers them (written
// under baseDir/fixture and run through the engine, so the journal records them), and the
// frozen config. It returns the finished campaign as a publish reads it.
func Write(t testing.TB, root, baseDir string, c Campaign) campaigndir.Finished {
	t.Helper()
	dir := filepath.Join(root, c.ID())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fix := filepath.Join(baseDir, "fixture")
	var buf bytes.Buffer
	if _, err := atlas.Aggregate(&buf, laketest.Atlas(c.Spec)...); err != nil {
		t.Fatal(err)
	}
	must(t, campaigndir.WriteFile(campaigndir.Abs(fix, campaigndir.Atlas()), buf.Bytes()))
	put := func(name string, v any) {
		b, err := campaigndir.EncodeJSON(v)
		must(t, err)
		must(t, campaigndir.WriteFile(filepath.Join(fix, name), b))
	}
	put("tpm.json", laketest.TPM(c.Spec))
	if rows := laketest.Roofline(c.Spec); len(rows) > 0 {
		cell := laketest.RooflineImportID + "-decode"
		put("sweep.json", schema.RooflineSweep{Schema: schema.SchemaRooflineSweep, Campaign: c.Campaign, ImportID: laketest.RooflineImportID,
			DecodeCell: cell, PrefillCell: laketest.RooflineImportID + "-prefill",
			Hardware: "GB300", Quant: "NVFP4", TensorParallel: 4, CacheMode: "cold", HBMLabel: schema.HBMBytesLabel,
			DRAMLabel: schema.DRAMActiveLabel, Rows: rows})
	}
	if c.Champion != "" {
		put("decision.json", schema.Champion{Schema: schema.SchemaChampion, Campaign: c.Campaign,
			FocusMetric: "output_tok_s_per_gpu", TPOTSLOMs: 50, Champion: c.Champion, Delivery: "release",
			Recommendation: "ship " + c.Champion})
	}
	info := campaigndir.Info{Campaign: c.Campaign, SourcePath: filepath.Join(baseDir, c.Campaign+".yaml"), BaseDir: baseDir,
		Created: time.Date(2026, 12, 2, 13, 4, 55, 0, time.UTC), Version: "test"}
	must(t, workspace.Freeze(dir, []byte(c.YAML()), info))
	ev := record(t, dir, baseDir, c)
	return campaigndir.Finished{Dir: dir, BaseDir: baseDir, Files: campaigndir.Unrecorded(dir), Evidence: ev}
}

// record runs the fixture's evidence node, so the directory's journal holds the files as a
// finished run's outputs (what `perfdag publish DIR` opens).
func record(t testing.TB, dir, baseDir string, c Campaign) campaigndir.Evidence {
	t.Helper()
	reg, err := engine.NewRegistry(fixture.Kind, strictpublish.Kind)
	must(t, err)
	loaded, err := load.Bytes("campaign.yaml", baseDir, []byte(c.YAML()), reg, load.Options{Lookup: func(string) (string, bool) { return "unset", true }})
	must(t, err)
	p, err := plan.Compile(loaded)
	must(t, err)
	sum, err := run.New(p, dir, run.Options{Registry: reg, Only: []string{"evidence"}}).Run(context.Background())
	must(t, err)
	if sum.Failed() {
		t.Fatalf("fixture evidence: %+v", sum.Nodes)
	}
	recs, err := checkpoint.ReadOnly(dir).LoadAll()
	must(t, err)
	var res fixture.Result
	must(t, json.Unmarshal(recs["evidence"].Result, &res))
	return res.Files
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

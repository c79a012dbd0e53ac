// Package campaigntest writes finished campaign directories (atlas.jsonl, tpm_summary.json,
// a roofline sweep, champion.json, the frozen config and run.json) for publish tests, from
// the deterministic campaigns of steps/lake/laketest.
package campaigntest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/workspace"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/analysis/roofline"
	"github.com/perfdag/perfdag/steps/analysis/tpm"
	"github.com/perfdag/perfdag/steps/lake/laketest"
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
	b.WriteString("pipeline:\n  - {id: publish, kind: strict-publish}\n")
	return b.String()
}

// Write creates root/<ID> holding the campaign's outputs and frozen config; it returns the
// directory. baseDir is recorded in run.json as the campaign file's directory.
func Write(t testing.TB, root, baseDir string, c Campaign) string {
	t.Helper()
	dir := filepath.Join(root, c.ID())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := atlas.Aggregate(&buf, laketest.Atlas(c.Spec)...); err != nil {
		t.Fatal(err)
	}
	must(t, atlas.WriteFileAtomic(filepath.Join(dir, atlas.AtlasFile), buf.Bytes()))
	if _, err := tpm.Write(dir, laketest.TPM(c.Spec)); err != nil {
		t.Fatal(err)
	}
	if rows := laketest.Roofline(c.Spec); len(rows) > 0 {
		cell := filepath.Join(dir, "cells", laketest.RooflineImportID+"-decode")
		must(t, os.MkdirAll(cell, 0o755))
		sweep := schema.RooflineSweep{Schema: schema.SchemaRooflineSweep, Campaign: c.Campaign, ImportID: laketest.RooflineImportID,
			DecodeCell: laketest.RooflineImportID + "-decode", PrefillCell: laketest.RooflineImportID + "-prefill",
			Hardware: "GB300", Quant: "NVFP4", TensorParallel: 4, CacheMode: "cold", HBMLabel: schema.HBMBytesLabel,
			DRAMLabel: schema.DRAMActiveLabel, Rows: rows}
		b, err := atlas.EncodeJSON(sweep)
		must(t, err)
		must(t, atlas.WriteFileAtomic(filepath.Join(cell, roofline.SweepFile), b))
	}
	if c.Champion != "" {
		b, err := atlas.EncodeJSON(schema.Champion{Schema: schema.SchemaChampion, Campaign: c.Campaign,
			FocusMetric: "output_tok_s_per_gpu", TPOTSLOMs: 50, Champion: c.Champion, Delivery: "release",
			Recommendation: "ship " + c.Champion})
		must(t, err)
		must(t, atlas.WriteFileAtomic(filepath.Join(dir, "champion.json"), b))
	}
	info := workspace.Info{Campaign: c.Campaign, SourcePath: filepath.Join(baseDir, c.Campaign+".yaml"), BaseDir: baseDir,
		Created: time.Date(2026, 12, 2, 13, 4, 55, 0, time.UTC), Version: "test"}
	must(t, workspace.Freeze(dir, []byte(c.YAML()), info))
	return dir
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

package steps

import "github.com/perfdag/perfdag/schema"

// DefaultPipeline is what a campaign without `pipeline:` runs: the settle discipline it asks
// for, spec-decode scrapes around every point where the server exports /metrics, the load
// generator, DCGM correlation where an exporter is known, then the atlas, the champion, the report and
// the lake — the explicit pipeline of DESIGN.md, minus steps with nothing to do. Cells with an
// `import:` block read their points from files (the import kind) instead of being measured.
func DefaultPipeline(c *schema.Campaign) []schema.PipelineStep {
	var p []schema.PipelineStep
	add := func(s schema.PipelineStep) { p = append(p, s) }
	last := []string{}
	settle := c.Settle
	if settle != nil && len(settle.PrewarmShapes) > 0 {
		add(schema.PipelineStep{ID: "prewarm", Kind: "prewarm", Needs: last})
		last = []string{"prewarm"}
	}
	if settle != nil && settle.BurnIn {
		add(schema.PipelineStep{ID: "burn-in", Kind: "burn-in", Needs: last})
		last = []string{"burn-in"}
	}
	if settle != nil && settle.SettleS > 0 {
		add(schema.PipelineStep{ID: "settle", Kind: "settle", Needs: last})
		last = []string{"settle"}
	}
	imported, measured, swept := false, false, false
	for i := range c.Cells {
		cell := &c.Cells[i]
		imported = imported || cell.Import != nil
		measured = measured || cell.Import == nil
		swept = swept || cell.Expands()
	}
	onlyMeasured := ""
	if imported {
		onlyMeasured = "!imported" // imported cells take their points from files, not the endpoint
	}
	metrics, dcgm := false, false
	for _, ep := range c.Endpoints {
		sim := len(ep.URL) >= 6 && ep.URL[:6] == "sim://"
		metrics = metrics || ep.MetricsURL != "" || sim
		dcgm = dcgm || ep.DCGMURL != "" || sim
	}
	metrics, dcgm = metrics && measured, dcgm && measured
	if metrics {
		add(schema.PipelineStep{ID: "scrape-spec", Kind: "scrape-spec", Brackets: "run-shape", When: onlyMeasured})
	}
	var analysed []string
	if measured {
		add(schema.PipelineStep{ID: "run-shape", Kind: "run-shape", Needs: last, When: onlyMeasured})
		analysed = append(analysed, "run-shape")
	}
	if swept { // searched and stop_when cells: their points are made at run time
		add(schema.PipelineStep{ID: "sweep", Kind: "sweep", Needs: last})
		analysed = append(analysed, "sweep")
	}
	if imported {
		add(schema.PipelineStep{ID: "import", Kind: "import", When: "imported"})
		analysed = append(analysed, "import")
	}
	if dcgm {
		needs := []string{"run-shape"}
		if swept {
			needs = append(needs, "sweep")
		}
		add(schema.PipelineStep{ID: "dcgm-correlate", Kind: "dcgm-correlate", Needs: needs, When: onlyMeasured})
		analysed = append(analysed, "dcgm-correlate")
	}
	if metrics {
		analysed = append(analysed, "scrape-spec")
	}
	add(schema.PipelineStep{ID: "aggregate", Kind: "aggregate", Needs: analysed})
	reported := []string{"aggregate"}
	arms := map[string]bool{}
	for _, cell := range c.Cells {
		if cell.Arm != "" {
			arms[cell.Arm] = true
		}
	}
	if len(arms) > 1 {
		add(schema.PipelineStep{ID: "champion-select", Kind: "champion-select", Needs: []string{"aggregate"}, When: "len(cells) > 1"})
		reported = append(reported, "champion-select")
	}
	add(schema.PipelineStep{ID: "render", Kind: "render", Needs: reported})
	if c.Publish != nil {
		add(schema.PipelineStep{ID: "strict-publish", Kind: "strict-publish", Needs: []string{"render"}})
	}
	return p
}

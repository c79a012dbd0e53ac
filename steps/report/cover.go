package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"
	"github.com/johnfercher/maroto/v2/pkg/props"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/catalog"
)

// coverPage draws the title, the coverage line, the caveats, the source under test and the
// contents (with which pages lack data).
func coverPage(d sink, v *view, _ *artwork) {
	d.newPage(TitleCover)
	d.para(v.opt.title, 20, fontstyle.Bold, nil)
	if c := v.in.Campaign; c != nil {
		sub := "Campaign " + c.Campaign
		if c.Kind != "" {
			sub += " (" + c.Kind + ")"
		}
		d.para(sub, 10, fontstyle.Normal, &colorMuted)
		if c.Description != "" {
			d.para(c.Description, bodySize, fontstyle.Normal, nil)
		}
	}
	d.space(2)
	vl, ok := verdict(v)
	var vc *props.Color
	if !ok {
		vc = &colorWarn
	}
	d.para(vl, 12, fontstyle.Bold, vc)
	d.para(v.coverageLine(), 9, fontstyle.Bold, nil)
	d.space(2)
	headlinePart(d, v)
	costPart(d, v)

	d.heading("Caveats")
	for _, c := range caveats(v) {
		d.para("- "+c, bodySize, fontstyle.Normal, nil)
	}
	d.space(2)

	d.heading("Quality gates")
	for _, line := range gateLines(v.in.Gates) {
		d.para("- "+line, bodySize, fontstyle.Normal, nil)
	}
	d.space(2)

	d.heading("Source under test")
	var rows [][]tcell
	for _, f := range sourceFields(v) {
		rows = append(rows, []tcell{{text: f[0], bold: true}, plain(f[1])})
	}
	d.table([]tcol{{head: "Field", w: 10}, {head: "Value", w: 30}}, nil, rows)
	d.space(3)

	d.heading("Contents")
	var crows [][]tcell
	for i, p := range Contents(v.in) {
		if i == 0 || !p.Listed() {
			continue
		}
		status := tcell{text: "data present"}
		if !p.HasData {
			status = tcell{text: "no data: " + p.Missing, fg: &colorWarn}
		}
		crows = append(crows, []tcell{plain(p.Title), status})
	}
	d.table([]tcol{{head: "Page", w: 16}, {head: "Status", w: 24}}, nil, crows)
}

// gateLines summarises the gate verdicts: every failed and warned gate with the nodes it did
// not pass on and the values its rule read there, or that all passed.
func gateLines(vs []schema.GateVerdict) []string {
	if len(vs) == 0 {
		return []string{"No quality gates were evaluated in this campaign."}
	}
	type group struct {
		first schema.GateVerdict
		nodes []string
	}
	var order []string
	groups := map[string]*group{}
	passed := 0
	for _, v := range vs {
		if v.Passed {
			passed++
			continue
		}
		g, ok := groups[v.Gate]
		if !ok {
			g = &group{first: v}
			groups[v.Gate] = g
			order = append(order, v.Gate)
		}
		node := v.Node
		if v.Value != "" {
			node += " (" + v.Value + ")"
		}
		g.nodes = append(g.nodes, node)
	}
	out := []string{fmt.Sprintf("%d of %s passed.", passed, plural.N(len(vs), "gate check"))}
	for _, id := range order {
		g := groups[id]
		nodes := strings.Join(g.nodes, ", ")
		if len(g.nodes) > 6 {
			nodes = strings.Join(g.nodes[:6], ", ") + fmt.Sprintf(" and %d more", len(g.nodes)-6)
		}
		why := g.first
		why.Value = "" // each node's values are named beside it
		out = append(out, fmt.Sprintf("%s %s (%s): %s — on %s", strings.ToUpper(why.Outcome()), id, why.Severity, why.Why(), nodes))
	}
	return out
}

// caveats lists what every number in the report must be read with: cache mode, ISL/OSL,
// settle discipline, undercounted windows, evicted context, grounding and failures.
func caveats(v *view) []string {
	var out []string
	cells := map[string]*schema.AtlasRow{}
	for i := range v.rows {
		if _, ok := cells[v.rows[i].CellID]; !ok {
			cells[v.rows[i].CellID] = &v.rows[i]
		}
	}
	modes := map[string]int{}
	for _, r := range cells {
		modes[r.CacheMode]++
	}
	switch {
	case len(cells) == 0:
		out = append(out, "Cache mode: no atlas rows, nothing measured.")
	case len(modes) == 1 && modes["warm"] > 0:
		out = append(out, "Cache mode: warm prefix cache. Numbers are a warm best case, not a cold-start commitment.")
	case len(modes) == 1 && modes["cold"] > 0:
		out = append(out, "Cache mode: cold prefix cache (prefix caching could not flatter these numbers).")
	case len(modes) == 1:
		out = append(out, "Cache mode: not declared. Treat the numbers as a warm best case until the cache mode is stated.")
	default:
		var parts []string
		for _, m := range slices.Sorted(maps.Keys(modes)) {
			name := m
			if name == "" {
				name = "undeclared"
			}
			parts = append(parts, fmt.Sprintf("%s: %s", name, plural.N(modes[m], "cell")))
		}
		out = append(out, "Cache mode: mixed ("+strings.Join(parts, ", ")+"). Compare cells only within one cache mode.")
	}
	out = append(out, islOSL(v)...)
	out = append(out, settleCaveat(v.in.Campaign))

	var undercount, evicted, suspect, grounded, ready, clientBound int
	evictedCells := map[string]bool{}
	for i := range v.rows {
		r := &v.rows[i]
		if hasFlag(r, schema.FlagSteadyWindowUndercount) {
			undercount++
		}
		if hasFlag(r, FlagEvicted) {
			evicted++
			evictedCells[r.CellID] = true
		}
		if hasFlag(r, schema.FlagReasoningParserSuspect) {
			suspect++
		}
		if hasFlag(r, schema.FlagClientBound) {
			clientBound++
		}
		if r.PlotReady {
			ready++
			if r.DCGMGrounded {
				grounded++
			}
		}
	}
	if undercount > 0 {
		out = append(out, fmt.Sprintf("Steady window: %s with num_prompts < 2 x concurrency; their throughput is undercounted (ramp/drain-dominated window).", plural.N(undercount, "point")))
	}
	if clientBound > 0 {
		out = append(out, fmt.Sprintf("Client-bound: %s ran with the client as the bottleneck (its CPU saturated, sends late or reads behind the kernel's receive stamps: client_bound in point.json); their numbers measure the client as much as the server. Lower their load or split it over more clients.", plural.N(clientBound, "point")))
	}
	if evicted > 0 {
		out = append(out, fmt.Sprintf("Evicted context: %s (%s) ran while the server evicted request context from its KV cache; their latencies include recomputation.", plural.N(len(evictedCells), "cell"), plural.N(evicted, "point")))
	}
	if suspect > 0 {
		out = append(out, fmt.Sprintf("Reasoning parser: %s show TTFT == TTFO on a reasoning model, the fingerprint of an unconfigured reasoning parser.", plural.N(suspect, "point")))
	}
	switch {
	case ready == 0:
	case grounded == 0:
		out = append(out, fmt.Sprintf("Grounding: none of the %s is DCGM byte-grounded; every number rests on client-side throughput alone (sol_rigor L1).", plural.N(ready, "plot-ready point")))
	case grounded < ready:
		out = append(out, fmt.Sprintf("Grounding: %d of %s %s DCGM byte-grounded (sol_rigor L3); the other %d %s on client-side throughput alone (L1).", grounded, plural.N(ready, "plot-ready point"), verb(grounded, "is", "are"), ready-grounded, verb(ready-grounded, "rests", "rest")))
	}
	if reqs, errs, pts := requestErrors(v); errs > 0 {
		out = append(out, fmt.Sprintf("Request errors: %d of %s failed, on %s; throughput counts only the requests that succeeded.", errs, plural.N(reqs, "request"), plural.N(pts, "point")))
	}
	out = append(out, fidelityCaveats(v)...)
	if v.coverage.Failed+v.coverage.Partial > 0 {
		out = append(out, fmt.Sprintf("Failures: %s failed and %s partial; their missing points are grey in the heatmaps and absent from the scatter panes.",
			plural.N(v.coverage.Failed, "cell"), plural.N(v.coverage.Partial, "cell")))
	}
	return out
}

// islOSL states the input/output lengths per shape: declared, and measured means.
func islOSL(v *view) []string {
	type acc struct {
		isl, osl []*float64
		server   bool     // some row counts OSL on the server's usage
		tokfile  []string // tokenizer:<file> bases some rows count OSL on
		own      bool     // some row is perfdag's own (not imported)
		imported bool     // some row is imported: its ISL and OSL are the source tool's counts
	}
	byShape := map[string]*acc{}
	for i := range v.rows {
		r := &v.rows[i]
		a := byShape[r.Shape]
		if a == nil {
			a = &acc{}
			byShape[r.Shape] = a
		}
		if schema.IsImportedBasis(r.TokenBasis) {
			a.imported = true
		} else {
			a.own = true
		}
		a.server = a.server || r.TokenBasis == schema.TokenBasisServer
		if schema.IsTokenizerBasis(r.TokenBasis) && !slices.Contains(a.tokfile, r.TokenBasis) {
			a.tokfile = append(a.tokfile, r.TokenBasis)
		}
		if r.PlotReady {
			a.isl = append(a.isl, r.MeanInputTokens)
			a.osl = append(a.osl, r.MeanOutputTokens)
		}
	}
	var out []string
	for _, shape := range slices.Sorted(maps.Keys(byShape)) {
		a := byShape[shape]
		name := shape
		if name == "" {
			name = "(no shape)"
		}
		s := "ISL/OSL " + name + ": "
		if sh, ok := catalog.ShapeByName(shape); ok {
			s += fmt.Sprintf("declared %s/%s tokens; ", group(fmt.Sprint(sh.InputTokens)), group(fmt.Sprint(sh.OutputTokens)))
		}
		if isl, osl := mean(a.isl), mean(a.osl); isl != nil || osl != nil {
			basis := "o200k_base"
			switch {
			case a.server && len(a.tokfile) > 0:
				basis = "ISL o200k_base, OSL server usage or " + strings.Join(a.tokfile, ", ")
			case a.server:
				basis = "ISL o200k_base, OSL server usage"
			case len(a.tokfile) > 0:
				basis = "ISL o200k_base, OSL " + strings.Join(a.tokfile, ", ")
			}
			switch {
			case a.imported && a.own:
				basis = "perfdag's points: " + basis + "; " + importedLengths
			case a.imported:
				basis = importedLengths
			}
			s += fmt.Sprintf("measured mean %s/%s tokens (%s).", num(isl), num(osl), basis)
		} else {
			s += "no measured lengths."
		}
		out = append(out, s)
	}
	return out
}

func settleCaveat(c *schema.Campaign) string {
	if c == nil || c.Settle == nil || (len(c.Settle.PrewarmShapes) == 0 && !c.Settle.BurnIn && c.Settle.SettleS == 0) {
		return "Settle discipline: NOT used (no prewarm, burn-in or settle pause). First-after-deploy numbers can run 6-37 % low without shape-matched warm-up."
	}
	var parts []string
	if s := c.Settle; len(s.PrewarmShapes) > 0 {
		parts = append(parts, "prewarm at "+strings.Join(s.PrewarmShapes, ", "))
	}
	if c.Settle.BurnIn {
		parts = append(parts, "a burn-in pass of each cell's first point")
	}
	if c.Settle.SettleS > 0 {
		parts = append(parts, fmt.Sprintf("a %s s settle pause between points", stated(c.Settle.SettleS)))
	}
	return "Settle discipline: used (" + strings.Join(parts, "; ") + ")."
}

// sourceFields names the code under test: campaign source block first, then the run record, then
// what the atlas and roofline provenance recorded. The API key's value is never shown.
func sourceFields(v *view) [][2]string {
	var src schema.Source
	if v.in.Campaign != nil && v.in.Campaign.Source != nil {
		src = *v.in.Campaign.Source
	}
	md := map[string]string{}
	if r := v.in.Run; r != nil && r.Source != nil {
		md["engine"], md["engine_version"], md["commit"] = r.Source.Engine, r.Source.EngineVersion, r.Source.Commit
		md["delivery"], md["patch"], md["url"] = r.Source.Delivery, r.Source.Patch, r.Source.URL
	}
	var engines, versions, deliveries, models []string
	for _, r := range v.all {
		engines, versions = append(engines, r.Engine), append(versions, r.EngineVersion)
		deliveries, models = append(deliveries, r.Delivery), append(models, r.Model)
	}
	var commit, url string
	for _, s := range v.in.Roofline {
		engines, versions = append(engines, s.Provenance.Engine), append(versions, s.Provenance.EngineVersion)
		deliveries = append(deliveries, s.Provenance.Delivery)
		commit = first(commit, s.Provenance.Commit)
		url = first(url, s.Provenance.SourceURL)
	}
	pick := func(vals ...string) string { return first(vals...) }
	fields := [][2]string{
		{"Engine", pick(src.Engine, md["engine"], strings.Join(distinct(engines), ", "))},
		{"Version", pick(src.EngineVersion, md["engine_version"], md["version"], strings.Join(distinct(versions), ", "))},
		{"Commit", pick(src.Commit, md["commit"], commit)},
		{"Delivery", pick(src.Delivery, md["delivery"], strings.Join(distinct(deliveries), ", "))},
		{"Patch", pick(src.Patch, md["patch"], md["infr_patch"])},
		{"Source URL", safeURL(pick(src.URL, md["url"], md["source_url"], md["github_url"], url))},
	}
	if c := v.in.Campaign; c != nil {
		for _, name := range slices.Sorted(maps.Keys(c.Endpoints)) {
			e := c.Endpoints[name]
			fields = append(fields, [2]string{"Endpoint " + name, safeURL(e.URL)})
			models = append(models, e.Model)
			if e.APIKeyEnv != "" {
				fields = append(fields, [2]string{"API key (" + name + ")", "read from $" + e.APIKeyEnv + " at run time; the value is never recorded"})
			}
		}
	}
	fields = append(fields, [2]string{"Model", strings.Join(distinct(models), ", ")})
	for i := range fields {
		if fields[i][1] == "" {
			fields[i][1] = "not recorded"
		}
	}
	if del := fields[3][1]; del != "not recorded" {
		fields = append(fields, [2]string{"Evidence scope", "These numbers are evidence for delivery " + del + " only, never for another delivery tier."})
	}
	return fields
}

func first(vals ...string) string {
	for _, s := range vals {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

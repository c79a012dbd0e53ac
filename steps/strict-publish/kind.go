// Package strictpublish is the strict-publish step kind: it reads a finished campaign (atlas,
// TPM summary, roofline sweeps, champion), evaluates the strict gates — expr rules over a flat
// campaign environment (Facts) — and either refuses the campaign (an *engine.Refusal, so the
// run exits 4) or replaces its rows in the lake (steps/lake) and writes publish.json.
//
// Default gates (DESIGN.md), overridable by id in publish.gates:
//
//	dcgm-grounded   dcgm_grounded — every plot-ready point byte-grounded (else sol_rigor ≤ L2)
//	roofline-page   kind == "latency" or plot_ready_points == 0 or roofline_present
//	steady-window   steady_window_undercount_cells == 0 or "steady_window_undercount" in acknowledged
//
// Strict by default (publish.strict); not strict (`perfdag publish --no-strict`, or
// publish.strict: false) publishes anyway and records every failed gate, with its message,
// in campaign_v1.gaps beside the campaign's sol_rigor.
package strictpublish

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/lake"
)

// Name is the kind's name in `kind:`.
const Name = "strict-publish"

// Kind is the strict-publish step kind.
var Kind = engine.Kind{
	Name:    Name,
	Scope:   engine.ScopeCampaign,
	Version: "1",
	Doc:     "refuse weak evidence (strict gates) or publish the campaign's atlas, TPM, cost and roofline rows to the lake",
	Result:  Result{},
	Inputs:  inputs,
	Check:   check,
	Run:     run,
	// Strict publishing acts on a pass: a fail gate standing blocks it (a not-strict publish
	// runs and records the verdicts as gaps).
	ActsOnPass:    func(t *engine.Task) bool { return StrictOf(t.Campaign, nil) },
	ReadsVerdicts: true,
}

// fingerprintInputs is what a strict-publish node reads of the campaign file. The lake URL is
// redacted: a password never enters a fingerprint.
type fingerprintInputs struct {
	Campaign    string         `json:"campaign"`
	Kind        string         `json:"kind"`
	Cells       []string       `json:"cells"`
	Source      *schema.Source `json:"source"`
	Lake        string         `json:"lake"`
	Strict      bool           `json:"strict"`
	Gates       []schema.Gate  `json:"gates"`
	Acknowledge []string       `json:"acknowledge"`
}

func inputs(t *engine.Task) any {
	c := t.Campaign
	in := fingerprintInputs{Campaign: c.Campaign, Kind: kindOf(c), Source: c.Source,
		Lake: lake.Redact(LakeURL(c, "")), Strict: StrictOf(c, nil), Gates: Gates(c)}
	for _, cell := range c.Cells {
		in.Cells = append(in.Cells, cell.ID)
	}
	if c.Publish != nil {
		in.Acknowledge = c.Publish.Acknowledge
	}
	return in
}

func run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	var ups []any
	for _, u := range t.Upstream {
		ups = append(ups, u.Result)
	}
	out, err := Publish(ctx, Request{Dir: t.Dir, Files: t.Files, Evidence: campaigndir.Collect(ups), Verdicts: t.Verdicts,
		BaseDir: t.BaseDir, Campaign: t.Campaign, Step: t.Node, Log: t.Log, Progress: t.Progress})
	if err != nil {
		if out != nil {
			return engine.Result{Value: &out.Result}, err
		}
		return engine.Result{}, err
	}
	r := &out.Result
	summary := fmt.Sprintf("published %s to %s (sol_rigor %s", plural.N(r.RowsPublished, "row"), r.Lake, r.SolRigor)
	if !r.Strict {
		summary += ", not strict"
	}
	if len(r.Gaps) > 0 {
		summary += ", " + plural.N(len(r.Gaps), "gap")
	}
	return engine.Result{Value: r, Outputs: []string{campaigndir.Receipt()}, Summary: summary + ")"}, nil
}

// quoted finds the string literals of a rule: words a rule may look for in acknowledged.
var quoted = regexp.MustCompile(`"([^"\\]*)"|'([^'\\]*)'`)

// knownFlags are the atlas flags publish.acknowledge may name.
var knownFlags = []string{schema.FlagSteadyWindowUndercount, schema.FlagReasoningParserSuspect, schema.FlagUsageMismatch}

// check validates the publish: block at `perfdag validate` time, each error at its key.
func check(c *schema.Campaign, step *schema.PipelineStep, _ any) []error {
	var errs []error
	if c.Publish == nil {
		return nil
	}
	p := c.Publish
	if p.Lake != "" {
		if _, err := lake.ParseURL(p.Lake, ""); err != nil {
			errs = append(errs, &engine.FieldError{Path: "publish.lake", Err: err,
				Hint: "sqlite://lake.db (a file beside the campaign file) or postgres://user@host:5432/db with the password in PGPASSWORD"})
		}
	}
	env := Env(c, step.ID, sampleFacts())
	words := slices.Clone(knownFlags)
	seen := map[string]int{}
	for i, g := range p.Gates {
		path := fmt.Sprintf("publish.gates[%d]", i)
		switch {
		case g.ID == "":
			errs = append(errs, &engine.FieldError{Path: path, Err: fmt.Errorf("strict gate %d has no id", i+1),
				Hint: "id: a name such as min-points; the id of a default gate (dcgm-grounded, roofline-page, steady-window) overrides it"})
		case seen[g.ID] > 0:
			errs = append(errs, &engine.FieldError{Path: path + ".id", Err: fmt.Errorf("strict gate id %q is used twice", g.ID),
				Hint: fmt.Sprintf("publish.gates[%d] already uses it", seen[g.ID]-1)})
		}
		seen[g.ID] = i + 1
		if g.On != "" && g.On != Name && g.On != step.ID {
			errs = append(errs, &engine.FieldError{Path: path + ".on", Err: fmt.Errorf("strict gates read the campaign, not step %q", g.On),
				Hint: "drop on: (or write on: strict-publish); to gate another step, put the gate under the top-level gates:"})
		}
		if g.Rule == "" {
			if g.ID != "" && !isDefault(g.ID) {
				errs = append(errs, &engine.FieldError{Path: path, Err: fmt.Errorf("strict gate %s has no rule", g.ID),
					Hint: "rule: an expr over the campaign facts, e.g. failed_cells == 0"})
			}
			continue
		}
		if _, err := gate.Compile(g.Rule, env, false); err != nil {
			msg, line, col, hint := gate.Explain(err, env)
			if line > 0 {
				msg += fmt.Sprintf(" (line %d, column %d of the rule)", line, col)
			}
			errs = append(errs, &engine.FieldError{Path: path + ".rule", Err: fmt.Errorf("rule %q: %s", g.Rule, msg), Hint: hint})
		}
		for _, m := range quoted.FindAllStringSubmatch(g.Rule, -1) {
			words = append(words, m[1]+m[2])
		}
	}
	for i, a := range p.Acknowledge {
		if !slices.Contains(words, a) {
			hint := diag.DidYouMean(a, words)
			if hint == "" {
				hint = "flags that can be acknowledged: " + strings.Join(knownFlags, ", ")
			}
			errs = append(errs, &engine.FieldError{Path: fmt.Sprintf("publish.acknowledge[%d]", i),
				Err: fmt.Errorf("%q is not an atlas flag nor a word a strict gate looks for", a), Hint: hint})
		}
	}
	return errs
}

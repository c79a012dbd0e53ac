package strictpublish

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"time"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/analysis/history"
	"github.com/perfdag/perfdag/steps/lake"
)

// Request is one publish of a campaign directory, from the step kind or `perfdag publish`.
type Request struct {
	Dir      string               // campaign directory
	Files    campaigndir.Reader   // reads the campaign's recorded outputs
	Evidence campaigndir.Evidence // what the campaign's steps name: atlas, TPM, sweeps, champion
	Verdicts []schema.GateVerdict // the quality-gate verdicts standing on the campaign's steps
	BaseDir  string               // directory of the campaign file: relative sqlite paths resolve here
	Campaign *schema.Campaign     // defaults merged
	Step     string               // node name for verdicts (default strict-publish)
	Lake     string               // lake URL overriding publish.lake ("" = the campaign's, else the default)
	Strict   *bool                // overrides publish.strict (nil = the campaign's, default true)
	Now      func() time.Time     // clock (default time.Now)
	Log      io.Writer            // verdicts and counts; never a secret
	Progress func(line string)
}

// Result is the strict-publish step's result (flat: gates on strict-publish read its fields).
type Result struct {
	Facts
	CampaignID    string   `json:"campaign_id"`
	Lake          string   `json:"lake"` // URL without a password
	Strict        bool     `json:"strict"`
	Published     bool     `json:"published"`
	Refused       bool     `json:"refused"`
	FailedGates   []string `json:"failed_gates"`
	Gaps          []string `json:"gaps"`
	RowsPublished int      `json:"rows_published"`
}

// Outcome is a publish's result, its gate verdicts and (when it published) its receipt.
type Outcome struct {
	Result   Result
	Verdicts []gate.Verdict
	Receipt  *schema.PublishReceipt // nil when refused
}

// CampaignID is the key a campaign's lake rows carry: one run of the campaign, stable when the
// run is published again. It is the directory name when that is the default
// <UTC-timestamp>-<slug>[-N]; otherwise (a directory named by --out) the run's creation time
// from run.json and the slug, so two runs whose directories share a name never replace each
// other's rows.
func CampaignID(dir, slug string) string {
	base := filepath.Base(filepath.Clean(dir))
	if regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-` + regexp.QuoteMeta(slug) + `(-[0-9]+)?$`).MatchString(base) {
		return base
	}
	if info, err := campaigndir.ReadInfo(dir); err == nil && !info.Created.IsZero() {
		return info.Created.UTC().Format("20060102T150405Z") + "-" + slug
	}
	return base
}

// LakeURL is the lake a campaign publishes to: override, else publish.lake, else the default.
func LakeURL(c *schema.Campaign, override string) string {
	switch {
	case override != "":
		return override
	case c.Publish != nil && c.Publish.Lake != "":
		return c.Publish.Lake
	}
	return lake.DefaultURL
}

// StrictOf is whether a publish is strict: override, else publish.strict, else true.
func StrictOf(c *schema.Campaign, override *bool) bool {
	switch {
	case override != nil:
		return *override
	case c.Publish != nil && c.Publish.Strict != nil:
		return *c.Publish.Strict
	}
	return true
}

// Publish collects a finished campaign's evidence, evaluates the strict gates and, unless they
// refuse, replaces the campaign's rows in the lake in one transaction and writes publish.json.
// A refusal returns the outcome and an *engine.Refusal listing the failed gates; nothing is
// written then (an earlier receipt and the lake stay as they were).
func Publish(ctx context.Context, req Request) (*Outcome, error) {
	c := req.Campaign
	step := or(req.Step, Name)
	now := time.Now
	if req.Now != nil {
		now = req.Now
	}
	logw := req.Log
	if logw == nil {
		logw = io.Discard
	}
	progress := req.Progress
	if progress == nil {
		progress = func(string) {}
	}
	start := now()
	loc, err := lake.ParseURL(LakeURL(c, req.Lake), req.BaseDir)
	if err != nil {
		return nil, fmt.Errorf("publish.lake: %w", err)
	}
	ev, err := Collect(ctx, req.Files, req.Evidence, c, req.Verdicts)
	if err != nil {
		return nil, err
	}
	verdicts, err := Verdicts(c, step, ev)
	if err != nil {
		return nil, err
	}
	strict := StrictOf(c, req.Strict)
	d := Decide(verdicts, ev, strict)
	out := &Outcome{Verdicts: verdicts, Result: Result{Facts: ev.Facts, CampaignID: CampaignID(req.Dir, c.Campaign),
		Lake: loc.String(), Strict: strict, Refused: d.Refused, FailedGates: []string{}, Gaps: d.Gaps}}
	for _, v := range d.Failed {
		out.Result.FailedGates = append(out.Result.FailedGates, v.Gate)
	}
	if out.Result.Gaps == nil {
		out.Result.Gaps = []string{}
	}
	for _, v := range verdicts {
		if v.Passed {
			fmt.Fprintf(logw, "strict gate %s: pass\n", v.Gate)
		} else {
			fmt.Fprintf(logw, "strict gate %s: %s: %s\n", v.Gate, v.Severity, v.Message)
		}
	}
	if d.Refused {
		reasons := make([]string, 0, len(d.Failed)+1)
		for _, v := range d.Failed {
			reasons = append(reasons, v.Gate+": "+v.Message)
		}
		reasons = append(reasons, "nothing was published; publish with --no-strict (or publish.strict: false) to publish anyway and record these gaps")
		return out, &engine.Refusal{Reasons: reasons}
	}

	created := ""
	if info, err := campaigndir.ReadInfo(req.Dir); err == nil && !info.Created.IsZero() {
		created = info.Created.UTC().Format(time.RFC3339)
	}
	pub := &lake.Publication{
		CampaignID: out.Result.CampaignID, Campaign: campaignRow(c, ev, created, strict, d.Gaps),
		Champion: ev.Champion, PublishedAt: start.UTC(), TPM: ev.TPM, Cost: ev.Cost, Roofline: ev.Roofline,
		Atlas: func(fn func(*schema.AtlasRow) error) error { return atlas.Scan(ctx, ev.Files, ev.AtlasPath, fn) },
	}
	if pub.History, err = history.RowOf(campaigndir.Finished{Dir: req.Dir, Files: req.Files, Evidence: req.Evidence}); err != nil {
		return nil, err
	}
	l, err := lake.Open(ctx, LakeURL(c, req.Lake), req.BaseDir)
	if err != nil {
		return nil, err
	}
	defer l.Close(context.WithoutCancel(ctx))
	counts, err := l.Publish(ctx, pub, func(table string, rows int) {
		progress(fmt.Sprintf("publishing %s: %s", table, plural.N(rows, "row")))
	})
	if err != nil {
		return nil, err
	}
	out.Result.Published = true
	rec := &schema.PublishReceipt{
		Schema: schema.SchemaPublishReceipt, Campaign: c.Campaign, CampaignID: pub.CampaignID, Lake: loc.String(),
		Driver: loc.Driver, Strict: strict, PublishedAt: start.UTC().Format(time.RFC3339),
		DCGMGrounded: ev.DCGMGrounded, SolRigor: ev.SolRigor, Gaps: d.Gaps,
	}
	for _, n := range counts {
		rec.Tables = append(rec.Tables, schema.LakeTable{Table: n.Table, Rows: n.Rows, Replaced: n.Replaced})
		out.Result.RowsPublished += n.Rows
		fmt.Fprintf(logw, "lake %s: %s %s (replaced %d)\n", loc, n.Table, plural.N(n.Rows, "row"), n.Replaced)
	}
	for _, v := range verdicts {
		rec.Gates = append(rec.Gates, schema.PublishGate{ID: v.Gate, Severity: v.Severity, Rule: v.Rule, Passed: v.Passed, Message: v.Message})
	}
	rec.Seconds = now().Sub(start).Seconds()
	if _, err := campaigndir.WriteJSON(req.Dir, campaigndir.Receipt(), rec); err != nil {
		return nil, fmt.Errorf("the lake holds the campaign, but the receipt failed: %w", err)
	}
	out.Receipt = rec
	return out, nil
}

// Republish publishes a scheduled run again once its verdict is written, when the run's own
// pipeline published it (its directory holds a receipt): that publish came before the
// scheduler judged the run, so the lake lacked its history_v1 row. It goes to the campaign's
// lake with the strictness the receipt records; published is false when there was no receipt.
func Republish(ctx context.Context, fin campaigndir.Finished) (out *Outcome, published bool, err error) {
	var rec schema.PublishReceipt
	found, err := campaigndir.ReadJSON(fin.Dir, campaigndir.Receipt(), &rec)
	if err != nil || !found {
		return nil, false, err
	}
	strict := rec.Strict
	out, err = Publish(ctx, Request{Dir: fin.Dir, Files: fin.Files, Evidence: fin.Evidence, Verdicts: fin.Verdicts,
		BaseDir: fin.BaseDir, Campaign: fin.Spec, Strict: &strict})
	if err != nil {
		return out, false, fmt.Errorf("publish the judged run to %s again: %w", rec.Lake, err)
	}
	return out, true, nil
}

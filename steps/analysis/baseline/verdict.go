package baseline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/perfdag/perfdag/engine/schedule"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Verdicts of a scheduled run beyond GREEN and RED.
const (
	VerdictFailed      = "FAILED"       // the run failed (a step failed or was refused)
	VerdictError       = "ERROR"        // the run succeeded but could not be diffed
	VerdictInterrupted = "INTERRUPTED"  // stopped (scheduler stopping, or replaced)
	VerdictNoBaseline  = "NO_BASELINE"  // the named baseline is not registered yet
	VerdictNotCompared = "NOT_COMPARED" // the schedule names no baseline
)

// HistoryFile is the scheduler's history, in its state directory (not a campaign's).
const HistoryFile = "history.jsonl"

// Alarming says whether a verdict should notify (on_red) and fail a --once run.
func Alarming(verdict string) bool {
	return verdict == Red || verdict == VerdictFailed || verdict == VerdictError
}

// Judge turns a finished scheduled run into its verdict: a succeeded run, opened as a finished
// campaign by open, is diffed against the latest entry of the baseline name in registry, with
// tolerance overrides.
func Judge(ctx context.Context, r schedule.Run, registry, name string, tol Tolerances, open func(dir string) (campaigndir.Finished, error)) *schema.Verdict {
	v := &schema.Verdict{
		Schema: schema.SchemaVerdict, Campaign: r.Campaign, File: r.File,
		Slot: r.Slot.Format(time.RFC3339), Trigger: r.Trigger,
		Started: r.Started.UTC().Format(time.RFC3339), Ended: r.Ended.UTC().Format(time.RFC3339),
		Outcome: r.Outcome, Error: r.Error,
	}
	switch {
	case r.Outcome == schedule.Interrupted:
		v.Verdict, v.Error = VerdictInterrupted, r.Reason
		return v
	case r.Outcome != schedule.Succeeded:
		v.Verdict = VerdictFailed
		return v
	case name == "":
		v.Verdict = VerdictNotCompared
		return v
	}
	e, err := Resolve(registry, name)
	var nf *NotFoundError
	switch {
	case errors.As(err, &nf):
		v.Verdict, v.Error = VerdictNoBaseline, err.Error()
		return v
	case err != nil:
		v.Verdict, v.Error = VerdictError, err.Error()
		return v
	}
	cur, err := open(r.Dir)
	if err != nil {
		v.Verdict, v.Error = VerdictError, err.Error()
		return v
	}
	d, err := DiffDir(ctx, e, cur, "", tol)
	if err != nil {
		v.Verdict, v.Error = VerdictError, err.Error()
		return v
	}
	v.Verdict, v.Diff = d.Verdict, d
	return v
}

// WriteVerdict writes the run's verdict into the campaign directory, atomically, and returns
// its path.
func WriteVerdict(campaignDir string, v *schema.Verdict) (string, error) {
	rel, err := campaigndir.WriteJSON(campaignDir, campaigndir.Verdict(), v)
	return campaigndir.Abs(campaignDir, rel), err
}

// HistoryLine is one line of the scheduler's history.jsonl: a scheduled run and its verdict.
type HistoryLine struct {
	Time     string `json:"time"`
	Campaign string `json:"campaign"`
	Slot     string `json:"slot"`
	Trigger  string `json:"trigger"`
	Outcome  string `json:"outcome"`
	Verdict  string `json:"verdict"`
	Dir      string `json:"dir,omitempty"`
	Baseline string `json:"baseline,omitempty"` // registry entry diffed against
	Red      int    `json:"red_rows,omitempty"`
	Noise    int    `json:"within_noise_rows,omitempty"` // beyond the tolerance, within the change's interval
	Error    string `json:"error,omitempty"`
	OnRed    string `json:"on_red,omitempty"`
	Drift    int    `json:"drift_changes,omitempty"` // change points that made it RED (the drift rule)
}

// AppendHistory appends one line to <stateDir>/history.jsonl in a single write and fsyncs it,
// so a crash leaves whole lines only. Callers serialize concurrent appends.
func AppendHistory(stateDir, dir string, now time.Time, v *schema.Verdict) error {
	line := HistoryLine{Time: now.UTC().Format(time.RFC3339), Campaign: v.Campaign, Slot: v.Slot,
		Trigger: v.Trigger, Outcome: v.Outcome, Verdict: v.Verdict, Dir: dir, Error: v.Error, OnRed: v.OnRed, Drift: len(v.Drift)}
	if v.Diff != nil {
		line.Baseline, line.Red, line.Noise = v.Diff.Baseline, v.Diff.Red, v.Diff.WithinNoise
	}
	b, err := json.Marshal(line)
	if err != nil {
		return fmt.Errorf("encode history line: %w", err)
	}
	path := filepath.Join(stateDir, HistoryFile)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("append %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return f.Close()
}

// DefaultOnRedTimeout bounds an on_red command that sets no timeout, so a stuck notifier
// cannot hold the campaign's next run forever.
const DefaultOnRedTimeout = 5 * time.Minute

// RunSpec runs a command spec as the exec step kind runs a node (exec.RunSpec): the caller
// wires it in, so analysis imports no step kind.
type RunSpec func(ctx context.Context, spec schema.ExecSpec, c *schema.Campaign, node, baseDir, dir string) error

// RunOnRed runs the schedule's on_red command through run (argv, env, dir relative to the
// campaign file, timeout; its log under <dir>/logs/on-red.log) with PERFDAG_VERDICT,
// PERFDAG_CAMPAIGN_DIR and PERFDAG_VERDICT_FILE added to its environment.
func RunOnRed(ctx context.Context, run RunSpec, spec schema.ExecSpec, c *schema.Campaign, baseDir, dir string, v *schema.Verdict) error {
	if len(spec.Command) == 0 {
		return errors.New("schedule.on_red has no command")
	}
	if run == nil {
		return errors.New("on_red: no command runner is wired in (HookOptions.Exec)")
	}
	spec.Env = maps.Clone(spec.Env)
	if spec.Env == nil {
		spec.Env = map[string]string{}
	}
	spec.Env["PERFDAG_VERDICT"] = v.Verdict
	spec.Env["PERFDAG_CAMPAIGN_DIR"] = dir
	spec.Env["PERFDAG_VERDICT_FILE"] = campaigndir.Abs(dir, campaigndir.Verdict())
	if spec.Timeout.Duration <= 0 {
		spec.Timeout.Duration = DefaultOnRedTimeout
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("on_red: %w", err)
	}
	if err := run(ctx, spec, c, "on-red", baseDir, dir); err != nil {
		return fmt.Errorf("on_red: %w", err)
	}
	return nil
}

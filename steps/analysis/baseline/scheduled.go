package baseline

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/schedule"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Scheduled is a campaign file with a schedule: block, ready for the scheduler: its job, the
// campaign each run runs, and the tolerance overrides its verdicts are judged with.
type Scheduled struct {
	Job     schedule.Job
	Spec    *schema.Campaign
	BaseDir string // the campaign file's directory: on_red's dir is relative to it
	Tol     Tolerances
	Drift   float64 // the drift rule's limit in % (schedule.tolerances.drift); 0: off
}

// NewScheduled makes the scheduled campaign of the compiled campaign file path (nil, nil when
// it has no schedule: block). Tolerance keys are checked here, the engine not knowing the
// baseline's metric names: an unknown metric or a negative tolerance is a diag.List entry at
// its key, placed by position ("schedule.tolerances.KEY" → line, column). Every endpoint URL
// is exclusive (campaigns sharing one never run at once) except sim:// ones: each run starts
// its own simulator.
func NewScheduled(path, baseDir string, spec *schema.Campaign, position func(key string) (line, col int)) (*Scheduled, error) {
	sc := spec.Schedule
	if sc == nil {
		return nil, nil
	}
	tol, drift := Tolerances{}, 0.0
	for k, v := range sc.Tolerances {
		if k == DriftKey {
			drift = v
			continue
		}
		tol[k] = v
	}
	if d, ok := sc.Tolerances[DriftKey]; ok && (d <= 0 || !finite(d)) {
		line, col := position("schedule.tolerances." + DriftKey)
		var l diag.List
		l.Add(path, line, col, "", "schedule.tolerances.drift: the drift rule's limit %v must be a positive percentage (a change point regressing a metric by more than it turns a run RED)", d)
		return nil, l
	}
	if err := tol.Check("schedule.tolerances"); err != nil {
		var l diag.List
		for k := range tol {
			if one := (Tolerances{k: tol[k]}).Check("schedule.tolerances"); one != nil {
				line, col := position("schedule.tolerances." + k)
				l.Add(path, line, col, "", "%s", one.Error())
			}
		}
		l.Sort()
		return nil, l
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("campaign file %s: %w", path, err)
	}
	var exclusive []string
	for _, ep := range spec.Endpoints {
		if !strings.HasPrefix(ep.URL, "sim://") {
			exclusive = append(exclusive, ep.URL)
		}
	}
	return &Scheduled{
		Job:     schedule.Job{Name: spec.Campaign, File: abs, Schedule: *sc, Exclusive: exclusive},
		Spec:    spec,
		BaseDir: baseDir,
		Tol:     tol,
		Drift:   drift,
	}, nil
}

// HookOptions say where a scheduled run is judged and recorded, and who hears of it.
type HookOptions struct {
	Registry string // the baseline registry folder
	StateDir string // the scheduler's state: history.jsonl; on_red's dir for a run with no campaign directory
	// Open opens a succeeded run's campaign directory as a finished campaign.
	Open func(dir string) (campaigndir.Finished, error)
	// Warn hears of a verdict file, history line or on_red that failed; the verdict stands.
	Warn func(campaign string, err error)
	// Report hears of each verdict once recorded, one at a time, in history order; dir is the
	// run's campaign directory ("" when it has none).
	Report func(v *schema.Verdict, dir string)
	// Exec runs on_red's command (exec.RunSpec, the exec step kind's way).
	Exec RunSpec
	// Publish, when set, is called with a judged run's campaign directory once its verdict is
	// final: a run its pipeline published goes to the lake again, now with its verdict.
	Publish func(ctx context.Context, dir string) error
	// Rerender, when set, is called with a judged run's campaign directory once its verdict is
	// final, before Publish: the run's report is drawn again, now with its trend page.
	Rerender func(ctx context.Context, dir string) error
}

// Hook is the schedule.Hook of scheduled campaigns: it judges every finished run against its
// baseline, writes verdict.json into the run's campaign directory, runs on_red when the
// verdict is alarming, appends a history line, and keeps every verdict.
type Hook struct {
	o     HookOptions
	camps map[string]*Scheduled
	mu    sync.Mutex // serializes history appends, reports and all
	all   []*schema.Verdict
}

// NewHook judges the runs of camps, by campaign name.
func NewHook(camps []*Scheduled, o HookOptions) *Hook {
	h := &Hook{o: o, camps: map[string]*Scheduled{}}
	for _, c := range camps {
		h.camps[c.Job.Name] = c
	}
	return h
}

// AfterRun judges, records and reports one finished run.
func (h *Hook) AfterRun(ctx context.Context, r schedule.Run) {
	c := h.camps[r.Campaign]
	v := Judge(ctx, r, h.o.Registry, c.Job.Schedule.Baseline, c.Tol, h.o.Open)
	dir := r.Dir
	if dir != "" {
		if _, err := WriteVerdict(dir, v); err != nil {
			h.warn(r.Campaign, err)
		}
	}
	if c.Drift > 0 && dir != "" && (v.Verdict == Green || v.Verdict == Red) {
		h.drift(ctx, v, dir, c.Drift)
	}
	if Alarming(v.Verdict) && c.Job.Schedule.OnRed != nil {
		where := dir
		if where == "" {
			where = h.o.StateDir
		}
		v.OnRed = "ran ok"
		if err := RunOnRed(ctx, h.o.Exec, *c.Job.Schedule.OnRed, c.Spec, c.BaseDir, where, v); err != nil {
			v.OnRed = err.Error()
			h.warn(r.Campaign, err)
		}
		if dir != "" {
			_, _ = WriteVerdict(dir, v) // now with the on_red outcome
		}
	}
	if dir != "" && h.o.Rerender != nil && r.Outcome == schedule.Succeeded {
		if err := h.o.Rerender(ctx, dir); err != nil {
			h.warn(r.Campaign, fmt.Errorf("re-render the judged run's report: %w", err))
		}
	}
	if dir != "" && h.o.Publish != nil {
		if err := h.o.Publish(ctx, dir); err != nil {
			h.warn(r.Campaign, err)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.all = append(h.all, v)
	if err := AppendHistory(h.o.StateDir, dir, time.Now(), v); err != nil {
		h.warn(r.Campaign, err)
	}
	if h.o.Report != nil {
		h.o.Report(v, dir)
	}
}

// drift applies the drift rule to a judged run: its campaign's change points that regress
// beyond limit % and that this run belongs to turn it RED (verdict.json rewritten). The
// history is read under the hook's lock, the appends being serialized by it.
func (h *Hook) drift(ctx context.Context, v *schema.Verdict, dir string, limit float64) {
	h.mu.Lock()
	found, err := Drift(ctx, h.o.StateDir, dir, v, h.o.Open, limit)
	h.mu.Unlock()
	if err != nil {
		h.warn(v.Campaign, fmt.Errorf("drift rule: %w", err))
		return
	}
	if len(found) == 0 {
		return
	}
	v.Drift, v.Verdict = found, Red
	if _, err := WriteVerdict(dir, v); err != nil {
		h.warn(v.Campaign, err)
	}
}

func (h *Hook) warn(campaign string, err error) {
	if h.o.Warn != nil {
		h.o.Warn(campaign, err)
	}
}

// Verdicts are the verdicts of the runs judged so far, in history order.
func (h *Hook) Verdicts() []*schema.Verdict {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*schema.Verdict{}, h.all...)
}

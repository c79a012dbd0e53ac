// Package enginetest provides fake step kinds and campaign builders for the engine's own
// tests, so engine packages are tested without any inference-domain step.
package enginetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/schema"
)

// RunResult is the typed result of the fake run-shape kind.
type RunResult struct {
	NumPrompts   int     `json:"num_prompts"`
	Concurrency  int     `json:"concurrency"`
	TTFOCoverage float64 `json:"ttfo_coverage"`
	Reasoning    bool    `json:"reasoning"`
}

// Params of the fake kinds.
type Params struct {
	Fail  bool   `yaml:"fail,omitempty" json:"fail,omitempty"`
	Label string `yaml:"label,omitempty" json:"label,omitempty"`
}

// Recorder counts Run calls per node, so tests can prove what ran.
type Recorder struct {
	mu    sync.Mutex
	Calls map[string]int
	Order []string
	Hook  func(ctx context.Context, t *engine.Task) error // optional, called inside Run
	Files bool                                            // each node writes one output file
}

// KeepResult is an error a Hook returns to make the node fail while keeping its result as
// evidence (a point whose every request failed).
type KeepResult struct{ Err error }

func (k KeepResult) Error() string { return k.Err.Error() }

// OutputOf is the output file a node writes when Recorder.Files is set.
func OutputOf(node string) string {
	return "out/" + strings.NewReplacer("[", "_", "]", "_", "/", "_", ":", "_").Replace(node) + ".txt"
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{Calls: map[string]int{}} }

func (r *Recorder) note(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Calls[id]++
	r.Order = append(r.Order, id)
}

// Count returns how often a node ran.
func (r *Recorder) Count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Calls[id]
}

func (r *Recorder) run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	r.note(t.Node)
	res := &RunResult{Concurrency: t.Load.InFlight(), NumPrompts: 3 * t.Load.InFlight(), TTFOCoverage: 1}
	out := engine.Result{Value: res, Summary: "ok " + t.Node}
	if r.Files {
		rel := OutputOf(t.Node)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(t.Dir, rel)), 0o755); err != nil {
			return engine.Result{}, err
		}
		if err := os.WriteFile(filepath.Join(t.Dir, rel), []byte(t.Node), 0o644); err != nil {
			return engine.Result{}, err
		}
		out.Outputs = []string{rel}
	}
	if r.Hook != nil {
		if err := r.Hook(ctx, t); err != nil {
			var keep KeepResult
			if errors.As(err, &keep) {
				return out, err
			}
			return engine.Result{}, err
		}
	}
	if p, ok := t.Params.(*Params); ok && p.Fail {
		return engine.Result{}, fmt.Errorf("%s failed as asked", t.Node)
	}
	return out, nil
}

// Registry returns fake kinds named like the real ones, recording into rec.
func Registry(t testing.TB, rec *Recorder) *engine.Registry {
	t.Helper()
	params := func() any { return &Params{} }
	k := func(name string, scope engine.Scope, holds bool, result any) engine.Kind {
		return engine.Kind{Name: name, Scope: scope, Version: "1", HoldsEndpoint: holds, Params: params, Result: result, Run: rec.run}
	}
	r, err := engine.NewRegistry(
		k("prewarm", engine.ScopeCell, true, nil),
		k("burn-in", engine.ScopeCell, true, nil),
		precedes(k("settle", engine.ScopePoint, true, nil)),
		k("scrape-spec", engine.ScopePoint, true, nil),
		k("run-shape", engine.ScopePoint, true, RunResult{}),
		k("dcgm-correlate", engine.ScopeCell, false, nil),
		tolerant(k("aggregate", engine.ScopeCampaign, false, nil)),
		reader(k("render", engine.ScopeCampaign, false, nil), false),
		reader(k("publish", engine.ScopeCampaign, false, nil), true),
		engine.Kind{Name: "step", Scope: engine.ScopeCampaign, AnyScope: true, Version: "1", Params: params, Run: rec.run},
	)
	if err != nil {
		t.Fatal(err)
	}
	r.Default = func(c *schema.Campaign) []schema.PipelineStep {
		return []schema.PipelineStep{
			{ID: "prewarm", Kind: "prewarm"},
			{ID: "burn-in", Kind: "burn-in", Needs: []string{"prewarm"}},
			{ID: "settle", Kind: "settle", Needs: []string{"burn-in"}},
			{ID: "scrape-spec", Kind: "scrape-spec", Brackets: "run-shape"},
			{ID: "run-shape", Kind: "run-shape", Needs: []string{"settle"}},
			{ID: "dcgm-correlate", Kind: "dcgm-correlate", Needs: []string{"run-shape"}},
			{ID: "aggregate", Kind: "aggregate", Needs: []string{"run-shape", "dcgm-correlate", "scrape-spec"}},
			{ID: "render", Kind: "render", Needs: []string{"aggregate"}},
			{ID: "publish", Kind: "publish", Needs: []string{"render"}},
		}
	}
	return r
}

// FanoutRegistry is Registry plus a fan-out kind, sweep: a cell with a stop_when rule
// compiles no point nodes, and its sweep node expands at run time into the cell's listed
// concurrencies, one per round, in order (the rule itself is never evaluated). Its default
// pipeline is point steps (scrape-spec brackets, run-shape), sweep, then aggregate reading
// every probe.
func FanoutRegistry(t testing.TB, rec *Recorder) *engine.Registry {
	t.Helper()
	sweep := engine.Kind{Name: "sweep", Scope: engine.ScopeCell, Version: "1", HoldsEndpoint: true, Params: func() any { return &Params{} },
		Run: rec.run, Fanout: &engine.FanoutSpec{
			Start: func(t *engine.Task) (engine.Fanout, error) { return listFanout(t.Cell.Loads()), nil },
			Bound: func(cell *schema.Cell) int { return len(cell.Loads()) },
		}}
	base := Registry(t, rec)
	var kinds []engine.Kind
	for _, name := range base.Names() {
		k, _ := base.Lookup(name)
		kinds = append(kinds, k)
	}
	r, err := engine.NewRegistry(append(kinds, sweep)...)
	if err != nil {
		t.Fatal(err)
	}
	r.Expands = func(cell *schema.Cell) bool { return cell.StopWhen != "" }
	r.Default = func(c *schema.Campaign) []schema.PipelineStep {
		return []schema.PipelineStep{
			{ID: "scrape-spec", Kind: "scrape-spec", Brackets: "run-shape"},
			{ID: "run-shape", Kind: "run-shape"},
			{ID: "sweep", Kind: "sweep"},
			{ID: "aggregate", Kind: "aggregate", Needs: []string{"run-shape", "sweep", "scrape-spec"}},
		}
	}
	return r
}

// listFanout asks for a list's points one round at a time.
type listFanout []schema.Load

func (l listFanout) Next(probes []engine.Probe, _ []schema.Load) ([]schema.Load, error) {
	if len(probes) >= len(l) {
		return nil, nil
	}
	return []schema.Load{l[len(probes)]}, nil
}

// reader reads verdicts (render, publish); acting ones are blocked by a fail verdict.
func reader(k engine.Kind, acting bool) engine.Kind {
	k.ReadsVerdicts, k.Tolerant = true, true
	if acting {
		k.Tolerant = false
		k.ActsOnPass = func(*engine.Task) bool { return true }
	}
	return k
}

func precedes(k engine.Kind) engine.Kind {
	k.Precedes = true
	return k
}

func tolerant(k engine.Kind) engine.Kind {
	k.Tolerant = true
	return k
}

// Campaign builds a campaign YAML with cells × concurrencies on one sim:// endpoint.
func Campaign(cells, concs int, extra string) string {
	var b strings.Builder
	b.WriteString("version: 1\ncampaign: synthetic\nendpoints:\n  main: {url: \"sim://\", model: m}\ncells:\n")
	for i := range cells {
		fmt.Fprintf(&b, "  - id: cell-%03d\n    workload: {shape: aa-1k}\n    concurrencies: [", i)
		for j := range concs {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%d", 1<<j)
		}
		b.WriteString("]\n")
	}
	b.WriteString(extra)
	return b.String()
}

// Load loads campaign source with a registry, failing the test on problems.
func Load(t testing.TB, src string, reg *engine.Registry) *load.Campaign {
	t.Helper()
	c, err := load.Bytes("campaign.yaml", t.TempDir(), []byte(src), reg, load.Options{Lookup: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return c
}

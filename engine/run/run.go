// Package run walks a compiled plan: a bounded worker pool over ready nodes, nodes that hold
// an endpoint strictly one at a time per endpoint, checkpoints reused when their fingerprint
// matches, gate verdicts recorded on every run (reused nodes too), and cancellation that
// records what was cut short. Inspect reads a campaign directory's state back for the verbs
// that must never show stale results.
package run

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Options tune a run.
type Options struct {
	Parallel int      // worker slots for node work (default 4)
	Only     []string // globs: run only these nodes and what they need
	Force    []string // globs: re-run these nodes even when reusable
	RunID    string   // default: a UTC timestamp
	Registry *engine.Registry
	Observe  func(events.Event) // live progress (the CLI's terminal line); may be nil
	Log      io.Writer          // nodes' logs; default io.Discard
	// Slice, a cell id, runs as that cell's slice alongside other cells' slices (the caller
	// holds the directory shared and the cell's slice lock): checkpoints go to the cell's
	// slice journal, events are appended under a file lock, and only nodes of the cell may
	// run — anything else it needs must have been checkpointed by its own task first.
	Slice string
}

// Runner runs one plan in one campaign directory.
type Runner struct {
	plan  *plan.Plan
	dir   string
	opts  Options
	store *checkpoint.Store
	mu    sync.Mutex
	cells map[cellKey]json.RawMessage // canonical cell encodings, shared by a cell's nodes
	anc   map[*plan.Node][]*plan.Node // data ancestors, for verdict readers and pass-acting kinds
	// legacy names, per node id, the id its record was written under before points were keyed
	// by load (migrate), so a reuse says where its result came from.
	legacy map[string]string
}

// New prepares a runner; dir is the campaign directory.
func New(p *plan.Plan, dir string, opts Options) *Runner {
	if opts.Parallel <= 0 {
		opts.Parallel = 4
	}
	if opts.RunID == "" {
		opts.RunID = time.Now().UTC().Format("20060102T150405.000Z") // ms: two runs into one directory within a second stay apart
		if opts.Slice != "" {
			opts.RunID += "-" + opts.Slice // slices start together
		}
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	return &Runner{plan: p, dir: dir, opts: opts, cells: map[cellKey]json.RawMessage{}, anc: map[*plan.Node][]*plan.Node{}}
}

// DryRun returns what a run would do for every node, in plan order, writing nothing.
func (r *Runner) DryRun() ([]*Decision, error) {
	records, err := checkpoint.ReadOnly(r.dir).LoadAll()
	if err != nil {
		return nil, err
	}
	dec, err := r.decide(records)
	if err != nil {
		return nil, err
	}
	out := make([]*Decision, 0, len(r.plan.Nodes))
	for _, n := range r.plan.Nodes {
		d := dec[n.ID].Decision
		out = append(out, &d)
	}
	return out, nil
}

// Node outcomes in a Summary.
const (
	OutRan         = "ran"
	OutReused      = "reused"
	OutFailed      = "failed"
	OutGateFailed  = "gate_failed" // ran or reused, and a fail-severity gate did not pass on its result
	OutBlocked     = "blocked"     // a data dependency failed, or it acts on a pass and a fail gate stands
	OutSkipped     = "skipped"     // `when:` false, or a bracket's second half whose point did not run
	OutIgnored     = "ignored"     // outside --only
	OutInterrupted = "interrupted"
	OutPending     = "pending" // never started: the run was interrupted first
)

// NodeResult is one node's outcome.
type NodeResult struct {
	Node     string         `json:"node"`
	Kind     string         `json:"kind"`
	Outcome  string         `json:"outcome"`
	Reason   string         `json:"reason,omitempty"`
	Seconds  float64        `json:"seconds,omitempty"`
	Summary  string         `json:"summary,omitempty"`
	Verdicts []gate.Verdict `json:"gates,omitempty"`
}

// Summary is what a run did.
type Summary struct {
	Run         string         `json:"run"`
	Dir         string         `json:"dir"`
	Counts      map[string]int `json:"counts"`
	Nodes       []NodeResult   `json:"nodes"`
	Interrupted bool           `json:"interrupted"`
	Seconds     float64        `json:"seconds"`
}

// Failed reports whether a step failed.
func (s *Summary) Failed() bool { return s.Counts[OutFailed] > 0 }

// Refused reports whether a fail-severity gate did not pass (or a step refused).
func (s *Summary) Refused() bool { return s.Counts[OutGateFailed] > 0 }

type walk struct {
	r        *Runner
	ctx      context.Context
	log      *events.Log
	records  map[string]*checkpoint.Record
	dec      map[string]*decision
	mu       sync.Mutex
	outcome  map[string]*NodeResult
	values   map[string]any            // results of finished nodes, for their dependents
	verdicts map[string][]gate.Verdict // this run's verdicts of finished nodes
	outputs  map[string]string         // output path → digest, of every node that ran or was reused in this run
	slots    chan struct{}
	locks    map[string]*sync.Mutex
	done     chan *plan.Node
	children map[string][]*plan.Node
	dyn      map[string]*decision         // decisions of point groups fan-out nodes added in this walk
	fanUps   map[string][]engine.Upstream // a fan-out node's groups' results, for it and its readers
	fanLoads map[string][]schema.Load     // the points a fan-out node expanded into, in order
	env      any                          // the registry's run-wide resources (started simulators)
	cleanup  func()                       // releases them when the walk ends
}

// Run walks the plan. It returns a summary even when steps fail; the error is for the run
// itself (an unreadable checkpoint, an unwritable directory).
func (r *Runner) Run(ctx context.Context) (*Summary, error) {
	start := time.Now()
	openStore, openLog := checkpoint.Open, events.Open
	if r.opts.Slice != "" {
		openStore = func(dir string) (*checkpoint.Store, error) { return checkpoint.OpenSlice(dir, r.opts.Slice) }
		openLog = events.OpenShared
	}
	store, err := openStore(r.dir)
	if err != nil {
		return nil, err
	}
	r.store = store
	defer store.Close()
	records, err := store.LoadAll()
	if err != nil {
		return nil, err
	}
	dec, err := r.decide(records)
	if err != nil {
		return nil, err
	}
	if err := r.checkSlice(dec); err != nil {
		return nil, err
	}
	log, err := openLog(campaigndir.Events(r.dir))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	w := &walk{r: r, ctx: ctx, log: log, records: records, dec: dec,
		outcome: map[string]*NodeResult{}, values: map[string]any{}, verdicts: map[string][]gate.Verdict{},
		outputs: map[string]string{},
		slots:   make(chan struct{}, r.opts.Parallel), locks: map[string]*sync.Mutex{},
		done: make(chan *plan.Node, len(r.plan.Nodes)), children: map[string][]*plan.Node{},
		dyn: map[string]*decision{}, fanUps: map[string][]engine.Upstream{}, fanLoads: map[string][]schema.Load{}}
	w.emit(events.Event{Type: events.RunStart, Total: len(r.plan.Nodes), Message: plural.N(len(r.plan.Nodes), "node")})
	if err := w.setup(); err != nil {
		return nil, err
	}
	w.loop()
	w.teardown()
	sum := w.summary(time.Since(start))
	w.emit(events.Event{Type: events.RunEnd, Seconds: sum.Seconds, Counts: sum.Counts,
		Status: map[bool]string{true: "interrupted", false: "finished"}[sum.Interrupted]})
	return sum, nil
}

func (w *walk) emit(e events.Event) {
	e.Run = w.r.opts.RunID
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	_ = w.log.Emit(e)
	if w.r.opts.Observe != nil {
		w.r.opts.Observe(e)
	}
}

// loop dispatches ready nodes until every node has an outcome.
func (w *walk) loop() {
	remaining := map[string]int{}
	for _, n := range w.r.plan.Nodes {
		if n.Parent != nil {
			continue // a point group runs when its fan-out node asks for it
		}
		remaining[n.ID] = len(n.Deps)
		for _, d := range n.Deps {
			w.children[d.Node.ID] = append(w.children[d.Node.ID], n)
		}
	}
	inflight := 0
	for _, n := range w.r.plan.Nodes {
		if n.Parent == nil && remaining[n.ID] == 0 {
			inflight++
			w.dispatch(n)
		}
	}
	for inflight > 0 {
		n := <-w.done
		inflight--
		for _, c := range w.children[n.ID] {
			if remaining[c.ID]--; remaining[c.ID] == 0 {
				inflight++
				w.dispatch(c)
			}
		}
	}
}

func (w *walk) finish(n *plan.Node, res *NodeResult) {
	w.mu.Lock()
	w.outcome[n.ID] = res
	w.mu.Unlock()
	if n.Parent == nil {
		w.done <- n // a group's node reports to its fan-out node, not the loop
	}
}

func (w *walk) result(id string) *NodeResult {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.outcome[id]
}

func (w *walk) verdictsOf(id string) []gate.Verdict {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.verdicts[id]
}

// digest looks a recorded output up for Task.Files.
func (w *walk) digest(rel string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d, ok := w.outputs[rel]
	return d, ok
}

func (w *walk) summary(d time.Duration) *Summary {
	s := &Summary{Run: w.r.opts.RunID, Dir: w.r.dir, Counts: map[string]int{}, Seconds: d.Seconds()}
	for _, n := range w.r.plan.Snapshot() {
		res := w.outcome[n.ID]
		if res == nil && n.Parent != nil {
			res = w.unprobed(n)
		}
		if res == nil {
			res = &NodeResult{Node: n.ID, Kind: n.Step.Kind.Name, Outcome: OutPending}
		}
		s.Counts[res.Outcome]++
		s.Nodes = append(s.Nodes, *res)
	}
	s.Interrupted = w.ctx.Err() != nil
	return s
}

// checkSlice refuses a cell slice that would run a node outside its cell: the node belongs to
// another task (its dependency, not yet done or failed), and writing it from here would put
// one node in two journals.
func (r *Runner) checkSlice(dec map[string]*decision) error {
	if r.opts.Slice == "" {
		return nil
	}
	for _, n := range r.plan.Nodes {
		if d := dec[n.ID]; d.Action == ActRun && (n.Cell == nil || n.Cell.ID != r.opts.Slice) {
			return fmt.Errorf("slice of cell %s would run %s (%s): the task that owns it has not succeeded; run it first", r.opts.Slice, n.ID, strings.Join(d.Reasons, "; "))
		}
	}
	return nil
}

package run

import (
	"fmt"
	"strings"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/fingerprint"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Node states as a campaign directory holds them (NodeState.State).
const (
	StateSucceeded   = checkpoint.Succeeded
	StateFailed      = checkpoint.Failed
	StateInterrupted = checkpoint.Interrupted
	StateRunning     = checkpoint.Running // a run is going, or one crashed mid-node
	StateBlocked     = checkpoint.Blocked
	StateSkipped     = checkpoint.Skipped // `when:` is false, or a bracket half whose point did not run
	StateNeverRan    = "never-ran"
)

// NodeState is one node of the frozen campaign as its directory holds it.
type NodeState struct {
	Node     string             `json:"node"`
	Kind     string             `json:"kind"`
	State    string             `json:"state"`
	Stale    []string           `json:"stale,omitempty"` // why a recorded success no longer matches the campaign
	Record   *checkpoint.Record `json:"-"`
	Verdicts []gate.Verdict     `json:"gates,omitempty"`
	// Legacy is the id the node's record was written under before points were keyed by load
	// ("" when it is the node's own): an older perfdag's directory, read under today's ids.
	Legacy string `json:"legacy,omitempty"`
}

// State is what a campaign directory holds against its frozen campaign file: every node's
// latest record, whether that record still matches the file, and the outputs readers may
// trust. Status, report, publish and baseline read a campaign only through it.
type State struct {
	Dir   string
	Nodes []NodeState
	Files campaigndir.Reader // outputs of succeeded nodes, checked against their digests
	index map[string]int
	r     *Runner
}

// Inspect reads the directory's journal against the plan, writing nothing. A succeeded node
// is stale when its fingerprint — computed from the frozen file, its upstream nodes' recorded
// digests and the verdicts it reads — differs from the one it recorded, when its verdicts are
// not what the current gates say of its result, or when one of its outputs is gone.
func (r *Runner) Inspect() (*State, error) {
	records, err := checkpoint.ReadOnly(r.dir).LoadAll()
	if err != nil {
		return nil, err
	}
	if err := r.replayFanouts(records); err != nil {
		return nil, err
	}
	r.migrate(records)
	st := &State{Dir: r.dir, index: map[string]int{}, r: r}
	outputs := map[string]string{}
	recorded := func(id string) []gate.Verdict {
		if rec := records[id]; rec != nil && rec.Status == checkpoint.Succeeded {
			return rec.Gates
		}
		return nil
	}
	for _, n := range r.plan.Nodes {
		ns := NodeState{Node: n.ID, Kind: n.Step.Kind.Name, State: StateNeverRan, Legacy: r.legacy[n.ID]}
		rec := records[n.ID]
		switch {
		case n.Skip != "":
			ns.State = StateSkipped
		case rec != nil:
			ns.State, ns.Record, ns.Verdicts = rec.Status, rec, rec.Gates
		}
		if ns.State == StateSucceeded && n.Skip == "" {
			ns.Stale = r.staleness(n, rec, records, recorded)
		}
		if rec != nil && n.Skip == "" && (rec.Status == checkpoint.Succeeded || rec.Status == checkpoint.Failed) {
			for rel, sum := range rec.Outputs { // a failed step's kept evidence is readable too
				outputs[rel] = sum
			}
		}
		st.index[n.ID] = len(st.Nodes)
		st.Nodes = append(st.Nodes, ns)
	}
	st.Files = campaigndir.Reader{Dir: r.dir, Digest: campaigndir.Digests(outputs)}
	return st, nil
}

// staleness lists why a succeeded record no longer matches the frozen campaign.
func (r *Runner) staleness(n *plan.Node, rec *checkpoint.Record, records map[string]*checkpoint.Record, recorded func(string) []gate.Verdict) []string {
	var why []string
	if missing := missingOutput(r.dir, rec); missing != "" {
		why = append(why, "output "+missing+" is missing")
	}
	ups := map[string]string{}
	for _, dep := range n.Deps {
		if !dep.Data {
			continue
		}
		ups[dep.Node.ID] = ""
		if ur := records[dep.Node.ID]; ur != nil && dep.Node.Skip == "" { // a failed step's kept evidence counts too
			ups[dep.Node.ID] = ur.Digest
		}
	}
	doc, err := r.doc(n, ups, r.ancestorVerdicts(n, recorded))
	if err != nil {
		return append(why, err.Error())
	}
	if doc.Sum() != rec.Fingerprint {
		why = append(why, fingerprint.Explain(rec.FingerprintDoc(), doc, 3)...)
	}
	if r.hasGates(n) {
		val, err := decodeResult(n.Step.Kind, rec.Result)
		if err != nil {
			return append(why, "stored result unreadable: "+err.Error())
		}
		if now := r.evalGates(n, val); !sameVerdicts(now, rec.Gates) {
			why = append(why, "its gate verdicts were recorded under other gate definitions")
		}
	}
	return why
}

// Node returns a node's state.
func (s *State) Node(id string) (NodeState, bool) {
	i, ok := s.index[id]
	if !ok {
		return NodeState{}, false
	}
	return s.Nodes[i], true
}

// Stale lists the nodes whose recorded success no longer matches the frozen campaign.
func (s *State) Stale() []NodeState {
	var out []NodeState
	for _, n := range s.Nodes {
		if len(n.Stale) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// Result decodes a succeeded node's stored result into its kind's type.
func (s *State) Result(id string) (any, error) {
	n, ok := s.Node(id)
	if !ok || n.Record == nil || n.State != StateSucceeded {
		return nil, fmt.Errorf("node %s has no successful result in %s", id, s.Dir)
	}
	pn, _ := s.r.plan.Node(id)
	return decodeResult(pn.Step.Kind, n.Record.Result)
}

// Verdicts are every verdict the latest run recorded, in plan order.
func (s *State) Verdicts() []gate.Verdict {
	var out []gate.Verdict
	for _, n := range s.Nodes {
		if n.State == StateSucceeded {
			out = append(out, n.Verdicts...)
		}
	}
	return out
}

// Check refuses a directory holding stale results, naming them and what to do.
func (s *State) Check() error {
	stale := s.Stale()
	if len(stale) == 0 {
		return nil
	}
	return &StaleError{Dir: s.Dir, Nodes: stale}
}

// StaleError says a directory holds results its frozen campaign no longer produces.
type StaleError struct {
	Dir   string
	Nodes []NodeState
}

func (e *StaleError) Error() string {
	var parts []string
	for i, n := range e.Nodes {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Nodes)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", n.Node, strings.Join(limit(n.Stale, 2), "; ")))
	}
	return fmt.Sprintf("%s holds results older than its campaign file: %s; bring them up to date with 'perfdag resume %s'",
		e.Dir, strings.Join(parts, ", "), e.Dir)
}

// Code is the exit code of a stale directory: the step results are not usable.
func (e *StaleError) Code() int { return 1 }

package run

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/fingerprint"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/schema"
)

// task builds what a node's Run receives (without upstream results, which the walk adds).
func (r *Runner) task(n *plan.Node) *engine.Task {
	spec := r.plan.Campaign.Spec
	t := &engine.Task{
		Node: n.ID, Step: n.Step.ID, Phase: n.Phase, Campaign: spec, Cell: n.Cell,
		Load: n.Load, Params: n.Step.Params, Dir: r.dir, BaseDir: r.plan.Campaign.BaseDir,
	}
	key := n.Endpoint
	if key == "" && n.Cell != nil {
		key = n.Cell.Endpoint
	}
	if ep, ok := spec.Endpoints[key]; ok {
		t.Endpoint, t.EndpointKey = &ep, key
	}
	return t
}

// campaignInputs is what a campaign-scope node reads by default: the campaign's identity and
// endpoints. Kinds that read more of the file (cells, tpm, cost, report, ...) say so in their
// Inputs, so an edit to one cell does not re-run a deploy step that never read it.
type campaignInputs struct {
	Campaign  string                     `json:"campaign"`
	Kind      string                     `json:"kind"`
	Endpoints map[string]schema.Endpoint `json:"endpoints"`
}

// scopedInputs is what a cell- or point-scope node reads by default: its cell without its
// lists of points (adding a point must not re-run the others) as the point sees it
// (schema.Cell.PointCell: a rate point's cell carries its rate), its endpoint, the point's
// in-flight count, and the settle discipline. A closed-loop point and a point of the older
// open-loop spelling encode as they did before points were keyed by load, so their
// fingerprints hold.
type scopedInputs struct {
	Cell        json.RawMessage  `json:"cell"`
	Endpoint    *schema.Endpoint `json:"endpoint"`
	Concurrency int              `json:"concurrency,omitempty"`
	Settle      *schema.Settle   `json:"settle"`
}

// cellKey names one canonical cell encoding: a cell's, or a rate point's (its rate in it).
type cellKey struct {
	cell *schema.Cell
	rate float64
}

func (r *Runner) defaultInputs(t *engine.Task) (any, error) {
	c := t.Campaign
	if t.Cell == nil {
		return campaignInputs{Campaign: c.Campaign, Kind: c.Kind, Endpoints: c.Endpoints}, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := cellKey{t.Cell, t.Load.Rate}
	cellJSON, ok := r.cells[key]
	if !ok { // every node of a cell (of a rate) shares this encoding
		cell := t.Cell.PointCell(t.Load)
		r.opts.Registry.ClearFanoutFields(&cell) // what a fan-out decides with is not what a node depends on
		var err error
		if cellJSON, err = fingerprint.Canonical(cell); err != nil {
			return nil, err
		}
		r.cells[key] = cellJSON
	}
	return scopedInputs{Cell: cellJSON, Endpoint: t.Endpoint, Concurrency: t.Load.InFlight(), Settle: c.Settle}, nil
}

// doc builds a node's fingerprint document from its data dependencies' digests and, for
// verdict readers, the verdicts it reads.
func (r *Runner) doc(n *plan.Node, upstream map[string]string, verdicts []gate.Verdict) (fingerprint.Doc, error) {
	k := n.Step.Kind
	t := r.task(n)
	var inputs any
	if k.Inputs != nil {
		inputs = k.Inputs(t)
	} else {
		var err error
		if inputs, err = r.defaultInputs(t); err != nil {
			return fingerprint.Doc{}, fmt.Errorf("fingerprint %s: %w", n.ID, err)
		}
	}
	params, err := fingerprint.Canonical(n.Step.Params)
	if err != nil {
		return fingerprint.Doc{}, fmt.Errorf("fingerprint %s: %w", n.ID, err)
	}
	in, err := fingerprint.Canonical(inputs)
	if err != nil {
		return fingerprint.Doc{}, fmt.Errorf("fingerprint %s: %w", n.ID, err)
	}
	gates, err := r.gatesDoc(n, verdicts)
	if err != nil {
		return fingerprint.Doc{}, fmt.Errorf("fingerprint %s: %w", n.ID, err)
	}
	return fingerprint.Doc{Kind: k.Name, Version: k.Version, Node: n.ID, Params: params, Inputs: in, Upstream: upstream, Gates: gates}, nil
}

// decodeResult turns a stored result back into the kind's result type, so downstream steps
// and gates see the same types after a resume as in a fresh run.
func decodeResult(k engine.Kind, raw json.RawMessage) (any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if k.Result == nil {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			var v any
			if err2 := json.Unmarshal(raw, &v); err2 != nil {
				return nil, err
			}
			return map[string]any{"value": v}, nil
		}
		return m, nil
	}
	v := reflect.New(reflect.TypeOf(k.Result))
	if err := json.Unmarshal(raw, v.Interface()); err != nil {
		return nil, err
	}
	return v.Interface(), nil
}

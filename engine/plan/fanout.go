package plan

import (
	"fmt"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/schema"
)

// fanoutPointBase offsets the point index of run-time points so they never meet a listed one.
const fanoutPointBase = 1 << 24

// expands reports whether a cell's points are made at run time: the registry selects it and
// the pipeline has a fan-out step to make them.
func (p *Plan) expands(cell *schema.Cell) bool {
	if !p.Campaign.Rules.ExpandsCell(cell) {
		return false
	}
	for _, st := range p.Campaign.Steps {
		if st.Kind.Fanout != nil {
			return true
		}
	}
	return false
}

// Fanout reports whether n is a fan-out node that will make its cell's points at run time.
func (n *Node) Fanout() bool {
	return n.Step.Kind.Fanout != nil && n.Cell != nil && n.Parent == nil && n.Skip == "" && n.CondErr == ""
}

// Bound is the most point groups a fan-out node can make (0 for other nodes).
func (n *Node) Bound() int {
	if !n.Fanout() || n.Step.Kind.Fanout.Bound == nil {
		return 0
	}
	return n.Step.Kind.Fanout.Bound(n.Cell)
}

// Children returns the point nodes a fan-out node has made so far, in plan order.
func (p *Plan) Children(parent *Node) []*Node {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out []*Node
	for _, n := range p.Nodes {
		if n.Parent == parent {
			out = append(out, n)
		}
	}
	return out
}

// AddPoint adds the point-scope steps of a fan-out node's cell at one load, wired as a
// compiled point would be (the group's own edges, and edges to the cell's and campaign's
// nodes that already exist), and returns them in topological order. A load added before
// returns the same nodes. The group sits right before its parent in p.Nodes, so
// everything deciding in plan order sees a parent after its children.
func (p *Plan) AddPoint(parent *Node, l schema.Load) ([]*Node, error) {
	if !parent.Fanout() {
		return nil, fmt.Errorf("add point to %s: not a fan-out node", parent.ID)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var group, fresh []*Node
	idx := p.fanoutIdx(parent, l)
	for _, sl := range p.slots(parent, l) {
		id := sl.id
		if n, ok := p.byID[id]; ok {
			if n.Parent != parent {
				return nil, fmt.Errorf("add point %s: the node exists outside %s", id, parent.ID)
			}
			group = append(group, n)
			continue
		}
		n := &Node{ID: id, Step: sl.step, Cell: parent.Cell, CellIdx: parent.CellIdx, Load: l,
			PointIdx: idx, Phase: sl.phase, Parent: parent, Legacy: legacyName(sl.step.ID, sl.phase, parent.Cell, l)}
		p.byID[id] = n
		p.byStep.add(sl.step.ID, n)
		group, fresh = append(group, n), append(fresh, n)
	}
	for _, n := range fresh {
		p.wire(n, p.byStep)
	}
	for _, n := range fresh {
		p.condition(n)
	}
	ordered, err := topo(group)
	if err != nil {
		return nil, err
	}
	p.place(parent, fresh)
	return ordered, nil
}

// slot is one node of a point group: its step, phase and id.
type slot struct {
	step  *load.Step
	phase string
	id    string
}

// fanoutIdx is the point index of a run-time group: one per load of the cell, after every
// listed point, in the order the groups were first made.
func (p *Plan) fanoutIdx(parent *Node, l schema.Load) int {
	for _, n := range p.Nodes {
		if n.Parent == parent && n.Load == l {
			return n.PointIdx
		}
	}
	seen := map[schema.Load]bool{}
	for _, n := range p.Nodes {
		if n.Parent == parent {
			seen[n.Load] = true
		}
	}
	return fanoutPointBase + len(seen)
}

// slots are the nodes a fan-out node's point group at l has, in step order.
func (p *Plan) slots(parent *Node, l schema.Load) []slot {
	var out []slot
	for _, st := range p.Campaign.Steps {
		if st.Scope != engine.ScopePoint {
			continue
		}
		for _, phase := range []string{"before", ""} {
			if phase == "before" && st.Brackets == "" {
				continue
			}
			out = append(out, slot{st, phase, Name(st.ID, phase, parent.Cell.ID, l)})
		}
	}
	return out
}

// PointIDs are the ids of the nodes a fan-out node's point group at l has (or would have),
// without adding them: what a run-time probe's nodes are called before it is replayed.
func (p *Plan) PointIDs(parent *Node, l schema.Load) []string {
	if !parent.Fanout() {
		return nil
	}
	var out []string
	for _, sl := range p.slots(parent, l) {
		out = append(out, sl.id)
	}
	return out
}

// topo orders a group by its internal edges (stable in step order).
func topo(group []*Node) ([]*Node, error) {
	in := map[*Node]bool{}
	for _, n := range group {
		in[n] = true
	}
	done := map[*Node]bool{}
	var out []*Node
	for len(out) < len(group) {
		progressed := false
		for _, n := range group {
			if done[n] {
				continue
			}
			ready := true
			for _, d := range n.Deps {
				if in[d.Node] && !done[d.Node] {
					ready = false
				}
			}
			if ready {
				done[n], progressed = true, true
				out = append(out, n)
			}
		}
		if !progressed {
			return nil, fmt.Errorf("point group of %s has a cycle", group[0].ID)
		}
	}
	return out, nil
}

// place inserts new nodes right before their parent and renumbers the order.
func (p *Plan) place(parent *Node, fresh []*Node) {
	if len(fresh) == 0 {
		return
	}
	ordered, _ := topo(fresh)
	out := make([]*Node, 0, len(p.Nodes)+len(ordered))
	for _, n := range p.Nodes {
		if n == parent {
			out = append(out, ordered...)
		}
		out = append(out, n)
	}
	p.Nodes = out
	for i, n := range p.Nodes {
		n.Order = i
	}
	for _, n := range ordered {
		sortDeps(n)
	}
}

// Snapshot is the plan's nodes in order, safe to range over while fan-out nodes add points.
func (p *Plan) Snapshot() []*Node {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return append([]*Node(nil), p.Nodes...)
}

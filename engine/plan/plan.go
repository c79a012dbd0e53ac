// Package plan compiles a loaded campaign into its DAG: `foreach` expands steps into concrete
// nodes (run-shape[aa-10k/c16]), `needs` and `brackets` become edges, nodes that hold one
// endpoint are chained so two benchmarks never overlap, cycles are rejected by name, and the
// nodes come out in one stable topological order.
package plan

import (
	"container/heap"
	"fmt"
	"sync"

	"github.com/dominikbraun/graph"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/schema"
)

// Node is one concrete unit of work.
type Node struct {
	ID       string
	Step     *load.Step
	Cell     *schema.Cell // nil at campaign scope
	CellIdx  int          // -1 at campaign scope
	Load     schema.Load  // the point's load; zero unless point scope
	PointIdx int          // -1 unless point scope
	Phase    string       // "before" for the first half of a bracketing step
	Endpoint string       // endpoint name when the kind holds one
	Deps     []Dep        // in plan order
	Order    int          // position in the topological order
	Skip     string       // non-empty: `when:` is false, with the reason
	CondErr  string       // non-empty: `when:` could not be evaluated; the node fails with this
	// Parent is the fan-out node that made this point node at run time (or replays it from
	// its checkpoint); the walk runs such nodes only when their parent asks for them.
	Parent *Node
	// Legacy is the id the node had before points were keyed by load ("" when the same): a
	// directory written then holds its checkpoint under that id (run.Inspect reads it).
	Legacy string
}

// Dep is an edge into a node: data edges feed results and fingerprints; order edges only
// sequence (per-endpoint serialization, brackets).
type Dep struct {
	Node *Node
	Data bool
}

// Plan is a compiled campaign: its nodes in topological order.
type Plan struct {
	Campaign *load.Campaign
	Nodes    []*Node
	byID     map[string]*Node
	byStep   index
	mu       sync.RWMutex // AddPoint changes Nodes and byID while a walk reads them
}

// Node finds a node by id.
func (p *Plan) Node(id string) (*Node, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	n, ok := p.byID[id]
	return n, ok
}

// Name formats a node id: step, step[cell] or step[cell/KEY] with the point's load key
// (c16, r2.5-cap64); a bracket's first half is step:before[cell/KEY].
func Name(step, phase, cell string, l schema.Load) string {
	return nameKey(step, phase, cell, l.Key())
}

func nameKey(step, phase, cell, key string) string {
	s := step
	if phase != "" {
		s += ":" + phase
	}
	switch {
	case cell == "":
		return s
	case key == "":
		return s + "[" + cell + "]"
	}
	return s + "[" + cell + "/" + key + "]"
}

// legacyName is the id a point node had before points were keyed by load, "" when the same.
func legacyName(step, phase string, cell *schema.Cell, l schema.Load) string {
	if k := cell.LegacyKey(l); k != "" {
		return nameKey(step, phase, cell.ID, k)
	}
	return ""
}

// Compile expands the campaign into its DAG.
func Compile(c *load.Campaign) (*Plan, error) {
	p := &Plan{Campaign: c, byID: map[string]*Node{}, byStep: index{}}
	byStep := p.byStep
	for _, st := range c.Steps {
		for _, n := range p.expand(st) {
			if _, dup := p.byID[n.ID]; dup {
				return nil, fmt.Errorf("compile: node %s is produced twice", n.ID)
			}
			p.byID[n.ID] = n
			p.Nodes = append(p.Nodes, n)
			byStep.add(st.ID, n)
		}
	}
	for _, n := range p.Nodes {
		p.wire(n, byStep)
	}
	if !p.sort() {
		// Only a cyclic graph leaves nodes unsorted; name one cycle from the library's
		// strongly connected components.
		cyc := findCycle(p.Graph())
		if len(cyc) == 0 {
			return nil, fmt.Errorf("compile: the graph has a cycle")
		}
		return nil, &CycleError{Nodes: cyc, Step: p.byID[cyc[0]].Step.Index}
	}
	p.chainEndpoints()
	p.conditions()
	return p, nil
}

// expand turns one step into its nodes (a bracketing point step gives two per point).
func (p *Plan) expand(st *load.Step) []*Node {
	c := p.Campaign.Spec
	var out []*Node
	endpoint := func(cell *schema.Cell) string {
		if !st.Kind.HoldsEndpoint {
			return ""
		}
		if cell != nil {
			return cell.Endpoint
		}
		if st.Endpoint != "" {
			return st.Endpoint
		}
		for name := range c.Endpoints {
			return name // validated: campaign-scope endpoint steps on a one-endpoint campaign
		}
		return ""
	}
	switch st.Scope {
	case engine.ScopeCampaign:
		out = append(out, &Node{ID: Name(st.ID, "", "", schema.Load{}), Step: st, CellIdx: -1, PointIdx: -1, Endpoint: endpoint(nil)})
	case engine.ScopeCell:
		for i := range c.Cells {
			cell := &c.Cells[i]
			out = append(out, &Node{ID: Name(st.ID, "", cell.ID, schema.Load{}), Step: st, Cell: cell, CellIdx: i, PointIdx: -1, Endpoint: endpoint(cell)})
		}
	case engine.ScopePoint:
		for i := range c.Cells {
			cell := &c.Cells[i]
			if p.expands(cell) {
				continue // its points are made at run time by its fan-out node
			}
			for j, l := range cell.Loads() {
				if st.Brackets != "" {
					out = append(out, &Node{ID: Name(st.ID, "before", cell.ID, l), Step: st, Cell: cell, CellIdx: i, Load: l, PointIdx: j, Phase: "before", Endpoint: endpoint(cell),
						Legacy: legacyName(st.ID, "before", cell, l)})
				}
				out = append(out, &Node{ID: Name(st.ID, "", cell.ID, l), Step: st, Cell: cell, CellIdx: i, Load: l, PointIdx: j, Endpoint: endpoint(cell),
					Legacy: legacyName(st.ID, "", cell, l)})
			}
		}
	}
	return out
}

// index finds a step's nodes by cell without scanning them all (cell -1: campaign scope).
type index map[string]map[int][]*Node

func (x index) add(step string, n *Node) {
	if x[step] == nil {
		x[step] = map[int][]*Node{}
	}
	x[step][n.CellIdx] = append(x[step][n.CellIdx], n)
}

// candidates returns the nodes of a step that can match a node of cell cellIdx.
func (x index) candidates(step string, cellIdx int, all bool) []*Node {
	if !all {
		own, shared := x[step][cellIdx], x[step][-1]
		return append(append(make([]*Node, 0, len(own)+len(shared)), own...), shared...)
	}
	var out []*Node
	for _, ns := range x[step] {
		out = append(out, ns...)
	}
	return out
}

// matching returns the nodes of a step that node n depends on, by scope.
func (p *Plan) matching(n *Node, target *load.Step, byStep index) []*Node {
	var out []*Node
	all := n.Step.Scope == engine.ScopeCampaign || target.Scope == engine.ScopeCampaign
	for _, t := range byStep.candidates(target.ID, n.CellIdx, all) {
		if t.Phase != "" {
			continue // the first half of a bracket is internal to its step
		}
		switch {
		case target.Scope == engine.ScopeCampaign, n.Step.Scope == engine.ScopeCampaign:
			out = append(out, t)
		case t.CellIdx != n.CellIdx:
		case target.Scope == engine.ScopeCell:
			out = append(out, t)
		case n.Step.Scope == engine.ScopeCell || t.Load == n.Load:
			out = append(out, t)
		}
	}
	return out
}

func (p *Plan) step(id string) *load.Step {
	for _, s := range p.Campaign.Steps {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// wire adds a node's edges from needs and brackets.
func (p *Plan) wire(n *Node, byStep index) {
	add := func(t *Node, data bool) {
		for i, d := range n.Deps {
			if d.Node == t {
				n.Deps[i].Data = d.Data || data
				return
			}
		}
		n.Deps = append(n.Deps, Dep{Node: t, Data: data})
	}
	if n.Phase == "before" {
		// before the bracketed node, after everything the bracketed node waits for
		b := p.step(n.Step.Brackets)
		for _, need := range b.Needs {
			for _, t := range p.matching(n, p.step(need), byStep) {
				add(t, false)
			}
		}
		for _, need := range n.Step.Needs {
			for _, t := range p.matching(n, p.step(need), byStep) {
				add(t, true)
			}
		}
		return
	}
	for _, need := range n.Step.Needs {
		for _, t := range p.matching(n, p.step(need), byStep) {
			add(t, true)
		}
	}
	if n.Step.Brackets != "" {
		before := p.byID[Name(n.Step.ID, "before", n.Cell.ID, n.Load)]
		add(before, true)
		for _, t := range p.matching(n, p.step(n.Step.Brackets), byStep) {
			add(t, true)
		}
	}
	// a bracketed step waits for the first half of every step bracketing it
	for _, other := range p.Campaign.Steps {
		if other.Brackets == n.Step.ID && n.Cell != nil {
			if before, ok := p.byID[Name(other.ID, "before", n.Cell.ID, n.Load)]; ok {
				add(before, false)
			}
		}
	}
}

// key orders ready nodes: cell by cell, point by point, in pipeline order.
func key(n *Node) [4]int {
	phase := 1
	if n.Phase == "before" {
		phase = 0
	}
	return [4]int{n.CellIdx, n.PointIdx, n.Step.Index, phase}
}

type readyHeap []*Node

func (h readyHeap) Len() int { return len(h) }
func (h readyHeap) Less(i, j int) bool {
	a, b := key(h[i]), key(h[j])
	for k := range a {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return h[i].ID < h[j].ID
}
func (h readyHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *readyHeap) Push(x any)   { *h = append(*h, x.(*Node)) }
func (h *readyHeap) Pop() any {
	old := *h
	n := old[len(old)-1]
	*h = old[:len(old)-1]
	return n
}

// Graph returns the plan as a dominikbraun/graph DAG (built on demand: DOT output, cycle
// naming); order-only edges carry style=dashed.
func (p *Plan) Graph() graph.Graph[string, string] {
	g := graph.New(graph.StringHash, graph.Directed())
	for _, n := range p.Nodes {
		_ = g.AddVertex(n.ID)
	}
	for _, n := range p.Nodes {
		for _, d := range n.Deps {
			_ = g.AddEdge(d.Node.ID, n.ID, edgeStyle(d.Data))
		}
	}
	return g
}

// sort orders nodes topologically, always taking the smallest ready node by key, and reports
// false when a cycle leaves nodes unsorted. The library's StableTopologicalSort rescans every
// vertex per step (quadratic: seconds at 10,000 nodes), so the order is computed here in
// O((V+E) log V) over the same edges.
func (p *Plan) sort() bool {
	indeg := make(map[*Node]int, len(p.Nodes))
	out := make(map[*Node][]*Node, len(p.Nodes))
	for _, n := range p.Nodes {
		indeg[n] += 0
		for _, d := range n.Deps {
			indeg[n]++
			out[d.Node] = append(out[d.Node], n)
		}
	}
	h := &readyHeap{}
	for _, n := range p.Nodes {
		if indeg[n] == 0 {
			*h = append(*h, n)
		}
	}
	heap.Init(h)
	order := make([]*Node, 0, len(p.Nodes))
	for h.Len() > 0 {
		n := heap.Pop(h).(*Node)
		n.Order = len(order)
		order = append(order, n)
		for _, m := range out[n] {
			if indeg[m]--; indeg[m] == 0 {
				heap.Push(h, m)
			}
		}
	}
	if len(order) != len(p.Nodes) {
		return false
	}
	p.Nodes = order
	for _, n := range p.Nodes {
		sortDeps(n)
	}
	return true
}

func sortDeps(n *Node) {
	d := n.Deps
	for i := 1; i < len(d); i++ {
		for j := i; j > 0 && d[j].Node.Order < d[j-1].Node.Order; j-- {
			d[j], d[j-1] = d[j-1], d[j]
		}
	}
}

// chainEndpoints adds an order edge between consecutive endpoint-holding nodes of each
// endpoint, in topological order, so load on one endpoint is strictly sequential. Chaining
// along a topological order can never create a cycle.
func (p *Plan) chainEndpoints() {
	last := map[string]*Node{}
	for _, n := range p.Nodes {
		if n.Endpoint == "" {
			continue
		}
		if prev, ok := last[n.Endpoint]; ok {
			linked := false
			for _, d := range n.Deps {
				linked = linked || d.Node == prev
			}
			if !linked {
				n.Deps = append(n.Deps, Dep{Node: prev})
				sortDeps(n)
			}
		}
		last[n.Endpoint] = n
	}
}

// edgeStyle draws order-only edges dashed in DOT output.
func edgeStyle(data bool) func(*graph.EdgeProperties) {
	if data {
		return graph.EdgeData(true)
	}
	return graph.EdgeAttribute("style", "dashed")
}

// conditions evaluates `when:` for every node of a conditional step. A rule that errors
// (a budget stop, a failed conversion) is not a false one: the node must fail, not be skipped.
func (p *Plan) conditions() {
	for _, n := range p.Nodes {
		p.condition(n)
	}
}

// condition evaluates one node's `when:`; a fan-out node of a cell that measures its
// concurrency list is skipped.
func (p *Plan) condition(n *Node) {
	c := p.Campaign.Spec
	if n.Step.Kind.Fanout != nil && n.Cell != nil && !p.expands(n.Cell) {
		n.Skip = "cell " + n.Cell.ID + " measures its list of points"
		return
	}
	if n.Step.Cond == nil {
		return
	}
	ok, err := gate.Eval(n.Step.Cond, p.Campaign.Rules.RuleEnv(c, n.Cell, n.Load, n.Step.ID))
	switch {
	case err != nil:
		n.CondErr = fmt.Sprintf("when %q could not be evaluated: %v", n.Step.PipelineStep.When, err)
	case !ok:
		n.Skip = fmt.Sprintf("when %q is false", n.Step.PipelineStep.When)
	}
}

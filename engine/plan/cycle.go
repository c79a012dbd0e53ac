package plan

import (
	"slices"
	"strings"

	"github.com/dominikbraun/graph"
)

// CycleError names the nodes of a dependency cycle, in order.
type CycleError struct {
	Nodes []string // a → b → … → a (the first node repeated at the end)
	Step  int      // pipeline index of the first node's step, to position the error
}

func (e *CycleError) Error() string {
	return "the pipeline has a dependency cycle: " + strings.Join(e.Nodes, " → ")
}

// findCycle returns one cycle of g as a closed walk, or nil when g is acyclic. It uses the
// library's strongly connected components (one linear pass) instead of checking every edge.
func findCycle(g graph.Graph[string, string]) []string {
	sccs, err := graph.StronglyConnectedComponents(g)
	if err != nil {
		return nil
	}
	adj, err := g.AdjacencyMap()
	if err != nil {
		return nil
	}
	for _, scc := range sccs {
		if len(scc) == 1 {
			if _, self := adj[scc[0]][scc[0]]; !self {
				continue
			}
			return []string{scc[0], scc[0]}
		}
		slices.Sort(scc)
		return cycleIn(scc, adj)
	}
	return nil
}

// cycleIn walks from the smallest member back to itself inside one component (BFS, so the
// cycle printed is a shortest one through that member).
func cycleIn(scc []string, adj map[string]map[string]graph.Edge[string]) []string {
	in := map[string]bool{}
	for _, v := range scc {
		in[v] = true
	}
	start := scc[0]
	prev := map[string]string{}
	queue := []string{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		next := make([]string, 0, len(adj[v]))
		for w := range adj[v] {
			next = append(next, w)
		}
		slices.Sort(next)
		for _, w := range next {
			if !in[w] {
				continue
			}
			if w == start {
				path := []string{start}
				for u := v; u != start; u = prev[u] {
					path = append(path, u)
				}
				slices.Reverse(path[1:])
				return append(path, start)
			}
			if _, seen := prev[w]; !seen {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return append(scc, start)
}

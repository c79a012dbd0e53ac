package webui

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/perfdag/perfdag/engine/campaign"
)

// A campaign of more than groupAbove nodes lists them by step, each step a collapsed group
// whose rows load when opened (a group of at most inlineUpTo nodes is listed at once): the
// page of a 10,000-node campaign is a few hundred rows, not ten thousand.
const (
	groupAbove = 1000
	inlineUpTo = 100
)

// group is one step's nodes on the campaign page.
type group struct {
	Step   string
	Nodes  []campaign.NodeStatus
	Counts map[string]int
	Inline bool
	Src    string // where a collapsed group's rows load from
	// States is "node\tstate\n" per node: the page's script keeps the step's counts live
	// from it without the rows being in the page.
	States string
}

// stepOf is the pipeline step a node expands from: its id before the cell/point brackets.
func stepOf(node string) string {
	if i := strings.IndexByte(node, '['); i > 0 {
		return node[:i]
	}
	return node
}

// groups splits the nodes by step, in plan order; nil when the campaign is small enough to
// list whole.
func groups(id string, nodes []campaign.NodeStatus) []group {
	if len(nodes) <= groupAbove {
		return nil
	}
	var out []group
	index := map[string]int{}
	for _, n := range nodes {
		step := stepOf(n.Node)
		i, ok := index[step]
		if !ok {
			i = len(out)
			index[step] = i
			out = append(out, group{Step: step, Counts: map[string]int{},
				Src: campaignURL(id) + "nodes?step=" + url.QueryEscape(step)})
		}
		out[i].Nodes = append(out[i].Nodes, n)
		out[i].Counts[n.State]++
	}
	for i := range out {
		var b strings.Builder
		for _, n := range out[i].Nodes {
			b.WriteString(n.Node + "\t" + n.State + "\n")
		}
		out[i].States = b.String()
		out[i].Inline = len(out[i].Nodes) <= inlineUpTo
	}
	return out
}

// nodes answers a collapsed group's rows (?step=), as table rows.
func (s *Server) nodes(w http.ResponseWriter, r *http.Request) {
	e, ok := s.open(w, r)
	if !ok {
		return
	}
	st, err := s.opts.Service.Status(e.Dir)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	step := r.URL.Query().Get("step")
	var rows []campaign.NodeStatus
	for _, n := range st.Nodes {
		if stepOf(n.Node) == step {
			rows = append(rows, n)
		}
	}
	s.render(w, "noderows", rows)
}

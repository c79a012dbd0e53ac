// Package argo exports a compiled campaign as an Argo Workflows manifest: a Workflow (or a
// CronWorkflow when the campaign has a schedule:) whose DAG has one task per slice of the
// plan. A slice is one cell (all of that cell's nodes) or one campaign-scope node; each task
// runs `perfdag run FILE --out DIR --slice --only-list NODES` on a shared campaign directory,
// so a retried task resumes from its checkpoints like a local run. Slices of different cells
// run concurrently (the directory is shared, each cell has its own journal); a campaign-scope
// slice takes the directory whole.
package argo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/perfdag/perfdag/engine/plan"
)

// Options tune the export.
type Options struct {
	Image          string // container image holding perfdag (default perfdag:latest)
	Namespace      string // metadata.namespace; empty leaves it to `argo submit -n`
	PVC            string // ReadWriteMany claim holding campaign directories (default perfdag-campaigns)
	Secret         string // Secret holding API keys, one key per api_key_env (default perfdag-api-keys)
	ServiceAccount string // spec.serviceAccountName; empty: the namespace default
	Retries        int    // retryStrategy.limit per task (default 2; negative: no retries)
	CampaignFile   string // file name of the campaign inside the pod (default campaign.yaml)
	Source         []byte // the campaign file itself, shipped to every task as a raw artifact
	Workflow       bool   // emit a Workflow even when the campaign has a schedule
}

// Mount points inside the task pods.
const (
	CampaignsMount = "/campaigns"
	inputMount     = "/work"
	volumeName     = "campaigns"
)

// Slice is one unit of exported work: the nodes one task runs.
type Slice struct {
	Name  string   // Argo task name (DNS-ish)
	Cell  string   // the cell whose nodes it runs; "" for a campaign-scope node
	Nodes []string // node ids, in plan order
	Deps  []string // slice names this one waits for, sorted
	// Endpoints holds the endpoint names whose load this slice generates.
	Endpoints []string
	// Clients is the cell's clients: (more than 1: its points are split over client pods).
	Clients int
}

// Slices groups the plan into tasks: every node of one cell is one slice, every
// campaign-scope node is its own slice. Edges between slices are the union of the node
// edges (data and order), so any order Argo picks is a topological order of the plan.
func Slices(p *plan.Plan) ([]*Slice, error) {
	var out []*Slice
	byKey := map[string]*Slice{}
	of := map[string]*Slice{}
	used := map[string]bool{}
	for _, n := range p.Nodes {
		key := "node:" + n.ID
		base := n.ID
		if n.Cell != nil {
			key, base = "cell:"+n.Cell.ID, "cell-"+n.Cell.ID
		}
		s := byKey[key]
		if s == nil {
			s = &Slice{Name: uniqueName(dnsName(base), used)}
			if n.Cell != nil {
				s.Cell, s.Clients = n.Cell.ID, n.Cell.Clients
			}
			byKey[key] = s
			out = append(out, s)
		}
		s.Nodes = append(s.Nodes, n.ID)
		if n.Endpoint != "" && !contains(s.Endpoints, n.Endpoint) {
			s.Endpoints = append(s.Endpoints, n.Endpoint)
		}
		of[n.ID] = s
	}
	for _, n := range p.Nodes {
		s := of[n.ID]
		for _, d := range n.Deps {
			if t := of[d.Node.ID]; t != s && !contains(s.Deps, t.Name) {
				s.Deps = append(s.Deps, t.Name)
			}
		}
	}
	for _, s := range out {
		sort.Strings(s.Deps)
		sort.Strings(s.Endpoints)
	}
	if cyc := cycle(out); cyc != "" {
		return nil, fmt.Errorf("export: slicing by cell makes a cycle through %s (a campaign-scope step sits between two steps of one cell); run this campaign locally", cyc)
	}
	return out, nil
}

// cycle returns a slice on a cycle of the slice graph, or "" when it is acyclic (Kahn).
func cycle(ss []*Slice) string {
	indeg := map[string]int{}
	next := map[string][]string{}
	for _, s := range ss {
		indeg[s.Name] += 0
		for _, d := range s.Deps {
			indeg[s.Name]++
			next[d] = append(next[d], s.Name)
		}
	}
	var queue []string
	for _, s := range ss {
		if indeg[s.Name] == 0 {
			queue = append(queue, s.Name)
		}
	}
	seen := 0
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		seen++
		for _, m := range next[q] {
			if indeg[m]--; indeg[m] == 0 {
				queue = append(queue, m)
			}
		}
	}
	if seen == len(ss) {
		return ""
	}
	for _, s := range ss {
		if indeg[s.Name] > 0 {
			return s.Name
		}
	}
	return "?"
}

var notDNS = regexp.MustCompile(`[^a-z0-9]+`)

// dnsName lowers a node or cell id to letters, digits and dashes.
func dnsName(s string) string {
	s = strings.Trim(notDNS.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if s == "" {
		s = "task"
	}
	if len(s) > 60 {
		sum := sha256.Sum256([]byte(s))
		s = strings.TrimRight(s[:50], "-") + "-" + hex.EncodeToString(sum[:])[:8]
	}
	return s
}

func uniqueName(s string, used map[string]bool) string {
	name := s
	for i := 2; used[name]; i++ {
		name = s + "-" + strconv.Itoa(i)
	}
	used[name] = true
	return name
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// EndpointMutex names the Argo mutex of one endpoint: derived from the server's address (host
// and path, never credentials), so two campaigns naming one server differently still share it.
func EndpointMutex(rawURL string) string {
	key := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		key = u.Scheme + "://" + u.Host + u.Path
	}
	sum := sha256.Sum256([]byte(key))
	return "perfdag-endpoint-" + hex.EncodeToString(sum[:])[:16]
}

// Export renders the manifest (YAML) for the plan.
func Export(p *plan.Plan, o Options) ([]byte, error) {
	doc, err := Manifest(p, o)
	if err != nil {
		return nil, err
	}
	b, err := yaml.MarshalWithOptions(doc, yaml.UseLiteralStyleIfMultiline(true))
	if err != nil {
		return nil, fmt.Errorf("export: encode manifest: %w", err)
	}
	var head strings.Builder
	for _, c := range Caveats(p, o) {
		head.WriteString("# caveat: " + c + "\n")
	}
	return append([]byte(head.String()), b...), nil
}

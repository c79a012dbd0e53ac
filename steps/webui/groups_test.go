package webui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/campaign"
)

// A large campaign is listed by step: every node in exactly one group, counts by state, small
// steps inline, large ones collapsed with where their rows load from; a small one is not.
func TestGroups(t *testing.T) {
	var nodes []campaign.NodeStatus
	nodes = append(nodes, campaign.NodeStatus{Node: "aggregate", State: "pending"})
	for i := range 1200 {
		st := "succeeded"
		if i%3 == 0 {
			st = "failed"
		}
		nodes = append(nodes, campaign.NodeStatus{Node: fmt.Sprintf("run-shape[c-%d/c1]", i), State: st},
			campaign.NodeStatus{Node: fmt.Sprintf("scrape-spec:before[c-%d/c1]", i), State: "succeeded"})
	}
	if g := groups("x", nodes[:groupAbove]); g != nil {
		t.Fatalf("%d nodes are grouped", groupAbove)
	}
	gs := groups("x", nodes)
	if len(gs) != 3 || gs[0].Step != "aggregate" || gs[1].Step != "run-shape" || gs[2].Step != "scrape-spec:before" {
		t.Fatalf("groups %v", gs)
	}
	total := 0
	for _, g := range gs {
		total += strings.Count(g.States, "\n")
		if g.Inline != (len(g.Nodes) <= inlineUpTo) {
			t.Errorf("%s inline %v with %d nodes", g.Step, g.Inline, len(g.Nodes))
		}
	}
	if total != len(nodes) {
		t.Errorf("the groups hold %d nodes, want %d", total, len(nodes))
	}
	if c := gs[1].Counts; c["failed"] != 400 || c["succeeded"] != 800 {
		t.Errorf("run-shape counts %v", c)
	}
	if !strings.HasPrefix(gs[1].States, "run-shape[c-0/c1]\tfailed\nrun-shape[c-1/c1]\tsucceeded\n") || gs[1].Src != "/c/x/nodes?step=run-shape" {
		t.Errorf("run-shape: %.60q %s", gs[1].States, gs[1].Src)
	}
}

// A step's rows load as the page renders them: only that step's nodes.
func TestNodesOfAStep(t *testing.T) {
	root := t.TempDir()
	finished(t, root, "tiny-1")
	ts := serve(t, Options{Roots: []string{root}})
	code, body := get(t, ts, "/c/tiny-1/nodes?step=run-shape")
	if code != 200 || strings.Count(body, "<tr data-node=") != 2 || !strings.Contains(body, `data-node="run-shape[aa-1k/c2]"`) || strings.Contains(body, "settle[") {
		t.Fatalf("%d:\n%s", code, body)
	}
}

package plan

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"gonum.org/v1/gonum/graph/formats/dot"
	dotast "gonum.org/v1/gonum/graph/formats/dot/ast"

	"github.com/perfdag/perfdag/engine/enginetest"
)

func compile(t testing.TB, src string) *Plan {
	t.Helper()
	reg := enginetest.Registry(t, enginetest.NewRecorder())
	p, err := Compile(enginetest.Load(t, src, reg))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaultPipelineExpansion(t *testing.T) {
	p := compile(t, enginetest.Campaign(2, 2, ""))
	// per cell: prewarm, burn-in, dcgm; per point: settle, spec before/after, run; campaign: aggregate, render, publish
	if want := 2*3 + 4*4 + 3; len(p.Nodes) != want {
		t.Fatalf("%d nodes, want %d", len(p.Nodes), want)
	}
	ids := make([]string, len(p.Nodes))
	pos := map[string]int{}
	for i, n := range p.Nodes {
		ids[i] = n.ID
		pos[n.ID] = i
	}
	// the endpoint sequence of cell 0 is exactly the settle discipline, point by point
	want := []string{"prewarm[cell-000]", "burn-in[cell-000]", "settle[cell-000/c1]", "scrape-spec:before[cell-000/c1]",
		"run-shape[cell-000/c1]", "scrape-spec[cell-000/c1]", "settle[cell-000/c2]", "scrape-spec:before[cell-000/c2]",
		"run-shape[cell-000/c2]", "scrape-spec[cell-000/c2]", "prewarm[cell-001]"}
	var endpointSeq []string
	for _, n := range p.Nodes {
		if n.Endpoint != "" {
			endpointSeq = append(endpointSeq, n.ID)
		}
	}
	if strings.Join(endpointSeq[:len(want)], " ") != strings.Join(want, " ") {
		t.Errorf("endpoint order:\n got %v\nwant %v", endpointSeq[:len(want)], want)
	}
	// every dependency comes earlier in the order
	for _, n := range p.Nodes {
		for _, d := range n.Deps {
			if pos[d.Node.ID] >= pos[n.ID] {
				t.Errorf("%s before its dependency %s", n.ID, d.Node.ID)
			}
		}
	}
	run, _ := p.Node("run-shape[cell-001/c2]")
	assertDeps(t, run, map[string]bool{"settle[cell-001/c2]": true, "scrape-spec:before[cell-001/c2]": false})
	spec, _ := p.Node("scrape-spec[cell-001/c2]")
	assertDeps(t, spec, map[string]bool{"scrape-spec:before[cell-001/c2]": true, "run-shape[cell-001/c2]": true})
	dcgm, _ := p.Node("dcgm-correlate[cell-000]")
	assertDeps(t, dcgm, map[string]bool{"run-shape[cell-000/c1]": true, "run-shape[cell-000/c2]": true})
	prewarm1, _ := p.Node("prewarm[cell-001]")
	assertDeps(t, prewarm1, map[string]bool{"scrape-spec[cell-000/c2]": false}) // chained after cell 0
}

func assertDeps(t *testing.T, n *Node, want map[string]bool) {
	t.Helper()
	got := map[string]bool{}
	for _, d := range n.Deps {
		got[d.Node.ID] = d.Data
	}
	if len(got) != len(want) {
		t.Errorf("%s deps = %v, want %v", n.ID, got, want)
		return
	}
	for id, data := range want {
		if g, ok := got[id]; !ok || g != data {
			t.Errorf("%s dep %s = (%v, present %v), want data=%v", n.ID, id, g, ok, data)
		}
	}
}

func TestStableOrder(t *testing.T) {
	src := enginetest.Campaign(5, 4, "")
	a, b := compile(t, src), compile(t, src)
	for i := range a.Nodes {
		if a.Nodes[i].ID != b.Nodes[i].ID {
			t.Fatalf("order differs at %d: %s vs %s", i, a.Nodes[i].ID, b.Nodes[i].ID)
		}
	}
}

func TestCycleNamesTheNodes(t *testing.T) {
	src := enginetest.Campaign(1, 1, `pipeline:
  - {id: a, kind: step, needs: [c]}
  - {id: b, kind: step, needs: [a]}
  - {id: c, kind: step, needs: [b]}
`)
	reg := enginetest.Registry(t, enginetest.NewRecorder())
	_, err := Compile(enginetest.Load(t, src, reg))
	var cyc *CycleError
	if !errors.As(err, &cyc) {
		t.Fatalf("err = %v, want a CycleError", err)
	}
	if got := strings.Join(cyc.Nodes, " "); got != "a b c a" {
		t.Errorf("cycle = %q, want a → b → c → a", got)
	}
	if !strings.Contains(err.Error(), "a → b → c → a") {
		t.Errorf("message %q does not name the cycle", err)
	}
}

func TestWhenSkips(t *testing.T) {
	p := compile(t, enginetest.Campaign(1, 1, `pipeline:
  - {id: one, kind: step, when: "len(cells) > 1"}
  - {id: per-point, kind: step, foreach: point, when: "concurrency >= 2"}
`))
	one, _ := p.Node("one")
	pp, _ := p.Node("per-point[cell-000/c1]")
	if one.Skip == "" || pp.Skip == "" {
		t.Fatalf("skips: %q %q", one.Skip, pp.Skip)
	}
}

// A `when:` that errors is not a false one: the node carries the error (and fails), it is not
// skipped.
func TestWhenErrorFailsTheNode(t *testing.T) {
	p := compile(t, enginetest.Campaign(1, 1, `pipeline:
  - {id: hostile, kind: step, when: 'len(repeat("a", 2000000)) > 0'}
  - {id: fine, kind: step, when: "len(cells) > 1"}
`))
	hostile, _ := p.Node("hostile")
	if hostile.Skip != "" || !strings.Contains(hostile.CondErr, "rule_budget_exceeded") {
		t.Fatalf("hostile when: skip %q, error %q; want the budget error and no skip", hostile.Skip, hostile.CondErr)
	}
	if fine, _ := p.Node("fine"); fine.CondErr != "" || fine.Skip == "" {
		t.Fatalf("false when: skip %q, error %q", fine.Skip, fine.CondErr)
	}
}

// A 40-cell × 6-concurrency campaign compiles and its DOT parses as DOT.
func TestFortyCellsDOTParses(t *testing.T) {
	p := compile(t, enginetest.Campaign(40, 6, ""))
	if want := 40*3 + 240*4 + 3; len(p.Nodes) != want {
		t.Fatalf("%d nodes, want %d", len(p.Nodes), want)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf, "dot", nil); err != nil {
		t.Fatal(err)
	}
	ast, err := dot.ParseBytes(buf.Bytes())
	if err != nil {
		t.Fatalf("plan --format dot does not parse: %v", err)
	}
	if len(ast.Graphs) != 1 {
		t.Fatalf("%d graphs", len(ast.Graphs))
	}
	edges, nodes := 0, map[string]bool{}
	for _, st := range ast.Graphs[0].Stmts {
		if e, ok := st.(*dotast.EdgeStmt); ok {
			edges++
			_ = e
		}
	}
	for _, n := range p.Nodes {
		nodes[n.ID] = true
		if !strings.Contains(buf.String(), `"`+n.ID+`"`) {
			t.Fatalf("node %s missing from DOT", n.ID)
		}
	}
	var want int
	for _, n := range p.Nodes {
		want += len(n.Deps)
	}
	if edges != want {
		t.Errorf("DOT has %d edges, plan has %d", edges, want)
	}
	for _, f := range []string{"mermaid", "json", "text"} {
		buf.Reset()
		if err := p.Write(&buf, f, nil); err != nil || buf.Len() == 0 {
			t.Errorf("format %s: %v (%d bytes)", f, err, buf.Len())
		}
	}
}

// TestFormatsAreDeterministic: two compiles of the same campaign write identical bytes in every
// format, and the DOT carries no library noise (weight=0, blank lines).
func TestFormatsAreDeterministic(t *testing.T) {
	src := enginetest.Campaign(6, 4, "")
	for _, f := range Formats {
		var a, b bytes.Buffer
		if err := compile(t, src).Write(&a, f, nil); err != nil {
			t.Fatal(err)
		}
		if err := compile(t, src).Write(&b, f, nil); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("format %s differs between runs:\n%s\n---\n%s", f, a.String(), b.String())
		}
		if f == "dot" && (strings.Contains(a.String(), "weight=0") || strings.Contains(a.String(), "\n\n")) {
			t.Errorf("DOT has library noise:\n%s", a.String())
		}
	}
}

// TestTextHeaderCounts: the text plan's header counts in words that agree with the numbers.
func TestTextHeaderCounts(t *testing.T) {
	for _, tc := range []struct {
		cells int
		want  string
	}{{1, "campaign synthetic: 10 nodes, 1 cell, default pipeline\n"}, {2, "campaign synthetic: 17 nodes, 2 cells, default pipeline\n"}} {
		var b bytes.Buffer
		if err := compile(t, enginetest.Campaign(tc.cells, 1, "")).Write(&b, "text", nil); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := strings.Cut(b.String(), "\n"); got+"\n" != tc.want {
			t.Errorf("%d cells: header %q, want %q", tc.cells, got, tc.want)
		}
	}
}

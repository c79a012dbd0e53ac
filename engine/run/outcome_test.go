package run

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/enginetest"
)

// The outcome read back from a directory is the one its run reported: a refusal is a gate
// failure, a failed step a failure (and wins over a refusal), a node that never ran makes it
// pending; each names the nodes that decided it.
func TestOutcomeMatchesSummary(t *testing.T) {
	src := enginetest.Campaign(2, 1, "")
	for _, c := range []struct {
		name  string
		fail  map[string]error
		only  []string
		want  string
		nodes []string
	}{
		{name: "clean", want: OutRan},
		{name: "refused", fail: map[string]error{"render": &engine.Refusal{Reasons: []string{"gap"}}}, want: OutGateFailed, nodes: []string{"render"}},
		{name: "failed and refused", fail: map[string]error{"render": &engine.Refusal{Reasons: []string{"gap"}}, "dcgm-correlate[cell-001]": errors.New("boom")},
			want: OutFailed, nodes: []string{"dcgm-correlate[cell-001]"}},
		{name: "partial", only: []string{"*[cell-000*"}, want: OutPending},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.rec.Hook = func(ctx context.Context, tk *engine.Task) error { return c.fail[tk.Node] }
			sum := f.run(context.Background(), src, Options{Only: c.only})
			st, err := New(f.plan(src), f.dir, Options{Registry: f.reg}).Inspect()
			if err != nil {
				t.Fatal(err)
			}
			got, nodes := st.Outcome()
			if got != c.want || c.nodes != nil && !slices.Equal(nodes, c.nodes) {
				t.Fatalf("outcome %s %v, want %s %v", got, nodes, c.want, c.nodes)
			}
			ran := map[string]bool{OutRan: !sum.Failed() && !sum.Refused(), OutFailed: sum.Failed(), OutGateFailed: !sum.Failed() && sum.Refused()}
			if c.want != OutPending && !ran[got] {
				t.Errorf("outcome %s, but the run's summary counts %v", got, sum.Counts)
			}
		})
	}
}

// A cell's slice runs its cell's nodes and refuses to run anything outside it.
func TestSliceRunsOnlyItsCell(t *testing.T) {
	f := newFixture(t)
	src := enginetest.Campaign(2, 1, "")
	sum := f.run(context.Background(), src, Options{Only: []string{"*[cell-000*"}, Slice: "cell-000"})
	if sum.Failed() || sum.Counts[OutRan] == 0 {
		t.Fatalf("slice of cell-000: %v", sum.Counts)
	}
	_, err := New(f.plan(src), f.dir, Options{Registry: f.reg, Only: []string{"aggregate"}, Slice: "cell-000"}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "slice of cell cell-000 would run") {
		t.Fatalf("a slice ran nodes of other tasks: %v", err)
	}
}

package run

import (
	"errors"
	"slices"
	"testing"

	"github.com/perfdag/perfdag/engine/enginetest"
)

// Every --only and --force pattern must match a node: one that matches none is reported with
// the option it came from and the closest node ids; patterns that match (exact ids, * and ?
// globs) pass.
func TestCheckSelection(t *testing.T) {
	p := newFixture(t).plan(enginetest.Campaign(2, 2, "")) // cell-000, cell-001 at c1, c2
	for _, c := range []struct {
		name        string
		only, force []string
		want        []Unselected
	}{
		{name: "none"},
		{name: "exact ids and globs", only: []string{"run-shape[cell-000/c1]", "render", "*[cell-001/*]"}, force: []string{"run-shape[cell-00?/c2]"}},
		{name: "a stale cell", only: []string{"run-shape[cell-000/c1]", "run-shape[nosuch/c1]"},
			want: []Unselected{{Option: "--only", Pattern: "run-shape[nosuch/c1]", Nearest: []string{"run-shape[cell-000/c1]", "run-shape[cell-001/c1]", "run-shape[cell-000/c2]"}}}},
		{name: "a misspelt force", force: []string{"agregate"},
			want: []Unselected{{Option: "--force", Pattern: "agregate", Nearest: []string{"aggregate", "render", "publish"}}}},
		{name: "both, and an empty pattern", only: []string{""}, force: []string{"settle[cell-002/*]"},
			want: []Unselected{{Option: "--only", Pattern: ""}, {Option: "--force", Pattern: "settle[cell-002/*]"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckSelection(p, "", Options{Only: c.only, Force: c.force})
			var got []*Unselected
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				for _, e := range j.Unwrap() {
					var u *Unselected
					if !errors.As(e, &u) {
						t.Fatalf("%v is not an *Unselected", e)
					}
					got = append(got, u)
				}
			} else if err != nil {
				t.Fatalf("error %T %v", err, err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("problems %v, want %d", err, len(c.want))
			}
			for i, w := range c.want {
				g := got[i]
				if g.Campaign != "synthetic" || g.Option != w.Option || g.Pattern != w.Pattern {
					t.Errorf("problem %d: %+v, want %+v", i, *g, w)
				}
				if w.Nearest != nil && !slices.Equal(g.Nearest, w.Nearest) {
					t.Errorf("%q: closest %v, want %v", w.Pattern, g.Nearest, w.Nearest)
				}
				if len(g.Nearest) != nearestShown {
					t.Errorf("%q: %d closest ids, want %d", w.Pattern, len(g.Nearest), nearestShown)
				}
			}
		})
	}
}

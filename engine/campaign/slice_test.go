package campaign

import (
	"testing"

	"github.com/perfdag/perfdag/engine/enginetest"
	"github.com/perfdag/perfdag/engine/plan"
)

// A slice shares the directory only when every node it names is of one cell.
func TestSliceCell(t *testing.T) {
	reg := enginetest.Registry(t, enginetest.NewRecorder())
	p, err := plan.Compile(enginetest.Load(t, enginetest.Campaign(2, 2, ""), reg))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		only []string
		cell string
	}{
		{[]string{"prewarm[cell-000]", "run-shape[cell-000/c1]", "run-shape[cell-000/c2]"}, "cell-000"},
		{[]string{"*[cell-001*"}, "cell-001"},
		{[]string{"run-shape[cell-000/c1]", "run-shape[cell-001/c1]"}, ""},
		{[]string{"aggregate"}, ""},
		{[]string{"run-shape[cell-000/c1]", "render"}, ""},
		{[]string{"no-such-node"}, ""},
		{nil, ""},
	} {
		if got := SliceCell(p, c.only); got != c.cell {
			t.Errorf("%v: cell %q, want %q", c.only, got, c.cell)
		}
	}
}

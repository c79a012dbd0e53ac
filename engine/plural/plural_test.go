package plural

import "testing"

func TestN(t *testing.T) {
	for _, tc := range []struct {
		n    int
		one  string
		want string
	}{
		{0, "error", "0 errors"},
		{1, "error", "1 error"},
		{2, "error", "2 errors"},
		{1, "step", "1 step"},
		{3, "failed cell", "3 failed cells"},
		{2, "pass", "2 passes"},
		{2, "match", "2 matches"},
		{2, "entry", "2 entries"},
		{2, "day", "2 days"},
		{1, "entry", "1 entry"},
		{-1, "error", "-1 error"},
	} {
		if got := N(tc.n, tc.one); got != tc.want {
			t.Errorf("N(%d, %q) = %q, want %q", tc.n, tc.one, got, tc.want)
		}
	}
	if got := Of(2, "child", "children"); got != "2 children" {
		t.Errorf("Of = %q", got)
	}
}

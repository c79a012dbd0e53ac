package session

import (
	"testing"

	"github.com/perfdag/perfdag/steps/measure/loadgen"
)

func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		p    loadgen.Progress
		want string
	}{
		{loadgen.Progress{Done: 3, Total: 4}, "3/4 done, 0 errors"},
		{loadgen.Progress{Done: 3, Total: 4, Errors: 1}, "3/4 done, 1 error"},
		{loadgen.Progress{Done: 4, Total: 4, Errors: 2, TTFTP50Ms: 187.3}, "4/4 done, 2 errors, TTFT p50 187 ms"},
		{loadgen.Progress{Done: 3, Total: 8, Cancelled: 1}, "3/8 done, 0 errors, 1 cancelled by the interrupt"},
		{loadgen.Progress{Done: 640, Total: 2000, Adaptive: true}, "640 done (auto, at most 2000), 0 errors"},
	} {
		if got := ProgressLine(tc.p); got != tc.want {
			t.Errorf("ProgressLine(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

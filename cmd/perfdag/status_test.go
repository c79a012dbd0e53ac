package main

import (
	"testing"

	"github.com/perfdag/perfdag/engine/campaign"

	"github.com/perfdag/perfdag/engine/run"
)

// TestStatusExitWords: --check's message counts in agreeing words and names the nodes.
func TestStatusExitWords(t *testing.T) {
	for _, tc := range []struct {
		outcome  string
		deciding []string
		code     int
		want     string
	}{
		{run.OutPending, []string{"render"}, ExitFailed, "1 node never finished: render (continue with 'perfdag resume d')"},
		{run.OutFailed, []string{"a", "b"}, ExitFailed, "2 steps failed: a, b"},
		{run.OutGateFailed, []string{"a", "b", "c", "d"}, ExitRefused, "4 steps did not pass a fail gate: a, b, c, and 1 more"},
	} {
		err := statusExit(&campaign.Status{Dir: "d", Outcome: tc.outcome, Deciding: tc.deciding})
		if err == nil || codeOf(err) != tc.code || err.Error() != tc.want {
			t.Errorf("%s: %v (exit %d), want %q (exit %d)", tc.outcome, err, codeOf(err), tc.want, tc.code)
		}
	}
	if err := statusExit(&campaign.Status{Outcome: run.OutRan}); err != nil {
		t.Errorf("a run that succeeded: %v", err)
	}
}

package run

import (
	"context"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/enginetest"
)

const fanoutCampaign = `version: 1
campaign: fan
endpoints:
  main: {url: "sim://", model: m}
cells:
  - {id: a, workload: {shape: aa-1k}, concurrencies: [1, 2, 4], stop_when: "points > 9"}
`

// A fan-out interrupted after its first group, then resumed: the resume re-uses that group,
// and a reader of the group's output files (aggregate reads each probe's file, as the real
// one reads each point's) reads them in that very run, not in a second resume (issue 27).
func TestResumedFanoutPublishesReusedGroups(t *testing.T) {
	rec := enginetest.NewRecorder()
	rec.Files = true
	f := &fixture{t: t, dir: t.TempDir(), rec: rec, reg: enginetest.FanoutRegistry(t, rec)}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	read := 0
	rec.Hook = func(hctx context.Context, task *engine.Task) error {
		switch {
		case task.Node == "run-shape[a/c2]" && ctx.Err() == nil:
			stop() // the user's Ctrl-C, in the middle of the second probe
			return hctx.Err()
		case task.Node == "aggregate":
			for _, u := range task.Upstream {
				for rel := range u.Outputs {
					if _, err := task.Files.Bytes(rel); err != nil {
						return err
					}
					read++
				}
			}
		}
		return nil
	}
	first := f.run(ctx, fanoutCampaign, Options{})
	if !first.Interrupted || outcomes(first)["run-shape[a/c1]"] != OutRan || outcomes(first)["run-shape[a/c2]"] != OutInterrupted {
		t.Fatalf("first run: %v interrupted %v", outcomes(first), first.Interrupted)
	}
	second := f.run(context.Background(), fanoutCampaign, Options{})
	got := outcomes(second)
	if second.Failed() || second.Interrupted || got["aggregate"] != OutRan {
		var why []string
		for _, n := range second.Nodes {
			if n.Outcome == OutFailed {
				why = append(why, n.Node+": "+n.Reason)
			}
		}
		t.Fatalf("the first resume: %v\n%s", got, strings.Join(why, "\n"))
	}
	for _, id := range []string{"scrape-spec:before[a/c1]", "run-shape[a/c1]", "scrape-spec[a/c1]"} {
		if got[id] != OutReused || rec.Count(id) != 1 {
			t.Errorf("%s: %s, ran %d times; want reused, run once", id, got[id], rec.Count(id))
		}
	}
	// run-shape and the after-scrape of three probes, and the sweep node's own output
	if read != 7 {
		t.Errorf("aggregate read %d recorded outputs, want 7", read)
	}
}

package run

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/enginetest"
	"github.com/perfdag/perfdag/engine/fingerprint"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// BenchmarkNoopResume10k resumes a finished 10,007-node campaign: compile the frozen config,
// read every checkpoint, decide that everything is reused, walk, log. The checkpoints are
// written the way a run writes them (minus the fsync, to keep setup short).
func BenchmarkNoopResume10k(b *testing.B) {
	rec := enginetest.NewRecorder()
	reg := enginetest.Registry(b, rec)
	src := []byte(enginetest.Campaign(435, 5, ""))
	dir := b.TempDir()
	compile := func() *plan.Plan {
		c, err := load.Bytes("campaign.yaml", dir, src, reg, load.Options{})
		if err != nil {
			b.Fatal(err)
		}
		p, err := plan.Compile(c)
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	finished(b, compile(), dir)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := New(compile(), dir, Options{Registry: reg, RunID: "bench"})
		sum, err := r.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if sum.Counts[OutReused] != 10007 {
			b.Fatalf("counts %v", sum.Counts)
		}
	}
	b.StopTimer()
	if len(rec.Calls) != 0 {
		b.Fatalf("a no-op resume ran %d nodes", len(rec.Calls))
	}
}

// finished writes the journal a completed run of p leaves behind.
func finished(b *testing.B, p *plan.Plan, dir string) {
	r := New(p, dir, Options{})
	if err := os.MkdirAll(campaigndir.StateDir(dir), 0o755); err != nil {
		b.Fatal(err)
	}
	digests := map[string]string{}
	var journal []byte
	for _, n := range p.Nodes {
		ups := map[string]string{}
		for _, d := range n.Deps {
			if d.Data {
				ups[d.Node.ID] = digests[d.Node.ID]
			}
		}
		doc, err := r.doc(n, ups, nil)
		if err != nil {
			b.Fatal(err)
		}
		res, _ := fingerprint.Canonical(&enginetest.RunResult{Concurrency: n.Load.InFlight(), NumPrompts: 3 * n.Load.InFlight()})
		digests[n.ID] = fingerprint.Digest(res, nil)
		rec := &checkpoint.Record{Node: n.ID, Step: n.Step.ID, Kind: n.Step.Kind.Name, Status: checkpoint.Succeeded,
			Result: res, Digest: digests[n.ID], StartedAt: time.Now(), EndedAt: time.Now()}
		rec.SetDoc(doc)
		raw, _ := json.Marshal(rec)
		journal = append(append(journal, raw...), '\n')
	}
	if err := os.WriteFile(campaigndir.Journal(dir), journal, 0o644); err != nil {
		b.Fatal(err)
	}
}

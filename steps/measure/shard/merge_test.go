package shard

import (
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// TestMergeShiftsOntoOneClock: each shard's records move by minus its clock offset (every
// instant, durations untouched), come back in index order with the Clients block, and a shard
// short of its part, or holding a request of another's, fails the merge.
func TestMergeShiftsOntoOneClock(t *testing.T) {
	dir := t.TempDir()
	l := schema.Conc(4)
	rec := func(i int, start int64) schema.RequestRecord {
		return schema.RequestRecord{Index: i, Phase: "profiling", StartNs: start, FirstTokenNs: start + 10, EndNs: start + 50, ChunkNs: []int64{start + 10, start + 50}}
	}
	write := func(k int, recs ...schema.RequestRecord) string {
		rel := campaigndir.ShardRecords("a", l, k)
		if _, err := campaigndir.WriteLines(dir, rel, recs); err != nil {
			t.Fatal(err)
		}
		return rel
	}
	specs := []Spec{
		{Part: PartSpec{Index: 0, From: 0, Requests: 2, Concurrency: 2}, Records: write(0, rec(0, 1000), rec(1, 1100))},
		// client 1's clock runs 500 ns ahead of the coordinator's
		{Part: PartSpec{Index: 1, From: 2, Requests: 2, Concurrency: 2}, Records: write(1, rec(3, 1520), rec(2, 1500))},
	}
	out := Outcome{StartNs: 990, Shards: []ShardOutcome{{OffsetNs: 0, RTTNs: 8}, {OffsetNs: 500, RTTNs: 10,
		Done: Done{ClientBound: &schema.ClientBound{CPUPct: 95, Verdict: schema.VerdictClientBound, Why: []string{"cpu 95 %"}}}}}}
	recs, clients, err := Merge(dir, specs, out)
	if err != nil {
		t.Fatal(err)
	}
	wantStart := []int64{1000, 1100, 1000, 1020}
	for i, r := range recs {
		if r.Index != i || r.StartNs != wantStart[i] || r.FirstTokenNs-r.StartNs != 10 || r.EndNs != wantStart[i]+50 || r.ChunkNs[1] != r.EndNs {
			t.Errorf("record %d: %+v, want index %d starting at %d with its durations", i, r, i, wantStart[i])
		}
	}
	if clients.N != 2 || clients.StartNs != 990 || clients.Method != schema.ClockMethodPipePing || len(clients.Shards) != 2 ||
		clients.Shards[1].ClockOffsetNs != 500 || clients.Shards[1].ClockRTTNs != 10 || clients.Shards[1].IndexFrom != 2 || clients.Shards[1].Records != specs[1].Records {
		t.Errorf("clients: %+v", clients)
	}
	if b := Bound(clients); !b.Bound() || b.CPUPct != 95 || len(b.Why) != 1 || b.Why[0] != "client 1: cpu 95 %" {
		t.Errorf("bound: %+v, want client 1's", b)
	}

	short := append([]Spec(nil), specs...)
	short[1].Part.Requests = 3
	if _, _, err := Merge(dir, short, out); err == nil || !strings.Contains(err.Error(), "client 1's records") || !strings.Contains(err.Error(), "2, want its part's 3") {
		t.Errorf("a shard short of its part: %v", err)
	}
	other := append([]Spec(nil), specs...)
	other[1].Part.From = 3
	if _, _, err := Merge(dir, other, out); err == nil || !strings.Contains(err.Error(), "request 2 is outside its part 3…4") {
		t.Errorf("a shard holding another's request: %v", err)
	}
}

// TestTallySumsTheClients: the live line counts every client's latest report once.
func TestTallySumsTheClients(t *testing.T) {
	var got []Progress
	tl := newTally(3, func(p Progress) { got = append(got, p) })
	tl.set(0, Progress{Done: 2})
	tl.set(2, Progress{Done: 5, Errors: 1})
	tl.set(0, Progress{Done: 4})
	want := []Progress{{Done: 2}, {Done: 7, Errors: 1}, {Done: 9, Errors: 1}}
	if len(got) != len(want) {
		t.Fatalf("reports %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("report %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	newTally(2, nil).set(1, Progress{Done: 1}) // no line asked for: nothing to call
}

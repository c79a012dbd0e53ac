package shard

import (
	"fmt"
	"sort"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Merge reads each shard's records, shifts them by their shard's clock offset onto the
// coordinator's clock and returns them in index order, with the point's Clients block. A
// shard short of its part, or holding a request outside it, is an error: the point is never
// computed short of its load.
func Merge(dir string, specs []Spec, out Outcome) ([]schema.RequestRecord, *schema.Clients, error) {
	clients := &schema.Clients{N: len(specs), Method: schema.ClockMethodPipePing, StartNs: out.StartNs}
	var all []schema.RequestRecord
	for k, spec := range specs {
		recs, err := read(dir, spec.Records)
		if err != nil {
			return nil, nil, fmt.Errorf("client %d's records: %w", k, err)
		}
		p, so := spec.Part, out.Shards[k]
		if len(recs) != p.Requests {
			return nil, nil, fmt.Errorf("client %d's records in %s: %d, want its part's %d; %s", k, spec.Records, len(recs), p.Requests, PointFailed)
		}
		for i := range recs {
			if recs[i].Index < p.From || recs[i].Index >= p.From+p.Requests {
				return nil, nil, fmt.Errorf("client %d's records in %s: request %d is outside its part %d…%d", k, spec.Records, recs[i].Index, p.From, p.From+p.Requests-1)
			}
			recs[i].ShiftClock(-so.OffsetNs)
		}
		all = append(all, recs...)
		clients.Shards = append(clients.Shards, schema.Shard{Index: k, Records: spec.Records, IndexFrom: p.From, Requests: p.Requests,
			Concurrency: p.Concurrency, RequestRate: p.Rate, Seed: p.Seed, ClockOffsetNs: so.OffsetNs, ClockRTTNs: so.RTTNs,
			StartLateNs: so.Done.StartLateNs, ClientBound: so.Done.ClientBound})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Index < all[j].Index })
	for i := 1; i < len(all); i++ {
		if all[i].Index == all[i-1].Index {
			return nil, nil, fmt.Errorf("request %d is in two clients' records", all[i].Index)
		}
	}
	return all, clients, nil
}

// MaxLine bounds one record line of a shard's file (a long answer's chunk stamps).
const MaxLine = 64 << 20

// read decodes a shard's records file.
func read(dir, rel string) ([]schema.RequestRecord, error) {
	var out []schema.RequestRecord
	err := campaigndir.ScanLines(dir, rel, MaxLine, func(_ int, r *schema.RequestRecord) error {
		out = append(out, *r)
		return nil
	})
	return out, err
}

// Bound is the point's client verdict from its shards': the most loaded bound shard's (its
// reasons prefixed with the client), else the busiest shard's; nil when no shard measured one.
func Bound(c *schema.Clients) *schema.ClientBound {
	var pick *schema.ClientBound
	pickK := -1
	for k, s := range c.Shards {
		b := s.ClientBound
		if b == nil {
			continue
		}
		if pick == nil || (b.Bound() && !pick.Bound()) || (b.Bound() == pick.Bound() && b.CPUPct > pick.CPUPct) {
			pick, pickK = b, k
		}
	}
	if pick == nil {
		return nil
	}
	out := *pick
	out.Why = nil
	for _, w := range pick.Why {
		out.Why = append(out.Why, fmt.Sprintf("client %d: %s", pickK, w))
	}
	return &out
}

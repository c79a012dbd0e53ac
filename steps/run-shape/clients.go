package runshape

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/measure/endpoint"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/session"
	"github.com/perfdag/perfdag/steps/measure/shard"
)

// sharded is a point's window measured by several client processes.
type sharded struct {
	records   []schema.RequestRecord
	clients   *schema.Clients
	warmed    int
	connectNs []int64
}

// loadSharded measures the point's window over the cell's clients: child processes of this
// binary (or the clients listening at the addresses the run was given), each its part of cfg (shard.Split), all starting at one agreed instant; their
// records merged onto this process's clock. Any child failing fails the point.
func loadSharded(ctx context.Context, t *engine.Task, s *session.Session, w schema.Workload, cfg loadgen.Config) (sharded, error) {
	cell, l, n := t.Cell, t.Load, t.Cell.Clients
	parts, err := shard.Split(cfg, n)
	if err != nil {
		return sharded{}, fmt.Errorf("cells %s clients: %d at %s: %w", cell.ID, n, l.Key(), err)
	}
	// a re-measured point's shards replace the last attempt's, whatever its client count
	if err := os.RemoveAll(campaigndir.Abs(t.Dir, campaigndir.Shards(cell.ID, l))); err != nil {
		return sharded{}, fmt.Errorf("clear the last attempt's shards: %w", err)
	}
	specs := make([]shard.Spec, n)
	for k, p := range parts {
		specs[k] = shard.Spec{Dir: t.Dir, BaseDir: t.BaseDir, Cell: cell.ID, Load: l, EndpointKey: t.EndpointKey, Endpoint: *t.Endpoint,
			BaseURL: s.Endpoint.BaseURL, Workload: w, Salt: session.Salt(t, session.PhaseProfiling, l), Phase: session.PhaseProfiling, Of: n,
			Part: shard.PartSpec{Index: k, From: p.From, Requests: p.Requests, Concurrency: p.Concurrency, Rate: p.Rate,
				Arrival: cfg.Arrival, Burstiness: cfg.Burstiness, Seed: p.Config(cfg).Seed},
			Records: campaigndir.ShardRecords(cell.ID, l, k)}
	}
	if t.Progress != nil {
		t.Progress(fmt.Sprintf("starting %d clients: %s", n, partsLine(parts)))
	}
	live := func(p shard.Progress) {
		if t.Progress != nil {
			t.Progress(session.ProgressLine(loadgen.Progress{Done: p.Done, Total: cfg.Requests, Errors: p.Errors}) + fmt.Sprintf(" over %d clients", n))
		}
	}
	var out shard.Outcome
	if r, ok := shard.RemoteOf(ctx); ok { // clients listening in pods (an exported Argo workflow)
		out, err = shard.StartRemote(ctx, r, specs, live)
	} else {
		out, err = shard.Start(ctx, shard.Self, specs, live)
	}
	if err != nil {
		return sharded{}, fmt.Errorf("%s over %d clients: %w", l.Key(), n, err)
	}
	recs, clients, err := shard.Merge(t.Dir, specs, out)
	if err != nil {
		return sharded{}, err
	}
	res := sharded{records: recs, clients: clients}
	for _, so := range out.Shards {
		res.warmed += so.Done.WarmOpened
		res.connectNs = append(res.connectNs, so.Done.WarmConnect...)
	}
	return res, nil
}

// partsLine words the clients' parts: c4 c4 c4 c4, or 2.5/s cap 16 each.
func partsLine(parts []shard.Part) string {
	var b []string
	for _, p := range parts {
		if p.Rate > 0 {
			b = append(b, fmt.Sprintf("%.4g/s cap %d (%d requests)", p.Rate, p.Concurrency, p.Requests))
		} else {
			b = append(b, fmt.Sprintf("c%d (%d requests)", p.Concurrency, p.Requests))
		}
	}
	return strings.Join(b, ", ")
}

// checkClients refuses a clients: the cell cannot split: a measured cell's every point needs a
// stream (or an in-flight slot) and a request per client, a fixed request count (the looks
// of auto counts read one client's records), a fixed list of points, and a network endpoint.
func checkClients(i int, cell schema.Cell, c *schema.Campaign) error {
	n := cell.Clients
	if n <= 1 || n > schema.MaxClients { // past the bound, the key's range says so
		return nil
	}
	path := fmt.Sprintf("cells[%d].clients", i)
	bad := func(hint, format string, args ...any) error {
		return &engine.FieldError{Path: path, Err: fmt.Errorf("cell %s: clients: %d: "+format, append([]any{cell.ID, n}, args...)...), Hint: hint}
	}
	switch {
	case cell.Import != nil:
		return bad("remove clients: (an imported cell's points were measured elsewhere)", "an imported cell measures nothing")
	case cell.Search != nil:
		return bad("measure the knee with one client, then list its neighbourhood under concurrencies: with clients:", "a search's probes are measured by one client")
	case cell.RequestsPerPoint.Auto != nil:
		return bad("give requests_per_point a count (an integer or Nx)", "requests_per_point auto decides from one client's records as they come")
	}
	if ep, ok := c.Endpoints[cellEndpoint(cell, c)]; ok && endpoint.IsSim(ep.URL) && ep.Sim != nil && ep.Sim.Deterministic {
		return bad("drop sim.deterministic, or clients:", "the deterministic simulator has no network for clients to share")
	}
	for _, l := range cell.Loads() {
		if l.IsRate() {
			if l.Cap > 0 && l.Cap < n {
				return bad(fmt.Sprintf("max_in_flight: %d or more, or clients: %d or fewer", n, l.Cap), "point %s: an in-flight cap of %d leaves a client no slot", l.Key(), l.Cap)
			}
		} else if l.Concurrency < n {
			return bad(fmt.Sprintf("list no concurrency below %d, or clients: %d or fewer", n, l.Concurrency), "point %s: each client needs at least one stream", l.Key())
		}
		if r := cell.RequestsPerPoint.For(l.CountBase()); r < n {
			return bad(fmt.Sprintf("requests_per_point: %d or more", n), "point %s sends %d requests: each client needs at least one", l.Key(), r)
		}
	}
	return nil
}

// cellEndpoint is the name of a cell's endpoint (its own, or the campaign's only one).
func cellEndpoint(cell schema.Cell, c *schema.Campaign) string {
	if cell.Endpoint != "" {
		return cell.Endpoint
	}
	if len(c.Endpoints) == 1 {
		for name := range c.Endpoints {
			return name
		}
	}
	return ""
}

// clientsLine words a split point's clients for its run line: how many, and how far apart
// their clocks and starts were (4 clients, clock offsets up to 2.4 µs ± 4.5 µs, started within 1.3 ms).
func clientsLine(c *schema.Clients) string {
	var off, rtt, late int64
	for _, s := range c.Shards {
		off, rtt, late = max(off, abs(s.ClockOffsetNs)), max(rtt, s.ClockRTTNs), max(late, s.StartLateNs)
	}
	return fmt.Sprintf("%d clients, clock offsets up to %s ± %s, started within %s of the agreed start",
		c.N, time.Duration(off), time.Duration(rtt/2), time.Duration(late).Round(10*time.Microsecond))
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

package calibrate

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/workload"
)

// PacedSim is the simulator the stream ladder runs against: every stream paced at 20 tokens
// a second after a 50 ms first token, with no batching cost and no queue (max_batch past any
// ladder), so the pace is the same at every rung and a rung falls short only when this
// machine does.
var PacedSim = schema.SimConfig{TTFTMs: 50, TPOTMs: 50, BatchTPOTMs: 1e-6, PrefillMsPer1K: 1e-6, MaxBatch: 1_000_000}

// Ladder defaults: from 64 streams, doubling, up to DefaultMaxStreams; each request asks for
// ladderTokens tokens (1.6 s at the pace), two rounds a rung.
const (
	FirstRung         = 64
	DefaultMaxStreams = 16384
	ladderTokens      = 32
	ladderInput       = 64
)

// Zero-delay ceilings: at ceilingConc, one-token answers for requests per second (about
// requestsTarget of them) and long answers of one-token chunks for tokens per second.
const (
	ceilingConc    = 256
	requestsTarget = 8192
	tokensPerReq   = 256
)

// CeilingOptions say where the two simulators listen and how high the ladder climbs.
type CeilingOptions struct {
	ZeroURL  string // the zero-delay simulator
	PacedURL string // a simulator configured as PacedSim
	// MaxStreams is the ladder's top (DefaultMaxStreams when 0), and Limit what bounds it
	// when lower than asked, for StreamsEnd (e.g. the open-file limit), "" otherwise.
	MaxStreams int
	Limit      string
}

// Ceilings measures the most one client holds on this machine: the stream ladder against the
// paced simulator, then requests and tokens per second against the zero-delay one.
func Ceilings(ctx context.Context, o Options, co CeilingOptions) (*schema.CalibrationCeilings, error) {
	top := co.MaxStreams
	if top <= 0 {
		top = DefaultMaxStreams
	}
	ce := &schema.CalibrationCeilings{StreamTokensPerS: 1000 / PacedSim.TPOTMs, StreamTokens: ladderTokens, Concurrency: ceilingConc}
	w := schema.Workload{Shape: workload.ShapeCustom, InputTokens: ladderInput, OutputTokens: ladderTokens}
	c := FirstRung
	for ; c <= top; c *= 2 {
		o.say("streams: c%d, %d requests of %d tokens at %g tokens/s a stream", c, 2*c, ladderTokens, ce.StreamTokensPerS)
		recs, _, bound, err := o.point(ctx, co.PacedURL, "streams", c, 2*c, w)
		if err != nil {
			return nil, err
		}
		r := rung(c, recs, bound)
		ce.Rungs = append(ce.Rungs, r)
		if !r.Held {
			ce.StreamsEnd = fmt.Sprintf("c%d not held: %s", c, r.Why)
			break
		}
		ce.Streams = c
	}
	if ce.StreamsEnd == "" {
		ce.StreamsEnd = fmt.Sprintf("the ladder's top, c%d (--max-streams %d)", ce.Streams, top)
		if co.Limit != "" {
			ce.StreamsEnd = fmt.Sprintf("the ladder's top, c%d: %s", ce.Streams, co.Limit)
		}
	}

	one := schema.Workload{Shape: workload.ShapeCustom, InputTokens: ladderInput, OutputTokens: 1}
	o.say("requests/s: c%d, %d one-token answers at zero delay", ceilingConc, requestsTarget)
	reqs, cpu, err := o.measured(ctx, co.ZeroURL, "requests", requestsTarget, one)
	if err != nil {
		return nil, err
	}
	var win float64
	ce.RequestsPerS, win = rate(reqs, func(schema.RequestRecord) int { return 1 })
	ce.RequestsClientCPUPct = pct(cpu, win)
	long := schema.Workload{Shape: workload.ShapeCustom, InputTokens: ladderInput, OutputTokens: tokensPerReq}
	o.say("tokens/s: c%d, %d answers of %d one-token chunks at zero delay", ceilingConc, 2*ceilingConc, tokensPerReq)
	toks, cpu, err := o.measured(ctx, co.ZeroURL, "tokens", 2*ceilingConc, long)
	if err != nil {
		return nil, err
	}
	ce.TokensPerS, win = rate(toks, tokensOf)
	ce.TokensPerRequest, ce.TokensClientCPUPct = tokensPerReq, pct(cpu, win)
	return ce, nil
}

// measured runs a zero-delay point at ceilingConc with the client's CPU over it.
func (o Options) measured(ctx context.Context, base, phase string, n int, w schema.Workload) ([]schema.RequestRecord, time.Duration, error) {
	var cpu0 time.Duration
	if o.CPU != nil {
		cpu0 = o.CPU()
	}
	recs, _, _, err := o.point(ctx, base, phase, ceilingConc, n, w)
	if err != nil || o.CPU == nil {
		return recs, 0, err
	}
	return recs, o.CPU() - cpu0, nil
}

// rate is what count says of the valid records, per second of their window (first start to
// last end), and the window in seconds.
func rate(recs []schema.RequestRecord, count func(schema.RequestRecord) int) (perS, windowS float64) {
	var first, last int64 = math.MaxInt64, 0
	n := 0
	for _, r := range recs {
		if r.ErrorClass != "" {
			continue
		}
		n += count(r)
		first, last = min(first, r.StartNs), max(last, r.EndNs)
	}
	if n == 0 || last <= first {
		return 0, 0
	}
	windowS = float64(last-first) / 1e9
	return float64(n) / windowS, windowS
}

// tokensOf is a record's output tokens: the server's usage, else its chunks.
func tokensOf(r schema.RequestRecord) int {
	if r.UsageComplete != nil {
		return *r.UsageComplete
	}
	return len(r.ChunkNs)
}

// pct is cpu over a window of windowS seconds, in percent of one core.
func pct(cpu time.Duration, windowS float64) float64 {
	if windowS <= 0 {
		return 0
	}
	return 100 * cpu.Seconds() / windowS
}

// rung judges one rung of the ladder: held when every request succeeded, the client was not
// client_bound and the tokens taken were at least schema.HeldRatio of the pace's.
func rung(c int, recs []schema.RequestRecord, bound *schema.ClientBound) schema.CalibrationRung {
	r := schema.CalibrationRung{Concurrency: c, Requests: len(recs), ClientBound: bound}
	for _, rec := range recs {
		if rec.ErrorClass != "" {
			r.Failed++
		}
	}
	perS, win := rate(recs, tokensOf)
	r.WindowS = win
	// the pace: each stream's request takes ttft + (n − 1) × tpot, back to back
	paced := float64(c) * ladderTokens / ((PacedSim.TTFTMs + (ladderTokens-1)*PacedSim.TPOTMs) / 1000)
	r.Ratio = perS / paced
	var why []string
	if r.Failed > 0 {
		why = append(why, fmt.Sprintf("%d of %d requests failed", r.Failed, r.Requests))
	}
	if bound.Bound() {
		why = append(why, "client_bound: "+strings.Join(bound.Why, ", "))
	}
	if r.Ratio < schema.HeldRatio {
		why = append(why, fmt.Sprintf("took %.0f %% of the paced tokens", 100*r.Ratio))
	}
	r.Held, r.Why = len(why) == 0, strings.Join(why, "; ")
	return r
}

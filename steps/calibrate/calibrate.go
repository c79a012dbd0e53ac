// Package calibrate measures the client machine's own overhead — what perfdag's client adds to
// TTFT, and how many tokens per second it can take — by running the real client path
// (session, loadgen, openai, over loopback HTTP) against a zero-delay simulator whose record
// of what it served is the truth. The simulator is a test double: nothing here is read by a
// measurement of a real server. It stands above measure/ and sim/ (it uses both), so it is
// not in measure/, which the simulator itself imports.
package calibrate

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/endpoint"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/session"
	"github.com/perfdag/perfdag/steps/measure/stats"
	"github.com/perfdag/perfdag/steps/measure/workload"
	"github.com/perfdag/perfdag/steps/sim"
)

// MaxConcurrency bounds the concurrencies calibrated: higher campaign concurrencies are
// represented by this one (the report names the concurrency it shows).
const MaxConcurrency = 256

// TTFT requests ask for this many output tokens: the first one is what is measured.
const ttftOutputTokens = 16

// Ingest streams: a small prompt, many one-token chunks, about ingestTarget tokens per point.
const (
	ingestInputTokens  = 64
	ingestOutputTokens = 1024
	ingestTarget       = 256 << 10
)

// Method is the calibration's method as calibration.json and the docs state it.
const Method = "perfdag's client (session → loadgen → openai, kernel receive stamps, loopback HTTP) " +
	"against the built-in simulator with zero delay in a child process (its own Go runtime, so " +
	"its garbage and goroutines are not the client's). TTFT error per request = send + receive: " +
	"send = client start stamp → request written (client clock); receive = the simulator about " +
	"to write the first answer chunk → the client's kernel receive stamp of it, so it also holds " +
	"the simulator's own write and is an upper bound of the client's share (simulator clock to client clock: both " +
	"are the wall clock at process start plus the monotonic clock since, on one machine; " +
	"clock_violations counts requests that break causality between them). The time between " +
	"(loopback in, the simulator waiting for a CPU, its own work) is the server's, not the " +
	"client's. Requests are paired with the simulator's record by the SHA-256 of their prompt. " +
	"Ingest ceiling = output tokens (server usage) / (last end − first start) of zero-delay " +
	"one-token-chunk streams; the simulator shares the machine, so it is a lower bound of the " +
	"client's own ceiling; the client's CPU share says which side was busy. Ceilings: streams = the " +
	"highest rung of closed-loop points doubling from 64 against a second simulator pacing each " +
	"stream at 20 tokens/s (50 ms first token, no batching cost, no queue), two rounds of 32-token " +
	"requests a rung, held when no request failed, the client was not client_bound (CPU, read lag) " +
	"and it took at least 90 % of the paced tokens; requests/s = one-token answers and tokens/s = " +
	"256-token answers at c256 against the zero-delay simulator; each a lower bound (the simulators " +
	"share the cores)."

// Target is one concurrency to calibrate and the workload its TTFT requests mimic.
type Target struct {
	Concurrency int
	Workload    string // the shape named in the file (or "custom")
	InputTokens int    // the prompt size the cell sends
}

// Targets are the distinct concurrencies of the campaign's measured cells (not imported ones:
// another tool's client measured those), ascending, each
// with the input budget of the first cell (in file order) that runs it; concurrencies above
// MaxConcurrency are left out and returned as skipped (MaxConcurrency itself is then
// calibrated). A cell whose workload does not resolve to a budget (a dataset replay without a
// shape) counts as aa-1k sized.
func Targets(c *schema.Campaign) (targets []Target, skipped []int) {
	seen := map[int]bool{}
	for _, cell := range c.Cells {
		if cell.Import != nil {
			continue // another tool's client measured it
		}
		in, shape := 1000, "aa-1k"
		if b, err := workload.Resolve(cell.Workload); err == nil {
			in, shape = b.InputTokens, b.Shape
		}
		for _, conc := range cellConcurrencies(cell) {
			if conc > MaxConcurrency {
				if !slices.Contains(skipped, conc) {
					skipped = append(skipped, conc)
				}
				conc = MaxConcurrency
			}
			if !seen[conc] {
				seen[conc] = true
				targets = append(targets, Target{Concurrency: conc, Workload: shape, InputTokens: in})
			}
		}
	}
	slices.SortFunc(targets, func(a, b Target) int { return a.Concurrency - b.Concurrency })
	slices.Sort(skipped)
	return targets, skipped
}

// cellConcurrencies are the concurrencies a cell may measure: its list, or for a searched cell
// (whose probes are decided at run time) the search's bounds and the powers of two between
// them, so the cover's nearest calibrated concurrency is never far from a probe.
func cellConcurrencies(cell schema.Cell) []int {
	s := cell.Search
	if s == nil || s.OverRate() || s.From < 1 || s.To < s.From {
		return cell.Concurrencies
	}
	from, to := s.Conc()
	out := append(slices.Clone(cell.Concurrencies), from)
	for c := 1; c < to; c *= 2 {
		if c > from {
			out = append(out, c)
		}
	}
	return append(out, to)
}

// DefaultRequests is how many TTFT requests a target sends unless told: 4 × its concurrency,
// and at least 64, or — for large prompts, which take long to build and send — at least as many
// as 2 M prompt tokens make (20 of aa-100k).
func DefaultRequests(t Target) int {
	return max(4*t.Concurrency, min(64, promptBudget/max(t.InputTokens, 1)))
}

// promptBudget bounds the prompt tokens a TTFT point sends when its concurrency does not ask
// for more.
const promptBudget = 2_000_000

// Options say where the simulator listens and how much to measure.
type Options struct {
	BaseURL  string // the zero-delay simulator, e.g. http://127.0.0.1:41234
	Model    string // the model it serves
	Salt     string // makes this calibration's prompts its own (e.g. the campaign directory name)
	Requests int    // TTFT requests per concurrency; 0: DefaultRequests
	// IngestTokens is about how many tokens each ingest point streams (0: 256 Ki).
	IngestTokens int
	// Truth returns the simulator's record of every request it served so far.
	Truth func(ctx context.Context) ([]sim.Served, error)
	// CPU returns the client process's CPU time so far (user + system); nil skips the figure.
	CPU      func() time.Duration
	Progress func(line string)
}

// Run measures every target: the TTFT points first (then the simulator's record is small),
// the ingest points after. Points are filled in target order.
func Run(ctx context.Context, targets []Target, o Options) ([]schema.CalibrationPoint, error) {
	if len(targets) == 0 {
		return nil, fmt.Errorf("calibrate: no concurrency to calibrate")
	}
	points := make([]schema.CalibrationPoint, len(targets))
	digests := make([]map[string]int, len(targets)) // prompt digest → request index
	recs := make([][]schema.RequestRecord, len(targets))
	for i, t := range targets {
		n := o.Requests
		if n <= 0 {
			n = DefaultRequests(t)
		}
		w := schema.Workload{Shape: workload.ShapeCustom, InputTokens: t.InputTokens, OutputTokens: ttftOutputTokens}
		o.say("c%d: TTFT, %d requests of %d prompt tokens", t.Concurrency, n, t.InputTokens)
		r, d, _, err := o.point(ctx, o.BaseURL, "ttft", t.Concurrency, n, w)
		if err != nil {
			return nil, err
		}
		recs[i], digests[i] = r, d
		points[i] = schema.CalibrationPoint{Concurrency: t.Concurrency, Workload: t.Workload,
			InputTokens: t.InputTokens, OutputTokens: ttftOutputTokens}
	}
	truth, err := o.Truth(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the simulator's record: %w", err)
	}
	byDigest := map[string][]*sim.Served{}
	for k := range truth {
		byDigest[truth[k].PromptSHA256] = append(byDigest[truth[k].PromptSHA256], &truth[k])
	}
	for i := range targets {
		ttft(&points[i], recs[i], digests[i], byDigest)
	}
	for i, t := range targets {
		n := max(t.Concurrency, cmp.Or(o.IngestTokens, ingestTarget)/ingestOutputTokens)
		n = (n + t.Concurrency - 1) / t.Concurrency * t.Concurrency // whole rounds of the closed loop
		w := schema.Workload{Shape: workload.ShapeCustom, InputTokens: ingestInputTokens, OutputTokens: ingestOutputTokens}
		o.say("c%d: ingest, %d streams of %d one-token chunks", t.Concurrency, n, ingestOutputTokens)
		var cpu0 time.Duration
		if o.CPU != nil {
			cpu0 = o.CPU()
		}
		r, _, _, err := o.point(ctx, o.BaseURL, "ingest", t.Concurrency, n, w)
		if err != nil {
			return nil, err
		}
		var cpu time.Duration
		if o.CPU != nil {
			cpu = o.CPU() - cpu0
		}
		ingest(&points[i], r, cpu)
	}
	return points, nil
}

func (o Options) say(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// point runs n requests at concurrency c through the session path against the simulator at
// base, and returns the records, the digest of each request's prompt and whether the client was
// the window's bottleneck.
func (o Options) point(ctx context.Context, base, phase string, c, n int, w schema.Workload) ([]schema.RequestRecord, map[string]int, *schema.ClientBound, error) {
	const key = "calibration"
	t := &engine.Task{Node: "calibrate[" + phase + "/c" + strconv.Itoa(c) + "]", Load: schema.Conc(c),
		Endpoint: &schema.Endpoint{URL: "sim://", Model: o.Model}, EndpointKey: key,
		Env: &endpoint.Env{Endpoints: map[string]endpoint.Resolved{key: {BaseURL: base, Sim: true}}}}
	salt := o.Salt + "/calibrate/" + phase + "/c" + strconv.Itoa(c)
	s, err := session.Open(ctx, t, w, salt)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("calibrate c%d %s: %w", c, phase, err)
	}
	defer s.Close()
	recs, err := s.Load(ctx, session.PhaseProfiling, loadgen.Config{Requests: n, Concurrency: c}, nil)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("calibrate c%d %s: %w", c, phase, err)
	}
	digests := make(map[string]int, n)
	for _, r := range recs {
		p, err := s.Source.Prompt(r.Index)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("calibrate c%d %s: prompt %d: %w", c, phase, r.Index, err)
		}
		digests[sim.PromptDigest(p.Text)] = r.Index
	}
	return recs, digests, s.ClientBound(), nil
}

// ttft pairs each valid record with the simulator's truth of the same prompt (an ambiguous or
// missing pair counts as failed) and states the error statistics.
func ttft(p *schema.CalibrationPoint, recs []schema.RequestRecord, digests map[string]int, truth map[string][]*sim.Served) {
	byIndex := map[int]*schema.RequestRecord{}
	for k := range recs {
		byIndex[recs[k].Index] = &recs[k]
	}
	var total, send, recv, server []float64
	for d, i := range digests {
		r, served := byIndex[i], truth[d]
		if r == nil || r.ErrorClass != "" || r.FirstTokenNs == 0 || r.SentNs == 0 || len(served) != 1 || len(served[0].SentNs) == 0 {
			p.Failed++
			continue
		}
		s := served[0]
		sendNs, recvNs := r.SentNs-r.StartNs, r.FirstTokenNs-s.SentNs[0]
		if recvNs < 0 || s.ArrivedNs < r.StartNs {
			p.ClockViolations++
		}
		total = append(total, float64(sendNs+recvNs)/1e6)
		send = append(send, float64(sendNs)/1e6)
		recv = append(recv, float64(recvNs)/1e6)
		server = append(server, float64(s.SentNs[0]-s.ArrivedNs)/1e6)
	}
	p.Requests = len(total)
	p.Failed += len(recs) - len(digests) // two requests with one prompt: neither can be paired
	p.TTFTErrorMs = stats.Summarize(total, "ms")
	p.SendMs = stats.Summarize(send, "ms")
	p.ReceiveMs = stats.Summarize(recv, "ms")
	p.ServerTTFTMs = stats.Summarize(server, "ms")
}

// ingest states the ceiling of one ingest point: tokens the server says it sent over the
// window of the valid requests.
func ingest(p *schema.CalibrationPoint, recs []schema.RequestRecord, cpu time.Duration) {
	var first, last int64 = math.MaxInt64, 0
	tokens, chunks := 0, 0
	for _, r := range recs {
		if r.ErrorClass != "" {
			continue
		}
		p.IngestRequests++
		first, last = min(first, r.StartNs), max(last, r.EndNs)
		if r.UsageComplete != nil {
			tokens += *r.UsageComplete
		} else {
			tokens += len(r.ChunkNs)
		}
		chunks += len(r.ChunkNs)
	}
	p.IngestTokens = tokens
	if p.IngestRequests == 0 || last <= first {
		return
	}
	win := float64(last-first) / 1e9
	p.IngestWindowS = win
	p.IngestTokensPerS = float64(tokens) / win
	p.IngestChunksPerS = float64(chunks) / win
	p.IngestClientCPUS = cpu.Seconds()
	p.IngestClientCPUPct = 100 * cpu.Seconds() / win
}

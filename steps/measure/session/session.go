// Package session is what the steps that put load on an endpoint share — prewarm, burn-in and
// run-shape: resolve the endpoint, open the cell's workload, stream requests through the
// load generator, keep the per-request records, and log the settle discipline.
package session

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/measure/endpoint"
	"github.com/perfdag/perfdag/steps/measure/hftok"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/workload"
)

// Phases a request can belong to; only profiling enters statistics.
const (
	PhaseProfiling = "profiling"
	PhaseWarmup    = "warmup"
	PhaseBurnIn    = "burn-in"
	PhasePrewarm   = "prewarm"
)

// Session is an endpoint and a workload ready to send requests.
type Session struct {
	Endpoint endpoint.Resolved
	Client   *openai.Client
	Source   workload.Source
	Workload schema.Workload
	Model    string
	cell     string
	warmed   openai.Warmed
	// tok counts prompt and texts when the endpoint's basis is a tokenizer file (nil otherwise).
	tok *hftok.Tokenizer
	// bound is whether the latest Load's client was its bottleneck (nil: a virtual endpoint).
	bound *schema.ClientBound
}

// Open prepares a session for the task's cell (or for w when given, e.g. a prewarm shape).
// salt makes synthetic prompts unique to this campaign, cell, point and phase.
func Open(ctx context.Context, t *engine.Task, w schema.Workload, salt string) (*Session, error) {
	res, err := endpoint.Resolve(t)
	if err != nil {
		return nil, err
	}
	timeout := openai.DefaultTimeout
	if t.Endpoint.TimeoutS > 0 {
		timeout = time.Duration(t.Endpoint.TimeoutS * float64(time.Second))
	}
	client, err := openai.New(openai.Options{BaseURL: res.BaseURL, APIKey: endpoint.APIKey(t.Endpoint), Timeout: timeout, DeferCounts: true})
	if err != nil {
		return nil, fmt.Errorf("endpoint %s: %w", t.EndpointKey, err)
	}
	tok, err := hftok.ForEndpoint(t.Endpoint, t.BaseDir)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("endpoint %s tokenizer: %w", t.EndpointKey, err)
	}
	src, err := workload.OpenContext(ctx, w, t.BaseDir, salt)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("cell %s workload: %w", cellID(t), err)
	}
	return &Session{Endpoint: res, Client: client, Source: src, Workload: w, Model: t.Endpoint.Model, cell: cellID(t), tok: tok}, nil
}

// Close releases the session's connections.
func (s *Session) Close() { s.Client.Close() }

// Salt names a point's prompts: stable across a resume of the same campaign directory,
// different across campaigns, cells, points and phases, so no two requests share a prefix.
func Salt(t *engine.Task, phase string, l schema.Load) string {
	return filepath.Base(t.Dir) + "/" + cellID(t) + "/" + l.Key() + "/" + phase
}

// Send streams request i of phase and returns its record.
func (s *Session) Send(ctx context.Context, phase string, i int) schema.RequestRecord {
	return s.send(ctx, phase, 1, i, nil)
}

// send streams request i of phase sent at concurrency (which only a deterministic simulator
// reads: its virtual clock places the request in the closed loop). Token counts (o200k_base
// when the client defers them, the endpoint's tokenizer file when it has one) wait in pending
// for a count after the window; with pending nil they are made now.
func (s *Session) send(ctx context.Context, phase string, concurrency, i int, pending *texts) schema.RequestRecord {
	p, err := s.Source.Prompt(i)
	if err != nil {
		return failed(i, phase, err)
	}
	body, err := workload.Body(s.Model, p, s.Workload)
	if err != nil {
		return failed(i, phase, err)
	}
	if s.Endpoint.Virtual != nil {
		return s.Endpoint.Virtual(s.cell, phase, concurrency, i, p.InputTokens, p.OutputTokens)
	}
	res := s.Client.Stream(ctx, openai.Request{Index: i, Phase: phase, Body: body, InputTokens: p.InputTokens, RequestedOut: p.OutputTokens})
	if pending != nil {
		pending.put(i, p.Text, res, s.Client.DefersCounts())
		return res.Record
	}
	if s.Client.DefersCounts() {
		openai.CountTokens(&res.Record, res.Content, res.Reasoning)
	}
	s.countTokenizer(&res.Record, p.Text, res.Content, res.Reasoning)
	return res.Record
}

// countTokenizer fills a record's counts on the endpoint's tokenizer file, if it has one; a
// failed request has no answer to count.
func (s *Session) countTokenizer(rec *schema.RequestRecord, prompt, content, reasoning string) {
	if s.tok != nil && rec.ErrorClass == "" {
		s.tok.Counts(rec, prompt, content, reasoning)
	}
}

// texts keeps the prompt, answer and reasoning of a window's requests until their tokens are
// counted.
type texts struct {
	mu sync.Mutex
	by map[int]pendingText
}

type pendingText struct {
	prompt, content, reasoning string
	o200k                      bool // the client deferred its o200k_base counts too
}

func (t *texts) put(i int, prompt string, res openai.Result, o200k bool) {
	t.mu.Lock()
	t.by[i] = pendingText{prompt, res.Content, res.Reasoning, o200k}
	t.mu.Unlock()
}

// count fills the records' token counts from the kept texts.
func (s *Session) count(t *texts, recs []schema.RequestRecord) {
	for k := range recs {
		if tx, ok := t.by[recs[k].Index]; ok {
			if tx.o200k {
				openai.CountTokens(&recs[k], tx.content, tx.reasoning)
			}
			s.countTokenizer(&recs[k], tx.prompt, tx.content, tx.reasoning)
		}
	}
}

func failed(i int, phase string, err error) schema.RequestRecord {
	now := time.Now().UnixNano()
	return schema.RequestRecord{Index: i, Phase: phase, StartNs: now, EndNs: now, ErrorClass: schema.ErrorConnect, Error: "build request: " + err.Error()}
}

// Load runs one point's load and returns its records in index order. It first opens the
// point's concurrency worth of connections (closed loop: C; open loop: the in-flight cap),
// so no request of the window pays a connect inside its TTFT; Warmed then tells what those
// connects cost. For servers that close a connection after each response it also keeps as
// many pre-dialled connections in stock (openai.Client.Predial, closed when the window
// ends), so no later request of the window waits on a connect either; once the window sees
// such a server close a connection right after its response, no request of it takes an idle
// connection the server is closing (each takes one from the stock). The records' o200k_base
// token counts are made after the window (see openai.Options.DeferCounts). In an open loop
// each record carries its scheduled send (loadgen.Run), against the wall clock from the
// window's start, whatever the cap or the server does. ClientBound then says whether the
// client was the window's bottleneck.
func (s *Session) Load(ctx context.Context, phase string, cfg loadgen.Config, progress func(loadgen.Progress)) ([]schema.RequestRecord, error) {
	return s.LoadShard(ctx, phase, cfg, Shard{}, progress)
}

// Shard is one client's part of a point split over clients: its requests are the point's
// From, From+1, … (so its prompts are those the one client would have sent at those indices),
// and Ready, when set, runs after its connections are open and before its window: the
// client waits there for the start every client agreed on.
type Shard struct {
	From  int
	Ready func(context.Context) error
}

// LoadShard is Load for one client's share of a point (see Shard); its records carry the
// point's request indices.
func (s *Session) LoadShard(ctx context.Context, phase string, cfg loadgen.Config, sh Shard, progress func(loadgen.Progress)) ([]schema.RequestRecord, error) {
	s.warmed = openai.Warmed{}
	if s.Endpoint.Virtual == nil && cfg.Concurrency > 0 {
		n := min(cfg.Concurrency, cfg.Requests)
		s.warmed = s.Client.Warm(ctx, n)
		defer s.Client.Predial(ctx, n)()
	}
	if sh.Ready != nil {
		if err := sh.Ready(ctx); err != nil {
			return nil, err
		}
	}
	var pending *texts
	if s.Endpoint.Virtual == nil && (s.Client.DefersCounts() || s.tok != nil) {
		pending = &texts{by: map[int]pendingText{}}
	}
	s.bound = nil
	var win window
	if s.Endpoint.Virtual == nil {
		win = s.openWindow()
	}
	if cfg.Rate > 0 && s.Endpoint.VirtualOpen != nil {
		return s.virtualOpen(ctx, phase, cfg, progress)
	}
	recs, err := loadgen.Run(ctx, cfg, func(ctx context.Context, i int) schema.RequestRecord {
		return s.send(ctx, phase, cfg.Concurrency, sh.From+i, pending)
	}, progress)
	for k := range recs {
		recs[k].Index += sh.From
	}
	if s.Endpoint.Virtual == nil {
		s.bound = win.close(s, recs)
	}
	if pending != nil {
		s.count(pending, recs) // after the window: it spent no CPU on tokenizing
	}
	if s.Endpoint.Virtual != nil {
		// the deterministic simulator places its records on its own virtual clock: a schedule
		// on the wall clock says nothing about them
		for k := range recs {
			recs[k].ScheduledNs, recs[k].CapDelayed, recs[k].LookHeld = 0, false, false
		}
	}
	return recs, err
}

// ClientBound reports whether the latest Load's client was its bottleneck: its process CPU,
// late sends and read lag over the window (nil against the deterministic simulator, whose
// records no client timed).
func (s *Session) ClientBound() *schema.ClientBound { return s.bound }

// Warmed reports the connections the latest Load opened before its window.
func (s *Session) Warmed() openai.Warmed { return s.warmed }

// ProgressLine formats the live line of a running point.
func ProgressLine(p loadgen.Progress) string {
	line := fmt.Sprintf("%d/%d done, %s", p.Done, p.Total, plural.N(p.Errors, "error"))
	if p.Adaptive {
		line = fmt.Sprintf("%d done (auto, at most %d), %s", p.Done, p.Total, plural.N(p.Errors, "error"))
	}
	if p.Cancelled > 0 {
		line += fmt.Sprintf(", %d cancelled by the interrupt", p.Cancelled)
	}
	if p.TTFTP50Ms > 0 {
		line += fmt.Sprintf(", TTFT p50 %.0f ms", p.TTFTP50Ms)
	}
	return line
}

// SettleLog appends a timestamped line to the cell's settle log, the record of the settle
// discipline a campaign ran with (prewarm, burn-in, pauses).
func SettleLog(t *engine.Task, format string, args ...any) error {
	return campaigndir.AppendLine(t.Dir, campaigndir.SettleLog(cellID(t)), t.Node, fmt.Sprintf(format, args...))
}

// Pause waits d or until ctx ends.
func Pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func cellID(t *engine.Task) string {
	if t.Cell == nil {
		return ""
	}
	return t.Cell.ID
}

// virtualOpen runs an open-loop point against the deterministic simulator: its requests are
// answered one after another in index order (the loop's looks and progress as usual), each
// placed by the simulator on its virtual clock at its arrival of the point's seeded schedule
// (loadgen.Schedule), so no wall-clock pacing is waited out and the point is a pure function
// of the campaign; the records keep the simulator's schedule and cap-delays.
func (s *Session) virtualOpen(ctx context.Context, phase string, cfg loadgen.Config, progress func(loadgen.Progress)) ([]schema.RequestRecord, error) {
	arrivals := loadgen.Schedule(cfg)
	type slot struct {
		at      int64
		delayed bool
	}
	sched := make([]slot, len(arrivals))
	serial := cfg
	serial.Rate, serial.Concurrency = 0, 1
	recs, err := loadgen.Run(ctx, serial, func(ctx context.Context, i int) schema.RequestRecord {
		p, err := s.Source.Prompt(i)
		if err != nil {
			return failed(i, phase, err)
		}
		rec := s.Endpoint.VirtualOpen(s.cell, phase, arrivals, cfg.Concurrency, i, p.InputTokens, p.OutputTokens)
		sched[i] = slot{rec.ScheduledNs, rec.CapDelayed}
		return rec
	}, progress)
	for k := range recs {
		if i := recs[k].Index; i >= 0 && i < len(sched) {
			recs[k].ScheduledNs, recs[k].CapDelayed = sched[i].at, sched[i].delayed
		}
	}
	return recs, err
}

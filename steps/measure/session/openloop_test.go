//go:build linux

package session

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/endpoint"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/sse"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// sseServer is a plain OpenAI-compatible streaming server (no simulator): each chat
// completion gets its first token ttft after it arrived, then tokens−1 more every gap, a
// finish chunk, usage and [DONE]. With stallAt set, the stallAt-th chat request to arrive
// starts a stall of stallFor: no token is written while it lasts (one due then waits for its
// end), so every request in flight, or arriving, during it is held — a GC pause, a stuck
// batch, a failover.
type sseServer struct {
	ttft, gap time.Duration
	tokens    int
	stallAt   int
	stallFor  time.Duration

	mu          sync.Mutex
	arrivals    int
	from, until int64 // the stall, on sse.Now's clock (the records' clock: same process)
}

func (s *sseServer) stall() (from, until int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.from, s.until
}

// hold waits out the stall if it is on.
func (s *sseServer) hold() {
	from, until := s.stall()
	if now := sse.Now(); from > 0 && now >= from && now < until {
		time.Sleep(time.Duration(until - now))
	}
}

func (s *sseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/models" {
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"exact"}]}`))
		return
	}
	arrived := time.Now()
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	s.arrivals++
	if s.arrivals == s.stallAt {
		s.from = sse.Now()
		s.until = s.from + int64(s.stallFor)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	write := func(payload string) {
		_, _ = w.Write([]byte("data: " + payload + "\n\n"))
		_ = rc.Flush()
	}
	const head = `{"id":"x","object":"chat.completion.chunk","model":"exact","choices":[{"index":0,"delta":`
	for k := range s.tokens {
		time.Sleep(time.Until(arrived.Add(s.ttft + time.Duration(k)*s.gap)))
		s.hold()
		write(head + `{"content":" tok"},"finish_reason":null}]}`)
	}
	write(head + `{},"finish_reason":"length"}]}`)
	write(fmt.Sprintf(`{"id":"x","object":"chat.completion.chunk","model":"exact","choices":[],"usage":{"prompt_tokens":2,"completion_tokens":%d,"total_tokens":%d}}`, s.tokens, s.tokens+2))
	write("[DONE]")
}

// point runs one profiling point of cfg through Session.Load against srv, as run-shape does,
// and returns its records and their point.
func point(t *testing.T, srv *sseServer, cfg loadgen.Config) ([]schema.RequestRecord, schema.Point) {
	t.Helper()
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	s := exactSession(t, ts.URL)
	recs, err := s.Load(context.Background(), PhaseProfiling, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != cfg.Requests {
		t.Fatalf("%d records, want %d", len(recs), cfg.Requests)
	}
	for _, r := range recs {
		if r.ErrorClass != "" {
			t.Fatalf("request %d: %s: %s", r.Index, r.ErrorClass, r.Error)
		}
	}
	return recs, stats.Compute(recs, stats.Options{Concurrency: cfg.Concurrency, RequestRate: cfg.Rate, Arrival: cfg.Arrival, TokenBasis: schema.TokenBasisO200k})
}

// TestCoordinatedOmission: a server that stalls for 2 s once (when its 40th request arrives),
// loaded by the same cell twice — open loop at 40 requests/s capped at 4 in flight, and closed
// loop at concurrency 4. In the open loop every request scheduled during the stall has a TTFT
// from its schedule of at least the stall time left at its schedule (its user waited that
// long), although most of them were sent after the stall — the cap held them in the client —
// so their TTFT from the send hides it. The closed loop sends nothing while its 4 requests are
// stuck: at most 4 of its requests see the stall at all. Every bound is causal (no token is
// written during the stall), none a wall-clock window.
func TestCoordinatedOmission(t *testing.T) {
	const c = 4
	stalling := func() *sseServer {
		return &sseServer{ttft: 5 * time.Millisecond, gap: 2 * time.Millisecond, tokens: 4, stallAt: 40, stallFor: 2 * time.Second}
	}

	open := stalling()
	recs, p := point(t, open, loadgen.Config{Requests: 200, Concurrency: c, Rate: 40, Seed: 5})
	from, until := open.stall()
	var during, includes, sentDuring int
	for _, r := range recs {
		if r.ScheduledNs < from || r.ScheduledNs >= until {
			continue
		}
		during++
		if r.FirstTokenNs-r.ScheduledNs >= until-r.ScheduledNs {
			includes++
		}
		if r.StartNs < until {
			sentDuring++
		}
	}
	ol := p.OpenLoop
	t.Logf("open loop: %d requests scheduled during the stall, %d with a TTFT from the schedule ≥ the stall left, %d sent during it; "+
		"TTFT p90 %.0f ms from the schedule, %.0f ms from the send; %d sends cap-delayed (max %.0f ms); achieved %.1f/s of %.1f drawn",
		during, includes, sentDuring, p.TTFTSched.P90, p.TTFT.P90, ol.CapDelayedSends, ol.CapDelayMaxMs, ol.AchievedRate, ol.ScheduledRate)
	if during < 2*c {
		t.Fatalf("only %d requests were scheduled during the 2 s stall at 40/s", during)
	}
	if includes != during {
		t.Errorf("%d of the %d requests scheduled during the stall have a TTFT from their schedule that includes the rest of the stall, want all", includes, during)
	}
	if sentDuring > c {
		t.Errorf("%d requests went out during the stall with a cap of %d", sentDuring, c)
	}
	if ol.CapDelayedSends < during-c {
		t.Errorf("%d sends marked cap-delayed, want at least the %d scheduled during the stall that could not go out", ol.CapDelayedSends, during-c)
	}

	closed := stalling()
	recs, _ = point(t, closed, loadgen.Config{Requests: 200, Concurrency: c})
	from, until = closed.stall()
	saw := 0
	for _, r := range recs {
		if r.ScheduledNs != 0 {
			t.Fatalf("closed-loop request %d has a schedule", r.Index)
		}
		if r.StartNs < until && r.LastContentNs > from {
			saw++
		}
	}
	t.Logf("closed loop: %d of %d requests overlap the stall", saw, len(recs))
	if saw > c {
		t.Errorf("%d closed-loop requests overlap the stall, want at most the %d in flight", saw, c)
	}
	if saw >= during {
		t.Errorf("the closed loop shows the stall to %d requests, the open loop to %d: want the closed loop to hide it", saw, during)
	}
}

// TestAchievedRateOnAFastServer: against a server that answers in about 2 ms, the achieved
// send rate of a 300 requests/s point over 1,500 requests is within 2 % of its schedule,
// through the whole client (prompt, body, HTTP, SSE). A constant schedule is the asked rate,
// so it is within 2 % of the asked rate; a Poisson draw of n sends lies within 3/√(n−1) of the
// asked rate (the count of a Poisson process over a window has sd √n), here 7.7 %, so the
// achieved rate is held to that plus the client's 2 %.
func TestAchievedRateOnAFastServer(t *testing.T) {
	const rate, n = 300.0, 1500
	for _, arrival := range []string{loadgen.ArrivalConstant, loadgen.ArrivalPoisson} {
		t.Run(arrival, func(t *testing.T) {
			srv := &sseServer{ttft: time.Millisecond, gap: 500 * time.Microsecond, tokens: 2}
			_, p := point(t, srv, loadgen.Config{Requests: n, Concurrency: 16, Rate: rate, Arrival: arrival, Seed: 9})
			ol := p.OpenLoop
			draw := 0.0
			if arrival == loadgen.ArrivalPoisson {
				draw = 3 / math.Sqrt(n-1)
			}
			t.Logf("%s: asked %.0f/s, drawn %.1f/s, achieved %.1f/s, done %.1f/s, peak %d in flight, lateness p50 %.3f p99 %.3f max %.3f ms, %d cap-delayed",
				arrival, rate, ol.ScheduledRate, ol.AchievedRate, ol.CompletionRate, ol.InFlightPeak, ol.SendLatenessMs.P50, ol.SendLatenessMs.P99, ol.SendLatenessMs.Max, ol.CapDelayedSends)
			if d := math.Abs(ol.AchievedRate/ol.ScheduledRate - 1); d > 0.02 {
				t.Errorf("achieved %.1f/s is %.2f %% off the schedule's %.1f/s", ol.AchievedRate, 100*d, ol.ScheduledRate)
			}
			if d := math.Abs(ol.AchievedRate/rate - 1); d > 0.02+draw {
				t.Errorf("achieved %.1f/s is %.2f %% off the asked %.0f/s, past %.2f %%", ol.AchievedRate, 100*d, rate, 100*(0.02+draw))
			}
			if !ol.RateMet || ol.InFlightPeak > 16 {
				t.Errorf("rate met %v (%s), peak %d in flight with a cap of 16", ol.RateMet, ol.RateShort, ol.InFlightPeak)
			}
		})
	}
}

// TestRateShortWhenTheServerCannotKeepUp: a server that takes at least 140 ms a request,
// capped at 2 in flight, serves at most 14.3 requests/s; asked for 40/s, the point sends at
// that pace or slower (the cap holds every later send back), so it is rate_short — more than
// 5 % below its schedule — and says the cap was hit. Its achieved rate counts from the first
// send: the second goes out 25 ms later (a slot is free), each later one when a slot frees, so
// send 2k+1 is at least 140k + 25 ms and the 29 gaps to send 29 span at least 1,985 ms.
func TestRateShortWhenTheServerCannotKeepUp(t *testing.T) {
	srv := &sseServer{ttft: 100 * time.Millisecond, gap: 10 * time.Millisecond, tokens: 5}
	_, p := point(t, srv, loadgen.Config{Requests: 30, Concurrency: 2, Rate: 40, Arrival: loadgen.ArrivalConstant})
	ol := p.OpenLoop
	t.Logf("%s", stats.OpenLoopLine(p))
	most := 29 / (0.025 + 14*0.140) // 14.6/s
	if ol.AchievedRate > most || ol.RateMet || ol.RateShortfallPct < 100*(1-most/40) {
		t.Errorf("achieved %.1f/s of 40 asked, shortfall %.1f %%, met %v: want at most %.1f/s, rate_short", ol.AchievedRate, ol.RateShortfallPct, ol.RateMet, most)
	}
	if ol.CapDelayedSends < 30-2-2 || ol.InFlightPeak != 2 {
		t.Errorf("%d sends cap-delayed, peak %d in flight: want nearly all held back by the cap of 2", ol.CapDelayedSends, ol.InFlightPeak)
	}
	if want := fmt.Sprintf("cap hit: %d sends of 30 waited for one of 2 in-flight slots", ol.CapDelayedSends); len(ol.RateShort) < len(want) || ol.RateShort[:len(want)] != want {
		t.Errorf("rate_short %q, want it to start %q", ol.RateShort, want)
	}
}

// The deterministic simulator places its records on its own virtual clock: an open-loop point
// against it carries no wall-clock schedule (it would make every request look seconds late).
func TestVirtualRecordsCarryNoSchedule(t *testing.T) {
	s := &Session{Source: exactSource{}, Model: "exact", Endpoint: endpoint.Resolved{
		Virtual: func(cell, phase string, concurrency, index, in, out int) schema.RequestRecord {
			return schema.RequestRecord{Phase: phase, StartNs: 1e9 + int64(index), FirstTokenNs: 2e9, LastContentNs: 3e9, EndNs: 3e9, Status: 200}
		}}}
	recs, err := s.Load(context.Background(), PhaseProfiling, loadgen.Config{Requests: 8, Concurrency: 1, Rate: 1000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.ScheduledNs != 0 || r.CapDelayed {
			t.Errorf("virtual request %d: scheduled %d, cap_delayed %v; want neither", r.Index, r.ScheduledNs, r.CapDelayed)
		}
	}
}

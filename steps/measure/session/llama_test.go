package session

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/stats"
	"github.com/perfdag/perfdag/steps/measure/workload"
	"github.com/perfdag/perfdag/steps/testkit"
)

// llamaSource asks for 16 answer tokens on a short prompt.
type llamaSource struct{}

func (llamaSource) Prompt(i int) (workload.Prompt, error) {
	return workload.Prompt{Text: "Tell me about the number " + strconv.Itoa(i), InputTokens: 8, OutputTokens: 16}, nil
}
func (llamaSource) Len() int { return 0 }

// TestRealLlamaServerAchievesAskedRates (issue 29 must-show): against the real llama-server
// (4 slots), open-loop points at 15 % and 30 % of its measured capacity (a closed loop at c4
// first; on a shared machine the server's pace varies by half and more within a minute, so
// "below saturation" keeps a wide margin) capped at 64 in flight send at their asked rate: constant arrivals within 2 % of it, and a Poisson
// draw within 2 % of its own schedule, the draw itself within 3/√(n−1) of the asked rate (the
// count of a Poisson process over a window has sd √n). Each point spans about 20 s, so one
// late send on a busy machine moves its rate by a fraction of a percent; none falls short.
func TestRealLlamaServerAchievesAskedRates(t *testing.T) {
	if testing.Short() {
		t.Skip("runs open-loop points for about a minute against a real llama-server")
	}
	base := testkit.LlamaServer(t)
	cl, err := openai.New(openai.Options{BaseURL: base, Timeout: 60 * time.Second, DeferCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{Client: cl, Source: llamaSource{}, Model: testkit.LlamaAlias}
	t.Cleanup(s.Close)
	load := func(cfg loadgen.Config) schema.Point {
		t.Helper()
		recs, err := s.Load(context.Background(), PhaseProfiling, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := stats.Compute(recs, stats.Options{Concurrency: cfg.Concurrency, RequestRate: cfg.Rate, Arrival: cfg.Arrival, TokenBasis: schema.TokenBasisServer})
		if p.ErrorCount != 0 || p.RequestCount != cfg.Requests {
			t.Fatalf("%+v: %d/%d valid, errors %v", cfg, p.RequestCount, cfg.Requests, p.ErrorsByClass)
		}
		return p
	}
	capacity := load(loadgen.Config{Requests: 160, Concurrency: 4}).RequestThroughput
	t.Logf("closed loop c4: %.1f requests/s", capacity)
	const span = 20.0 // seconds a point's schedule spans
	for _, tc := range []struct {
		share   float64
		arrival string
	}{{0.15, loadgen.ArrivalConstant}, {0.3, loadgen.ArrivalConstant}, {0.3, loadgen.ArrivalPoisson}} {
		rate := math.Round(tc.share*capacity*10) / 10
		n := int(rate*span) + 1
		p := load(loadgen.Config{Requests: n, Concurrency: 64, Rate: rate, Arrival: tc.arrival, Seed: 29})
		ol := p.OpenLoop
		draw := 0.0
		if tc.arrival == loadgen.ArrivalPoisson {
			draw = 3 / math.Sqrt(float64(n-1))
		}
		t.Logf("%s at %.0f %% of capacity: %d sends, achieved %.4f/s against %.4f/s scheduled (%+.2f %%) and %.1f/s asked (%+.2f %%); %s", tc.arrival, 100*tc.share,
			n, ol.AchievedRate, ol.ScheduledRate, 100*(ol.AchievedRate/ol.ScheduledRate-1), rate, 100*(ol.AchievedRate/rate-1), stats.OpenLoopLine(p))
		if d := math.Abs(ol.ScheduledRate/rate - 1); d > draw+1e-9 {
			t.Errorf("%s %.1f/s: the schedule's own rate %.2f/s is %.2f %% off, past %.2f %%", tc.arrival, rate, ol.ScheduledRate, 100*d, 100*draw)
		}
		if d := math.Abs(ol.AchievedRate/ol.ScheduledRate - 1); d > 0.02 {
			t.Errorf("%s %.1f/s: achieved %.2f/s, %.2f %% off its schedule's %.2f/s", tc.arrival, rate, ol.AchievedRate, 100*d, ol.ScheduledRate)
		}
		if !ol.RateMet {
			t.Errorf("%s %.1f/s: rate_short below saturation: %s", tc.arrival, rate, ol.RateShort)
		}
	}
}

package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/endpoint"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/stats"
	"github.com/perfdag/perfdag/steps/sim"
)

// runAgainst drives n requests at concurrency c through the client (tagged with their
// index as X-Request-ID) and returns the records and any progress lines printed.
func runAgainst(t *testing.T, cl *openai.Client, n, c, maxTokens int, log *bytes.Buffer) []schema.RequestRecord {
	t.Helper()
	send := func(ctx context.Context, i int) schema.RequestRecord {
		body := chatBody(t, "fault probe "+strconv.Itoa(i), map[string]any{"max_tokens": maxTokens, "min_tokens": maxTokens, "ignore_eos": true})
		return cl.Stream(ctx, openai.Request{Index: i, Phase: stats.PhaseProfiling, ID: strconv.Itoa(i), Body: body}).Record
	}
	progress := func(p loadgen.Progress) {
		fmt.Fprintf(log, "%d/%d done, %d errors, TTFT p50 %.1f ms\n", p.Done, p.Total, p.Errors, p.TTFTP50Ms)
	}
	recs, err := loadgen.Run(context.Background(), loadgen.Config{Requests: n, Concurrency: c, Every: time.Millisecond}, send, progress)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestFaults(t *testing.T) {
	const env, secret = "PERFDAG_TEST_SIM_KEY", "sk-sim-secret-4242"
	t.Setenv(env, secret)
	// Far above a normal request (about 15 ms), so only injected stalls ever time out, even
	// on a loaded machine or under the race detector (a CI run at load 20 saw a valid request
	// of 64 at once pass 1 s); 64 requests at once get more room. Stalls time out together,
	// so the cost is about one timeout per case.
	timeouts := map[int]time.Duration{1: 2 * time.Second, 64: 8 * time.Second}
	modes := []struct {
		name   string
		faults schema.SimFaults
	}{
		{sim.FaultHTTP500, schema.SimFaults{HTTP500: 0.3}},
		{sim.FaultHTTP429, schema.SimFaults{HTTP429: 0.3}},
		{sim.FaultDrop, schema.SimFaults{Drop: 0.3}},
		{sim.FaultStall, schema.SimFaults{Stall: 0.3}},
		{sim.FaultMalformed, schema.SimFaults{Malformed: 0.3}},
		{sim.FaultSSEError, schema.SimFaults{SSEError: 0.3}},
		{sim.FaultInBand, schema.SimFaults{InBand: 0.3}},
		{"all mixed", schema.SimFaults{HTTP500: .06, HTTP429: .06, Drop: .06, Stall: .06, Malformed: .06, SSEError: .06, InBand: .06}},
	}
	for _, conc := range []int{1, 64} {
		for _, m := range modes {
			t.Run(fmt.Sprintf("%s/c%d", m.name, conc), func(t *testing.T) {
				timeout := timeouts[conc]
				n := 10
				if conc > 1 {
					n = 128
				}
				s := start(t, schema.SimConfig{Seed: int64(conc), TTFTMs: 3, TPOTMs: 1, PrefillMsPer1K: -1, Faults: m.faults})
				cl, err := openai.New(openai.Options{BaseURL: s.URL(), Timeout: timeout, APIKey: endpoint.APIKey(&schema.Endpoint{APIKeyEnv: env})})
				if err != nil {
					t.Fatal(err)
				}
				defer cl.Close()
				var log bytes.Buffer
				recs := runAgainst(t, cl, n, conc, 8, &log)

				// A stalled handler records its truth once it sees the client leave.
				waitFor(t, "every request's truth", func() bool { return len(s.Served()) == n })
				truth := map[string]sim.Served{}
				for _, sv := range s.Served() {
					truth[sv.RequestID] = sv
				}
				injected, measured := map[string]int{}, map[string]int{}
				valid := 0
				for _, r := range recs {
					sv, ok := truth[strconv.Itoa(r.Index)]
					if !ok {
						t.Fatalf("request %d never reached the simulator", r.Index)
					}
					if want := sim.ExpectedClass(sv.Fault); r.ErrorClass != want {
						t.Errorf("request %d met %q: classed %q (%s), want %q", r.Index, sv.Fault, r.ErrorClass, r.Error, want)
					}
					if d := time.Duration(r.EndNs - r.StartNs); d > 2*timeout {
						t.Errorf("request %d took %v: past its %v timeout", r.Index, d, timeout)
					}
					if sv.Fault != "" {
						injected[sim.ExpectedClass(sv.Fault)]++
					}
					if r.ErrorClass != "" {
						measured[r.ErrorClass]++
					} else {
						valid++
					}
					line, _ := json.Marshal(r)
					if strings.Contains(string(line), secret) {
						t.Fatalf("the API key leaked into record %d", r.Index)
					}
				}
				if strings.Contains(log.String(), secret) {
					t.Fatal("the API key leaked into a progress line")
				}
				p := stats.Compute(recs, stats.Options{Concurrency: conc})
				if fmt.Sprint(p.ErrorsByClass) != fmt.Sprint(injected) || fmt.Sprint(measured) != fmt.Sprint(injected) {
					t.Errorf("errors by class %v (records %v), injected %v", p.ErrorsByClass, measured, injected)
				}
				if len(injected) == 0 {
					t.Fatalf("the seed injected no fault: the test proves nothing")
				}
				if p.Status != "partial" || p.RequestCount != valid || p.TTFT.Count != valid || p.OSL.Count != valid || p.OSL.Min != 8 || p.OSL.Max != 8 {
					t.Errorf("point status %q, %d valid (TTFT over %d, OSL %v..%v), want partial over the %d valid requests of 8 tokens",
						p.Status, p.RequestCount, p.TTFT.Count, p.OSL.Min, p.OSL.Max, valid)
				}
			})
		}
	}
}

func TestReasoningCoverage(t *testing.T) {
	// Half the requests reason through their whole budget (8 tokens) and never answer; the
	// others reason 4 tokens then answer 4. TTFT is the first reasoning token; TTFO, over the
	// answered half only, is the first answer token, 4 messages later.
	s := start(t, schema.SimConfig{TTFTMs: 20, TPOTMs: 10, PrefillMsPer1K: -1, BatchTPOTMs: -1,
		Reasoning: true, ReasoningTokens: 4, UnansweredFraction: 0.5})
	cl := client(t, s, 10*time.Second)
	var log bytes.Buffer
	recs := runAgainst(t, cl, 20, 4, 8, &log)
	p := stats.Compute(recs, stats.Options{Concurrency: 4, ReasoningModel: true})
	if p.Status != "ok" || p.RequestCount != 20 {
		t.Fatalf("status %s, %d valid: %v", p.Status, p.RequestCount, p.ErrorsByClass)
	}
	if p.TTFOCoverage != 0.5 || p.TTFO.Count != 10 || p.TTFT.Count != 20 {
		t.Fatalf("coverage %v over %d answered of %d, want 0.5 = 10 / 20", p.TTFOCoverage, p.TTFO.Count, p.TTFT.Count)
	}
	var sum float64
	for _, r := range recs {
		if r.FirstOutputNs != 0 {
			sum += float64(r.FirstOutputNs-r.StartNs) / 1e6
		}
	}
	if math.Abs(p.TTFO.Avg-sum/10) > 1e-9 {
		t.Errorf("TTFO avg %v, want the mean over the answered requests %v", p.TTFO.Avg, sum/10)
	}
	// Which message each stamp belongs to, against what the simulator sent (no timing
	// tolerance: a loaded machine delays stamps, it does not move them to other messages).
	// TTFT is the first message's stamp, the first reasoning token, never before the
	// simulator began writing it; TTFO is the stamp of the message after the reasoning tokens.
	truth := map[string]sim.Served{}
	for _, sv := range s.Served() {
		truth[sv.RequestID] = sv
	}
	for _, r := range recs {
		sv, ok := truth[strconv.Itoa(r.Index)]
		if !ok || len(sv.SentNs) != 8 || len(r.ChunkNs) != len(sv.SentNs) {
			t.Fatalf("request %d: %d message stamps, the simulator sent %d messages (truth found: %v)", r.Index, len(r.ChunkNs), len(sv.SentNs), ok)
		}
		if r.FirstTokenNs != r.ChunkNs[0] || r.FirstTokenNs < sv.SentNs[0] {
			t.Errorf("request %d: first token stamped %d, want the first reasoning message's stamp %d, not before its send %d", r.Index, r.FirstTokenNs, r.ChunkNs[0], sv.SentNs[0])
		}
		switch {
		case sv.Unanswered && r.FirstOutputNs != 0:
			t.Errorf("request %d reasoned through its budget but has a first output at %d", r.Index, r.FirstOutputNs)
		case !sv.Unanswered && (sv.ReasoningTokens != 4 || r.FirstOutputNs != r.ChunkNs[sv.ReasoningTokens] || r.FirstOutputNs < sv.AnswerSentNs):
			t.Errorf("request %d: first output stamped %d, want message %d's stamp of %v (the first answer, sent at %d)", r.Index, r.FirstOutputNs, sv.ReasoningTokens, r.ChunkNs, sv.AnswerSentNs)
		}
	}
	if p.ReasoningField != "reasoning_content" || !p.Reasoning || p.ReasoningParserSuspect {
		t.Errorf("reasoning field %q, reasoning %v, parser suspect %v", p.ReasoningField, p.Reasoning, p.ReasoningParserSuspect)
	}
	if p.OSL.Avg != 8 {
		t.Errorf("OSL avg %v, want 8: reasoning tokens count in OSL", p.OSL.Avg)
	}
}

package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/sse"
	"github.com/perfdag/perfdag/steps/measure/stats"
	"github.com/perfdag/perfdag/steps/sim"
)

// truth is what a server really did for one request: the send time of every content or
// reasoning chunk, of the first answer chunk, and the completion tokens it reported.
type truth struct {
	Sent       []int64       `json:"sent"`
	Answer     int64         `json:"answer"`
	Completion int           `json:"completion"`
	TTFT       time.Duration `json:"ttft"` // injected: planned first-token time − arrival
	Arrived    int64         `json:"arrived"`
}

// minimal is a deliberately small streaming server, independent of the simulator: a role
// chunk at once, then n one-token chunks due at arrival + ttft + k·itl (absolute deadlines),
// finish, usage and [DONE]. It records its sends by X-Request-ID.
type minimal struct {
	ttft, itl time.Duration
	n         int
	mu        sync.Mutex
	truths    map[string]truth
}

func (m *minimal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t0 := sse.Now()
	if r.URL.Path == "/truth" {
		m.mu.Lock()
		defer m.mu.Unlock()
		_ = json.NewEncoder(w).Encode(m.truths)
		return
	}
	var req struct{}
	_ = json.NewDecoder(r.Body).Decode(&req)
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	write := func(payload string) int64 {
		ns := sse.Now()
		_, _ = w.Write([]byte("data: " + payload + "\n\n"))
		_ = rc.Flush()
		return ns
	}
	write(roleChunk)
	tr := truth{Completion: m.n, TTFT: m.ttft, Arrived: t0}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for k := range m.n {
		due := t0 + int64(m.ttft) + int64(k)*int64(m.itl)
		if d := time.Duration(due - sse.Now()); d > 0 {
			timer.Reset(d)
			<-timer.C
		}
		tr.Sent = append(tr.Sent, write(contentChunk(" the")))
	}
	tr.Answer = tr.Sent[0]
	write(finishChunk)
	write(usageChunk(1, m.n))
	write(doneMsg)
	m.mu.Lock()
	m.truths[r.Header.Get("X-Request-ID")] = tr
	m.mu.Unlock()
}

// runPoint drives n requests at concurrency c through the client, after a warm-up of c
// requests that opens the connections (as a real run's warm-up does, so no measured request
// pays for a TCP handshake). Request IDs are prefix + index.
func runPoint(t *testing.T, base string, c, n, maxTokens int, model, prefix string) []schema.RequestRecord {
	t.Helper()
	cl := newClient(t, openai.Options{BaseURL: base, Timeout: 30 * time.Second})
	sender := func(phase, prefix string) loadgen.Send {
		return func(ctx context.Context, i int) schema.RequestRecord {
			b, _ := json.Marshal(map[string]any{
				"model": model, "messages": []map[string]string{{"role": "user", "content": "request " + strconv.Itoa(i)}},
				"max_tokens": maxTokens, "min_tokens": maxTokens, "ignore_eos": true,
			})
			return cl.Stream(ctx, openai.Request{Index: i, Phase: phase, ID: prefix + strconv.Itoa(i), Body: b}).Record
		}
	}
	if _, err := loadgen.Run(context.Background(), loadgen.Config{Requests: c, Concurrency: c}, sender("warmup", prefix+"w"), nil); err != nil {
		t.Fatal(err)
	}
	recs, err := loadgen.Run(context.Background(), loadgen.Config{Requests: n, Concurrency: c}, sender(stats.PhaseProfiling, prefix), nil)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// pAbs is the q-th percentile of |v| (linear interpolation).
func pAbs(v []float64, q float64) float64 {
	a := make([]float64, len(v))
	for i, x := range v {
		a[i] = math.Abs(x)
	}
	slices.Sort(a)
	return stats.Percentile(a, q)
}

// fidelity compares every measured metric with the same metric computed from the server's
// real send times and returns the p99 absolute errors in ms. Token counts must equal the
// server's usage exactly. It also reports how far the first token came after the time the
// server planned for it (the server's own timer lateness plus the network path).
func fidelity(t *testing.T, recs []schema.RequestRecord, truths map[string]truth, prefix string) (p99, p50 map[string]float64, injected float64) {
	t.Helper()
	var dTTFT, dTTFO, dITL, dLat, dInjected []float64
	for _, r := range recs {
		if r.ErrorClass != "" {
			t.Fatalf("request %d failed: %s: %s", r.Index, r.ErrorClass, r.Error)
		}
		tr, ok := truths[prefix+strconv.Itoa(r.Index)]
		if !ok {
			t.Fatalf("request %d: the server has no truth for it", r.Index)
		}
		osl := r.OutputTokens + r.ReasoningTok
		if r.UsageComplete == nil || osl != *r.UsageComplete || osl != tr.Completion || r.UsageMismatch {
			t.Fatalf("request %d: client counted %d tokens, usage says %v, server sent %d", r.Index, osl, r.UsageComplete, tr.Completion)
		}
		first, last := tr.Sent[0], tr.Sent[len(tr.Sent)-1]
		for _, d := range []int64{r.FirstTokenNs - first, r.LastContentNs - last} {
			if d < 0 {
				t.Fatalf("request %d: a message was stamped %v before the server sent it", r.Index, time.Duration(-d))
			}
		}
		dTTFT = append(dTTFT, float64(r.FirstTokenNs-first)/1e6)
		dLat = append(dLat, float64(r.LastContentNs-last)/1e6)
		if tr.Answer != 0 {
			dTTFO = append(dTTFO, float64(r.FirstOutputNs-tr.Answer)/1e6)
		}
		if osl >= 2 {
			measured := float64(r.LastContentNs-r.FirstTokenNs) / float64(osl-1)
			real := float64(last-first) / float64(osl-1)
			dITL = append(dITL, (measured-real)/1e6)
		}
		dInjected = append(dInjected, float64(r.FirstTokenNs-(tr.Arrived+int64(tr.TTFT)))/1e6)
	}
	p99 = map[string]float64{"ttft": pAbs(dTTFT, 99), "ttfo": pAbs(dTTFO, 99), "itl": pAbs(dITL, 99), "latency": pAbs(dLat, 99)}
	p50 = map[string]float64{"ttft": pAbs(dTTFT, 50), "ttfo": pAbs(dTTFO, 50), "itl": pAbs(dITL, 50), "latency": pAbs(dLat, 50)}
	return p99, p50, pAbs(dInjected, 99)
}

// getTruth reads a child server's truth endpoint.
func getTruth(t *testing.T, url string, into any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("decode %s: %v", url, err)
	}
}

// quietMs is the machine's own wake-up lateness (p99, measured by the probe process) under
// which a p99 error over 1 ms can only be the client's fault.
const quietMs = 0.5

// probeP99 reads the probe's p99 wake-up lateness since its previous read.
func probeP99(t *testing.T, probeURL string) float64 {
	t.Helper()
	resp, err := http.Get(probeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v float64
	if _, err := fmt.Fscan(resp.Body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// checkFidelity runs a point up to three times. Every p99 error must be within 1 ms in one
// attempt. The servers share a small machine with other programs, so a probe process
// measures the machine's own wake-up lateness during each attempt: an attempt over 1 ms
// while the machine was quiet fails the test at once; if the machine was loaded in every
// attempt, the p99 bound cannot be judged and only the medians (which load barely moves, and
// which any stamping bug moves by whole token intervals) must be within 1 ms.
func checkFidelity(t *testing.T, base string, c int, truths func(t *testing.T) map[string]truth) {
	t.Helper()
	probeURL := startChild(t, "probe")
	for attempt := range 3 {
		prefix := fmt.Sprintf("a%d-", attempt)
		probeP99(t, probeURL) // reset
		recs := runPoint(t, base, c, max(2*c, 8), 6, "sim-model", prefix)
		noise := probeP99(t, probeURL)
		p99, p50, injected := fidelity(t, recs, truths(t), prefix)
		t.Logf("attempt %d: p99 |measured − sent| ms %v, p50 %v; first token after its planned time p99 %.3f ms; machine wake-up p99 %.3f ms",
			attempt, p99, p50, injected, noise)
		for name, v := range p50 {
			if v > 1 {
				t.Fatalf("%s: median error %.3f ms: the client mis-stamps, not just a noisy tail", name, v)
			}
		}
		worst := 0.0
		for _, v := range p99 {
			worst = max(worst, v)
		}
		switch {
		case worst <= 1:
			return
		case noise < quietMs:
			t.Fatalf("p99 error %.3f ms over 1 ms while the machine was quiet (wake-up p99 %.3f ms)", worst, noise)
		}
	}
	t.Logf("the machine was loaded in every attempt: p99 ≤ 1 ms not judged; medians within 1 ms")
}

func TestFidelityMinimalServer(t *testing.T) {
	for _, c := range []int{1, 16, 128} {
		t.Run(fmt.Sprintf("c%d", c), func(t *testing.T) {
			base := startChild(t, "minimal:20:10:6")
			checkFidelity(t, base, c, func(t *testing.T) map[string]truth {
				m := map[string]truth{}
				getTruth(t, base+"/truth", &m)
				return m
			})
		})
	}
}

func TestFidelitySimulator(t *testing.T) {
	cfg, _ := json.Marshal(schema.SimConfig{Seed: 1, TTFTMs: 20, TPOTMs: 10, BatchTPOTMs: -1, PrefillMsPer1K: -1})
	for _, c := range []int{1, 16, 128} {
		t.Run(fmt.Sprintf("c%d", c), func(t *testing.T) {
			base := startChild(t, "sim:"+string(cfg))
			checkFidelity(t, base, c, func(t *testing.T) map[string]truth {
				var served []sim.Served
				getTruth(t, base+"/sim/served", &served)
				m := map[string]truth{}
				for _, sv := range served {
					m[sv.RequestID] = truth{Sent: sv.SentNs, Answer: sv.AnswerSentNs, Completion: sv.ReasoningTokens + sv.AnswerTokens,
						TTFT: time.Duration(sv.InjectedTTFTNs), Arrived: sv.ArrivedNs}
				}
				return m
			})
		})
	}
}

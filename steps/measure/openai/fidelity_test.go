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
func runPoint(t testing.TB, base string, c, n, maxTokens int, model, prefix string) []schema.RequestRecord {
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

// fidelityErrors compares every measured metric with the same metric computed from the
// server's real send times and returns the signed errors in ms by metric ("ttft", "ttfo",
// "itl", "latency", and "injected": how far the first token came after the time the server
// planned for it, i.e. the server's own timer lateness plus the network path). Token counts
// must equal the server's usage exactly, and no message may be stamped before it was sent.
func fidelityErrors(t testing.TB, recs []schema.RequestRecord, truths map[string]truth, prefix string) map[string][]float64 {
	t.Helper()
	errs := map[string][]float64{}
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
		errs["ttft"] = append(errs["ttft"], float64(r.FirstTokenNs-first)/1e6)
		errs["latency"] = append(errs["latency"], float64(r.LastContentNs-last)/1e6)
		if tr.Answer != 0 {
			errs["ttfo"] = append(errs["ttfo"], float64(r.FirstOutputNs-tr.Answer)/1e6)
		}
		if osl >= 2 {
			measured := float64(r.LastContentNs-r.FirstTokenNs) / float64(osl-1)
			real := float64(last-first) / float64(osl-1)
			errs["itl"] = append(errs["itl"], (measured-real)/1e6)
		}
		errs["injected"] = append(errs["injected"], float64(r.FirstTokenNs-(tr.Arrived+int64(tr.TTFT)))/1e6)
	}
	return errs
}

// fidelity summarizes fidelityErrors: the p99 and p50 absolute errors in ms by metric, and
// the p99 of how late the first token came after its planned time.
func fidelity(t testing.TB, recs []schema.RequestRecord, truths map[string]truth, prefix string) (p99, p50 map[string]float64, injected float64) {
	t.Helper()
	errs := fidelityErrors(t, recs, truths, prefix)
	p99, p50 = map[string]float64{}, map[string]float64{}
	for _, name := range []string{"ttft", "ttfo", "itl", "latency"} {
		if v := errs[name]; len(v) > 0 {
			p99[name], p50[name] = pAbs(v, 99), pAbs(v, 50)
		}
	}
	return p99, p50, pAbs(errs["injected"], 99)
}

// getTruth reads a child server's truth endpoint.
func getTruth(t testing.TB, url string, into any) {
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

// probeP99 reads the probe's p99 wake-up lateness since its previous read.
func probeP99(t testing.TB, probeURL string) float64 {
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

// plannedGap is the token interval both test servers are configured with (ITL, TPOT).
const plannedGap = 10 * time.Millisecond

// checkFidelity runs one point and checks what stamping must get right whatever the load,
// all of it structural: token counts equal the server's usage; every content or reasoning
// message has a stamp of its own (as many as the server sent, in order, the first and last
// being TTFT's and the latency's, the first answer chunk TTFO's); and no message is stamped
// before the server began writing it (both ends checked in fidelityErrors, every chunk
// here). Kernel receive stamps are taken as the write enqueues the data, so a stamp given to
// the wrong chunk (the role chunk counted as the first token, a neighbour's read) falls
// before that chunk's write began and fails. How small the errors are is a performance
// figure, not a pass/fail fact on a loaded machine (a client behind on 128 streams reads
// several chunks at once and rightly stamps them with the last one's arrival):
// BenchmarkFidelity reports it, and the figures are logged here.
func checkFidelity(t *testing.T, base string, c int, truths func(t testing.TB) map[string]truth) {
	t.Helper()
	const prefix = "f-"
	recs := runPoint(t, base, c, max(2*c, 8), 6, "sim-model", prefix)
	tr := truths(t)
	p99, p50, injected := fidelity(t, recs, tr, prefix)
	t.Logf("p99 |measured − sent| ms %v, p50 %v; first token after its planned time p99 %.3f ms", p99, p50, injected)
	for _, r := range recs {
		checkChunkStamps(t, r, tr[prefix+strconv.Itoa(r.Index)])
	}
}

// checkChunkStamps checks one record's per-message stamps against the server's sends.
func checkChunkStamps(t *testing.T, r schema.RequestRecord, tr truth) {
	t.Helper()
	if len(r.ChunkNs) != len(tr.Sent) {
		t.Fatalf("request %d: %d message stamps, the server sent %d messages", r.Index, len(r.ChunkNs), len(tr.Sent))
	}
	last := len(tr.Sent) - 1
	if r.FirstTokenNs != r.ChunkNs[0] || r.LastContentNs != r.ChunkNs[last] {
		t.Errorf("request %d: first token %d and last content %d are not the first and last message stamps %v", r.Index, r.FirstTokenNs, r.LastContentNs, r.ChunkNs)
	}
	if a := slices.Index(tr.Sent, tr.Answer); tr.Answer != 0 && (a < 0 || r.FirstOutputNs != r.ChunkNs[a]) {
		t.Errorf("request %d: first output %d is not the stamp of the first answer message (%d of %v)", r.Index, r.FirstOutputNs, a, r.ChunkNs)
	}
	for k, at := range r.ChunkNs {
		if k > 0 && at < r.ChunkNs[k-1] {
			t.Errorf("request %d: message %d stamped %v before message %d", r.Index, k, time.Duration(r.ChunkNs[k-1]-at), k-1)
		}
		if at < tr.Sent[k] {
			t.Errorf("request %d: message %d stamped %v before the server began writing it: the stamp belongs to another message", r.Index, k, time.Duration(tr.Sent[k]-at))
		}
	}
}

// minimalChild starts the minimal server (TTFT 20 ms, ITL plannedGap, 6 tokens) in a child
// process and returns its URL and how to read its truths.
func minimalChild(t testing.TB) (string, func(testing.TB) map[string]truth) {
	base := startChild(t, fmt.Sprintf("minimal:20:%d:6", plannedGap.Milliseconds()))
	return base, func(t testing.TB) map[string]truth {
		m := map[string]truth{}
		getTruth(t, base+"/truth", &m)
		return m
	}
}

// simChild starts the simulator (TTFT 20 ms, TPOT plannedGap) in a child process and returns
// its URL and how to read its truths.
func simChild(t testing.TB) (string, func(testing.TB) map[string]truth) {
	cfg, _ := json.Marshal(schema.SimConfig{Seed: 1, TTFTMs: 20, TPOTMs: float64(plannedGap.Milliseconds()), BatchTPOTMs: -1, PrefillMsPer1K: -1})
	base := startChild(t, "sim:"+string(cfg))
	return base, func(t testing.TB) map[string]truth {
		var served []sim.Served
		getTruth(t, base+"/sim/served", &served)
		m := map[string]truth{}
		for _, sv := range served {
			m[sv.RequestID] = truth{Sent: sv.SentNs, Answer: sv.AnswerSentNs, Completion: sv.ReasoningTokens + sv.AnswerTokens,
				TTFT: time.Duration(sv.InjectedTTFTNs), Arrived: sv.ArrivedNs}
		}
		return m
	}
}

func TestFidelityMinimalServer(t *testing.T) {
	for _, c := range []int{1, 16, 128} {
		t.Run(fmt.Sprintf("c%d", c), func(t *testing.T) {
			base, truths := minimalChild(t)
			checkFidelity(t, base, c, truths)
		})
	}
}

func TestFidelitySimulator(t *testing.T) {
	for _, c := range []int{1, 16, 128} {
		t.Run(fmt.Sprintf("c%d", c), func(t *testing.T) {
			base, truths := simChild(t)
			checkFidelity(t, base, c, truths)
		})
	}
}

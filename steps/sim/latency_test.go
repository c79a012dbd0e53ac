package sim_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/sim"
)

// served runs one streaming request and returns the simulator's truth for it.
func served(t *testing.T, s *sim.Server, cl *openai.Client, id, prompt string, maxTokens int) sim.Served {
	t.Helper()
	r := cl.Stream(context.Background(), openai.Request{ID: id, Body: chatBody(t, prompt, map[string]any{"max_tokens": maxTokens, "ignore_eos": true})}).Record
	if r.ErrorClass != "" {
		t.Fatalf("%s: %s: %s", id, r.ErrorClass, r.Error)
	}
	return truthOf(t, s, id)
}

func truthOf(t *testing.T, s *sim.Server, id string) sim.Served {
	t.Helper()
	for _, sv := range s.Served() {
		if sv.RequestID == id {
			return sv
		}
	}
	t.Fatalf("no truth for %s", id)
	return sim.Served{}
}

func TestTTFTModel(t *testing.T) {
	// TTFT = (ttft 10 + prefill 20 ms per 1k × 1000 prompt tokens / 1000) × slowdown, from
	// admission; the prompt is 1,000 one-token words.
	prompt := strings.Repeat(" the", 1000)
	cases := []struct {
		name     string
		cfg      schema.SimConfig
		wantTTFT time.Duration
	}{
		{"ttft + prefill", schema.SimConfig{TTFTMs: 10, PrefillMsPer1K: 20, TPOTMs: 1}, 30 * time.Millisecond},
		{"slowdown 2 doubles it", schema.SimConfig{TTFTMs: 10, PrefillMsPer1K: 20, TPOTMs: 1, Slowdown: 2}, 60 * time.Millisecond},
		{"no prefill term", schema.SimConfig{TTFTMs: 10, PrefillMsPer1K: -1, TPOTMs: 1}, 10 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := start(t, c.cfg)
			sv := served(t, s, client(t, s, 10*time.Second), "x", prompt, 2)
			if sv.PromptTokens != 1000 {
				t.Fatalf("prompt tokens %d, want 1000", sv.PromptTokens)
			}
			queue := time.Duration(sv.AdmittedNs - sv.ArrivedNs)
			if got := time.Duration(sv.InjectedTTFTNs) - queue; got != c.wantTTFT {
				t.Errorf("injected TTFT after admission = %v, want %v", got, c.wantTTFT)
			}
			if late := time.Duration(sv.SentNs[0] - sv.DeadlineNs[0]); late < 0 {
				t.Errorf("first chunk sent %v before its deadline", -late)
			}
		})
	}
}

func TestQueueingAndBatchSlowdown(t *testing.T) {
	// max_batch 1: the second of two simultaneous requests waits for the first to finish,
	// and its injected TTFT includes that wait.
	s := start(t, schema.SimConfig{TTFTMs: 5, PrefillMsPer1K: -1, TPOTMs: 5, BatchTPOTMs: -1, MaxBatch: 1})
	cl := client(t, s, 10*time.Second)
	var wg sync.WaitGroup
	for _, id := range []string{"a", "b"} {
		wg.Go(func() { served(t, s, cl, id, "q", 4) })
	}
	wg.Wait()
	a, b := truthOf(t, s, "a"), truthOf(t, s, "b")
	if a.AdmittedNs > b.AdmittedNs {
		a, b = b, a
	}
	if b.AdmittedNs < a.SentNs[len(a.SentNs)-1] {
		t.Errorf("second request admitted before the first finished")
	}
	// The second waited for the first (20 ms of service: 5 ms TTFT + 3 × 5 ms tokens) and
	// its injected TTFT is that wait plus its own 5 ms.
	wait := time.Duration(b.AdmittedNs - b.ArrivedNs)
	if b.ArrivedNs < a.SentNs[0] && wait < time.Duration(a.SentNs[len(a.SentNs)-1]-b.ArrivedNs) {
		t.Errorf("second request waited %v, less than the first's remaining service", wait)
	}
	if got := time.Duration(b.InjectedTTFTNs); got != wait+5*time.Millisecond {
		t.Errorf("queued request's injected TTFT = %v, want its wait %v + 5 ms", got, wait)
	}

	// batch_tpot 2 ms: while two requests run, each token takes 5 + 2 × (2 − 1) = 7 ms.
	s2 := start(t, schema.SimConfig{TTFTMs: 5, PrefillMsPer1K: -1, TPOTMs: 5, BatchTPOTMs: 2, MaxBatch: 8})
	cl2 := client(t, s2, 10*time.Second)
	for _, id := range []string{"a", "b"} {
		wg.Go(func() { served(t, s2, cl2, id, "q", 6) })
	}
	wg.Wait()
	seen7 := false
	for _, d := range truthOf(t, s2, "a").TokenDelayNs {
		if d != int64(5*time.Millisecond) && d != int64(7*time.Millisecond) {
			t.Errorf("token delay %v, want 5 ms (alone) or 7 ms (two running)", time.Duration(d))
		}
		seen7 = seen7 || d == int64(7*time.Millisecond)
	}
	if !seen7 {
		t.Errorf("no token took 7 ms although two requests ran together")
	}
}

func TestDeadlinesDoNotDrift(t *testing.T) {
	// 60 tokens at 2 ms: chunk k is due at first + k × 2 ms exactly — each deadline is computed
	// from the first, never from the previous send, so wake-up lateness cannot accumulate. How
	// late a chunk actually leaves depends on the machine's load and is only logged: a
	// wall-clock bound here would fail on a busy CI machine without saying anything new.
	s := start(t, schema.SimConfig{TTFTMs: 5, PrefillMsPer1K: -1, TPOTMs: 2, BatchTPOTMs: -1})
	sv := served(t, s, client(t, s, 10*time.Second), "d", "q", 60)
	for k, d := range sv.DeadlineNs {
		if want := sv.DeadlineNs[0] + int64(k)*int64(2*time.Millisecond); d != want {
			t.Fatalf("chunk %d due at +%v, want +%v", k, time.Duration(d-sv.DeadlineNs[0]), time.Duration(want-sv.DeadlineNs[0]))
		}
		if sv.SentNs[k] < d {
			t.Fatalf("chunk %d sent before its deadline", k)
		}
	}
	last := len(sv.SentNs) - 1
	lateness := time.Duration(sv.SentNs[last] - sv.DeadlineNs[last])
	t.Logf("last chunk left %v after its deadline", lateness)
}

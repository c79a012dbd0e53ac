package sim

import (
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/tokens"
)

func mustParams(t *testing.T, cfg schema.SimConfig) *params {
	t.Helper()
	p, err := resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &p
}

func mustVocab(t *testing.T) *vocabulary {
	t.Helper()
	v, err := newVocabulary()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVocabularyIsOneTokenPerWord(t *testing.T) {
	v := mustVocab(t)
	if len(v.words) < 100 {
		t.Fatalf("only %d words", len(v.words))
	}
	joined := strings.Join(v.words, "")
	if got := tokens.Count(joined); got != len(v.words) {
		t.Fatalf("all words joined are %d tokens, want %d", got, len(v.words))
	}
	if strings.Join(v.open, "") != thinkOpen || strings.Join(v.close, "") != thinkClose {
		t.Fatalf("think pieces %q %q do not spell the tags", v.open, v.close)
	}
}

// TestPlanTextCountsExactly checks the property the usage numbers rest on: the client's
// o200k_base count of the joined text equals the planned tokens, in every reasoning mode
// and chunk size.
func TestPlanTextCountsExactly(t *testing.T) {
	v := mustVocab(t)
	cases := []struct {
		name string
		cfg  schema.SimConfig
		req  request
	}{
		{"plain", schema.SimConfig{}, request{budget: 50, ignoreEOS: true}},
		{"plain chunks of 3", schema.SimConfig{ChunkTokens: 3}, request{budget: 50, ignoreEOS: true}},
		{"reasoning_content", schema.SimConfig{Reasoning: true, ReasoningTokens: 7}, request{budget: 30, ignoreEOS: true}},
		{"reasoning field, chunks of 4", schema.SimConfig{Reasoning: true, ReasoningField: "reasoning", ReasoningTokens: 7, ChunkTokens: 4}, request{budget: 30, ignoreEOS: true}},
		{"think inline", schema.SimConfig{Reasoning: true, ReasoningField: "think", ReasoningTokens: 7}, request{budget: 30, ignoreEOS: true}},
		{"think inline, chunks of 5", schema.SimConfig{Reasoning: true, ReasoningField: "think", ReasoningTokens: 7, ChunkTokens: 5}, request{budget: 30, ignoreEOS: true}},
		{"think never answering", schema.SimConfig{Reasoning: true, ReasoningField: "think", UnansweredFraction: 1}, request{budget: 20, ignoreEOS: true}},
		{"early EOS", schema.SimConfig{Seed: 3}, request{budget: 200, minTokens: 5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustParams(t, c.cfg)
			for seq := range uint64(6) {
				pl := makePlan(p, v, seq, c.req)
				var content, reasoning strings.Builder
				n := 0
				for _, pc := range pl.pieces {
					if pc.tokens < 1 || pc.tokens > max(p.chunkTokens, 1) {
						t.Fatalf("chunk of %d tokens with chunk_tokens %d", pc.tokens, p.chunkTokens)
					}
					n += pc.tokens
					if pc.reasoning {
						reasoning.WriteString(pc.text)
					} else {
						content.WriteString(pc.text)
					}
				}
				if n != pl.reasoningN+pl.answerN {
					t.Fatalf("pieces carry %d tokens, plan says %d + %d", n, pl.reasoningN, pl.answerN)
				}
				if got := tokens.Count(content.String()) + tokens.Count(reasoning.String()); got != n {
					t.Fatalf("seq %d: client would count %d tokens, usage says %d", seq, got, n)
				}
				if c.req.ignoreEOS && n != c.req.budget {
					t.Fatalf("ignore_eos: %d tokens, want the budget %d", n, c.req.budget)
				}
				if n < c.req.minTokens || n > c.req.budget {
					t.Fatalf("%d tokens outside [min_tokens %d, budget %d]", n, c.req.minTokens, c.req.budget)
				}
				wantFinish := "stop"
				if n == c.req.budget {
					wantFinish = "length"
				}
				if pl.finish != wantFinish {
					t.Fatalf("finish %q for %d of %d tokens", pl.finish, n, c.req.budget)
				}
			}
		})
	}
}

func TestPlanIsSeededAndEOSVaries(t *testing.T) {
	v := mustVocab(t)
	p := mustParams(t, schema.SimConfig{Seed: 11})
	lengths := map[int]bool{}
	for seq := range uint64(40) {
		a := makePlan(p, v, seq, request{budget: 100})
		b := makePlan(p, v, seq, request{budget: 100})
		if len(a.pieces) != len(b.pieces) || a.pieces[0].text != b.pieces[0].text {
			t.Fatalf("seq %d planned twice differently", seq)
		}
		lengths[a.answerN] = true
	}
	if len(lengths) < 10 {
		t.Errorf("without ignore_eos, 40 requests had only %d distinct lengths: EOS is not varying", len(lengths))
	}
}

func TestPlanUnansweredFractionIsExact(t *testing.T) {
	// floor(N × 0.25) of the first N arrivals never answer: 25 of 100.
	v := mustVocab(t)
	p := mustParams(t, schema.SimConfig{Reasoning: true, ReasoningTokens: 5, UnansweredFraction: 0.25})
	unanswered := 0
	for seq := range uint64(100) {
		pl := makePlan(p, v, seq, request{budget: 20, ignoreEOS: true})
		if pl.unanswered {
			unanswered++
			if pl.answerN != 0 || pl.reasoningN != 20 {
				t.Fatalf("unanswered request: %d answer, %d reasoning; want the whole budget of 20 reasoning", pl.answerN, pl.reasoningN)
			}
		} else if pl.reasoningN != 5 || pl.answerN != 15 {
			t.Fatalf("answered request: %d reasoning + %d answer, want 5 + 15", pl.reasoningN, pl.answerN)
		}
	}
	if unanswered != 25 {
		t.Errorf("unanswered = %d of 100, want 25", unanswered)
	}
}

func TestPlanFaultShares(t *testing.T) {
	// Each of the seven faults at 10 %: over 7,000 seeded draws every share lies within
	// 10 % ± 1.5 points (binomial standard error √(0.1 × 0.9 / 7000) ≈ 0.36 points).
	v := mustVocab(t)
	f := schema.SimFaults{HTTP500: .1, HTTP429: .1, Drop: .1, Stall: .1, Malformed: .1, SSEError: .1, InBand: .1}
	p := mustParams(t, schema.SimConfig{Seed: 5, Faults: f})
	counts := map[string]int{}
	const n = 7000
	for seq := range uint64(n) {
		counts[makePlan(p, v, seq, request{budget: 4, ignoreEOS: true}).fault]++
	}
	for _, name := range []string{FaultHTTP500, FaultHTTP429, FaultDrop, FaultStall, FaultMalformed, FaultSSEError, FaultInBand} {
		if share := float64(counts[name]) / n; share < 0.085 || share > 0.115 {
			t.Errorf("%s share %.3f, want 0.1 ± 0.015", name, share)
		}
		if ExpectedClass(name) == "" {
			t.Errorf("%s has no expected error class", name)
		}
	}
}

func TestResolveRejectsBadConfig(t *testing.T) {
	cases := []struct {
		cfg  schema.SimConfig
		want string
	}{
		{schema.SimConfig{Slowdown: -1}, "sim.slowdown"},
		{schema.SimConfig{ReasoningField: "thoughts"}, "sim.reasoning_field"},
		{schema.SimConfig{UnansweredFraction: 1.5}, "sim.unanswered_fraction"},
		{schema.SimConfig{SpecAcceptRate: -0.1}, "sim.spec_accept_rate"},
		{schema.SimConfig{MaxBatch: -3}, "sim.max_batch"},
		{schema.SimConfig{Faults: schema.SimFaults{Drop: 2}}, "sim.faults.drop"},
		{schema.SimConfig{Faults: schema.SimFaults{Drop: 0.6, Stall: 0.6}}, "add up to 1.200"},
	}
	for _, c := range cases {
		if _, err := resolve(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("resolve(%+v) = %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
	// Defaults, slowdown scaling and "negative means zero".
	p := mustParams(t, schema.SimConfig{Slowdown: 2, BatchTPOTMs: -1})
	if p.ttft != 80e6 || p.tpot != 16e6 || p.prefillPer1K != 16e6 || p.batchTPOT != 0 || p.maxBatch != DefaultMaxBatch {
		t.Errorf("resolved %+v: want ttft 80 ms, tpot 16 ms, prefill 16 ms/1k (defaults × 2), batch 0, max_batch %d", p, DefaultMaxBatch)
	}
}

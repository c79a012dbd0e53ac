package stats

import (
	"testing"

	"github.com/perfdag/perfdag/schema"
)

func ip(v int) *int { return &v }

// basisRecords are two valid requests where the server's counts differ from o200k_base:
// 200 server prompt tokens for 100 asked, 128 completion tokens for 100 (r0) and 90 (r1)
// client tokens; r1 carries llama.cpp timings (as llama.cpp states them: predicted_ms spans the
// 127 gaps from the first token to the last, per-token figures divide it by 128); r2 fails with
// a server message; r3 was truncated.
func basisRecords() []schema.RequestRecord {
	return []schema.RequestRecord{
		{Index: 0, Phase: "profiling", StartNs: at(0), FirstTokenNs: at(100), FirstOutputNs: at(100), LastContentNs: at(1370), EndNs: at(1371),
			InputTokens: 100, OutputTokens: 100, UsagePrompt: ip(200), UsageComplete: ip(128), UsageCached: ip(0), ConnectNs: 2e6},
		{Index: 1, Phase: "profiling", StartNs: at(0), FirstTokenNs: at(100), FirstOutputNs: at(100), LastContentNs: at(1370), EndNs: at(1371),
			InputTokens: 100, OutputTokens: 90, UsagePrompt: ip(200), UsageComplete: ip(128), ConnReused: true,
			Timings:    &schema.ServerTimings{PromptN: 200, PromptMs: 80, PredictedN: 128, PredictedMs: 1270, PredictedPerTokenMs: 1270.0 / 128, PredictedPerSecond: 128 / 1.27},
			Violations: []string{schema.ViolationMultiChoice}},
		{Index: 2, Phase: "profiling", StartNs: at(0), EndNs: at(5), ErrorClass: schema.ErrorContext, ServerMessage: "the request exceeds the available context size"},
		{Index: 3, Phase: "profiling", StartNs: at(0), EndNs: at(5), ErrorClass: schema.ErrorContext, ServerMessage: "the request exceeds the available context size", PromptTruncated: true},
	}
}

func TestTokenBasis(t *testing.T) {
	for _, tc := range []struct {
		name, configured, want string
		osl, itl               float64
	}{
		{"default with usage is server", "", schema.TokenBasisServer, 128, 10},
		{"server", schema.TokenBasisServer, schema.TokenBasisServer, 128, 10},
		{"o200k_base", schema.TokenBasisO200k, schema.TokenBasisO200k, 95, (1270.0/99 + 1270.0/89) / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Compute(basisRecords(), Options{Concurrency: 2, TokenBasis: tc.configured})
			if p.TokenBasis != tc.want {
				t.Fatalf("token_basis = %q, want %q", p.TokenBasis, tc.want)
			}
			if !near(p.MeanOSL, tc.osl) || !near(p.ITL.Avg, tc.itl) {
				t.Errorf("mean OSL %v ITL %v, want %v and %v", p.MeanOSL, p.ITL.Avg, tc.osl, tc.itl)
			}
			if !near(p.MeanISL, 100) || p.ISLReceived == nil || !near(p.ISLReceived.Avg, 200) {
				t.Errorf("asked ISL %v, received %+v: want 100 and 200", p.MeanISL, p.ISLReceived)
			}
		})
	}
	// A request without usage makes the default o200k_base.
	recs := basisRecords()
	recs[1].UsageComplete = nil
	if b := Compute(recs, Options{}).TokenBasis; b != schema.TokenBasisO200k {
		t.Errorf("default basis with a usage-less request = %q, want o200k_base", b)
	}
	// ... and a forced server basis counts it on o200k_base, saying so.
	if p := Compute(recs, Options{TokenBasis: schema.TokenBasisServer}); p.TokenBasisFallbacks != 1 {
		t.Errorf("fallbacks = %d, want 1", p.TokenBasisFallbacks)
	}
}

// TestTokenizerBasis: on a tokenizer:<file> basis OSL and ITL count the file's counts, the
// usage discrepancy compares the server's usage with them (not with o200k_base), and a record
// without them is counted on o200k_base and said so.
func TestTokenizerBasis(t *testing.T) {
	const basis = schema.TokenizerBasisPrefix + "tok/tokenizer.json"
	recs := basisRecords()
	// The file counts the prompt as 160 tokens, the answers as 128 and 120.
	recs[0].TokenizerInput, recs[0].TokenizerOutput, recs[0].TokenizerReasoning = ip(160), ip(128), ip(0)
	recs[1].TokenizerInput, recs[1].TokenizerOutput, recs[1].TokenizerReasoning = ip(160), ip(120), ip(0)
	p := Compute(recs, Options{Concurrency: 2, TokenBasis: basis})
	if p.TokenBasis != basis || p.TokenBasisFallbacks != 0 {
		t.Fatalf("token_basis %q fallbacks %d, want %q and none", p.TokenBasis, p.TokenBasisFallbacks, basis)
	}
	if !near(p.MeanOSL, 124) || !near(p.ITL.Avg, (1270.0/127+1270.0/119)/2) || !near(p.MeanISL, 100) {
		t.Errorf("mean OSL %v ITL %v ISL %v: want 124, the file's ITL, and the asked 100", p.MeanOSL, p.ITL.Avg, p.MeanISL)
	}
	// prompt: (200 − 160) / 160 = +25 %; completion: 0 % and (128 − 120) / 120 = +6.67 %.
	if p.UsagePromptDiffPct == nil || !near(*p.UsagePromptDiffPct, 25) || p.UsageCompletionDiffPct == nil ||
		!near(*p.UsageCompletionDiffPct, (0+800.0/120)/2) || !p.UsageDiscrepancy {
		t.Errorf("diff pct prompt %v completion %v discrepancy %v", p.UsagePromptDiffPct, p.UsageCompletionDiffPct, p.UsageDiscrepancy)
	}
	recs[1].TokenizerInput, recs[1].TokenizerOutput, recs[1].TokenizerReasoning = nil, nil, nil
	p = Compute(recs, Options{Concurrency: 2, TokenBasis: basis})
	if p.TokenBasisFallbacks != 1 || !near(p.MeanOSL, (128+90)/2.0) {
		t.Errorf("fallbacks %d mean OSL %v: want 1, and 90 o200k_base tokens for the request without a count", p.TokenBasisFallbacks, p.MeanOSL)
	}
}

func TestFidelityFields(t *testing.T) {
	recs := basisRecords()
	// r2 (failed) was the first on a pre-dialled connection that took 4 ms to open before it.
	recs[2].ConnectNs, recs[2].ConnectDoneNs, recs[2].ConnPredialed = 4e6, recs[2].StartNs-1e6, true
	p := Compute(recs, Options{Concurrency: 2, WarmConnections: 2, WarmConnectNs: []int64{1e6, 3e6}})
	if p.WarmConnections != 2 || p.WarmConnectMs == nil || !near(p.WarmConnectMs.Avg, 2) || p.WarmConnectMs.Max != 3 {
		t.Errorf("warm connections %d connect %+v: want 2 averaging 2 ms, max 3 ms", p.WarmConnections, p.WarmConnectMs)
	}
	// prompt: +100 % both; completion: +28 % and +42.2 %.
	if p.UsagePromptDiffPct == nil || !near(*p.UsagePromptDiffPct, 100) || p.UsageCompletionDiffPct == nil ||
		!near(*p.UsageCompletionDiffPct, (28+(128.0-90)/90*100)/2) || p.UsageReasoningDiffPct != nil || !p.UsageDiscrepancy {
		t.Errorf("diff pct prompt %v completion %v reasoning %v discrepancy %v", p.UsagePromptDiffPct, p.UsageCompletionDiffPct, p.UsageReasoningDiffPct, p.UsageDiscrepancy)
	}
	if p.TruncatedPrompts != 1 || p.Violations[schema.ViolationMultiChoice] != 1 || p.ConnectMs == nil || !near(p.ConnectMs.Avg, 3) {
		t.Errorf("truncated %d violations %v connect %+v", p.TruncatedPrompts, p.Violations, p.ConnectMs)
	}
	if p.NewConnections != 2 || p.ConnectsInTTFT != 1 || p.PredialedConnections != 1 {
		t.Errorf("new connections %d, connects in TTFT %d, pre-dialled %d: want 2, 1 (r0), 1 (r2)", p.NewConnections, p.ConnectsInTTFT, p.PredialedConnections)
	}
	if msgs := p.ErrorMessages[schema.ErrorContext]; len(msgs) != 1 || p.ErrorsByClass[schema.ErrorContext] != 2 {
		t.Errorf("messages %v by class %v: want one distinct message, two errors", p.ErrorMessages, p.ErrorsByClass)
	}
	if p.ServerTimedRequests != 1 || !near(p.ServerITLMs.Avg, 10) || !near(p.TTFTMinusServerPromptMs.Avg, 20) || !near(p.ServerPromptMs.Avg, 80) {
		t.Errorf("timed %d server ITL %+v TTFT−prompt %+v", p.ServerTimedRequests, p.ServerITLMs, p.TTFTMinusServerPromptMs)
	}
	// The server's figures are on the client's definitions: a request the client saw exactly
	// as the server timed it reads the same ITL (not llama.cpp's 1270/128) and output speed.
	if !near(p.ServerITLMs.Avg, p.ITL.Avg) || !near(p.ServerOutputTokPerUser.Avg, p.TPSUser.Avg) || p.ServerOutputSpeed == nil || !near(*p.ServerOutputSpeed, p.AAOutputSpeed) || !near(*p.ServerOutputSpeed, 100) {
		t.Errorf("server ITL %v tok/s/user %v speed %v; client %v, %v, %v", p.ServerITLMs.Avg, p.ServerOutputTokPerUser.Avg, p.ServerOutputSpeed,
			p.ITL.Avg, p.TPSUser.Avg, p.AAOutputSpeed)
	}
	recs = basisRecords()[:1]
	recs[0].UsagePrompt, recs[0].UsageComplete = ip(105), ip(95)
	if Compute(recs, Options{}).UsageDiscrepancy {
		t.Error("5 % differences flagged as a discrepancy")
	}
}

func TestErrorMessagesBounded(t *testing.T) {
	var p schema.Point
	for _, m := range []string{"f", "e", "d", "c", "b", "a", "b"} {
		addMessage(&p, "x", m)
	}
	if got := p.ErrorMessages["x"]; len(got) != MaxErrorMessages || got[0] != "b" {
		t.Errorf("messages %v: want 5 distinct, sorted", got)
	}
}

// TestPromptTokensZeroIsUnknown: a server whose usage says prompt_tokens 0 (or leaves it out)
// states no prompt count. That is unknown, as the truncation rule already reads it, not a
// −100 % discrepancy: no prompt diff, no usage_discrepancy, no received ISL of 0, the asked
// prompt in the total throughput, and the requests counted in usage_prompt_unknown.
func TestPromptTokensZeroIsUnknown(t *testing.T) {
	recs := basisRecords()[:2]
	recs[0].UsagePrompt, recs[1].UsagePrompt = ip(0), nil
	recs[0].UsageComplete, recs[1].UsageComplete = ip(100), ip(90) // the client's own counts
	p := Compute(recs, Options{Concurrency: 2})
	if p.UsagePromptDiffPct != nil || p.UsageDiscrepancy || p.ISLReceived != nil {
		t.Errorf("prompt diff %v, discrepancy %v, received ISL %+v: want unknown, none, unknown", p.UsagePromptDiffPct, p.UsageDiscrepancy, p.ISLReceived)
	}
	if p.UsagePromptUnknown != 2 {
		t.Errorf("usage_prompt_unknown = %d, want 2", p.UsagePromptUnknown)
	}
	// server basis: (Σ asked ISL 200 + Σ OSL 190) over the window, not 0 + 190
	if p.TokenBasis != schema.TokenBasisServer || !near(p.TotalTokenThroughput, 390/p.WindowS) {
		t.Errorf("basis %s total tok/s %v, want server and %v", p.TokenBasis, p.TotalTokenThroughput, 390/p.WindowS)
	}
	// one known count beside the zero: the diff is that request's alone
	recs[1].UsagePrompt = ip(120)
	p = Compute(recs, Options{Concurrency: 2})
	if p.UsagePromptDiffPct == nil || !near(*p.UsagePromptDiffPct, 20) || p.UsagePromptUnknown != 1 || p.ISLReceived == nil || p.ISLReceived.Avg != 120 {
		t.Errorf("prompt diff %v unknown %d received %+v: want +20 %% from the one count, 1 unknown, 120", p.UsagePromptDiffPct, p.UsagePromptUnknown, p.ISLReceived)
	}
}

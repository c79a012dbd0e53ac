package report_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report"
)

func iptr(n int) *int { return &n }

// fidelityPhrases are the cover caveats fidelityCaveats can write, one per trigger.
var fidelityPhrases = []string{"Token counts:", "Usage discrepancy:", "Truncated prompts:", "Connection retries:",
	"Server messages", "Client vs server TTFT:", "Engine metrics:", "Imported token counts:", "Prompt usage unknown:"}

// TestCoverFidelityCaveats reads the cover back: a campaign that triggers every fidelity caveat
// shows each with its figures, and the plain partial campaign shows none of them.
func TestCoverFidelityCaveats(t *testing.T) {
	in := partialInput()
	a, b := &in.Atlas[0], &in.Atlas[1]
	a.TokenBasis, b.TokenBasis = schema.TokenBasisServer, schema.TokenBasisO200k
	a.TokenBasisFallbacks = iptr(3)
	a.UsageCompletionDiffPct, a.UsagePromptDiffPct = f(-23.4), f(2)
	a.Flags = append(a.Flags, schema.FlagUsageDiscrepancy)
	b.TruncatedPrompts = iptr(4)
	b.Retries = iptr(2)
	b.ErrorMessages = map[string][]string{schema.ErrorContext: {"the request exceeds the available context size"}}
	in.Atlas[4].ErrorMessages = map[string][]string{schema.ErrorConnect: {"dial tcp 10.0.0.1:8000: connection refused"}}
	a.TTFTMinusServerPromptP50Ms, b.TTFTMinusServerPromptP50Ms = f(12.5), f(40.25)
	b.Flags = append(b.Flags, schema.FlagNoEngineMetrics)

	out := filepath.Join(t.TempDir(), "out.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	mustContain(t, text,
		"ISL/OSL aa-1k: declared 1,000/1,000 tokens; measured mean 1,000/1,000 tokens (ISL o200k_base, OSL server usage).",
		"Token counts: OSL, ITL and tok/s count the client's o200k_base count (1 point) and the server's usage (1 point)",
		"3 valid requests on 1 point carried no usage and were counted on o200k_base instead (token_basis_fallbacks)",
		"Usage discrepancy: on 1 point the server's usage differs from the o200k_base count by more than 10 % on average (largest: completion -23.4 %)",
		"Truncated prompts: the server cut 4 prompts on 1 point",
		"Connection retries: 2 requests on 1 point were retried once",
		`Server messages (connect): "dial tcp 10.0.0.1:8000: connection refused"`,
		`Server messages (context_exceeded): "the request exceeds the available context size"`,
		"Client vs server TTFT: on 2 points the client's TTFT p50 exceeds the server's own prompt time by 12.5 to 40.2 ms",
		"Engine metrics: on 1 point the server's /metrics held no known engine family",
	)

	out = filepath.Join(t.TempDir(), "plain.pdf")
	if err := report.Render(context.Background(), partialInput(), out); err != nil {
		t.Fatal(err)
	}
	text = pdfText(t, out)
	for _, p := range fidelityPhrases {
		if strings.Contains(text, p) {
			t.Errorf("a campaign without fidelity data still shows %q", p)
		}
	}
	mustContain(t, text, "Caveats", "Request errors:") // the other caveats are still there
}

// TestCoverTokenizerBasis: points counted with a tokenizer file name it (never its machine path)
// on the cover's ISL/OSL line and token-count caveat, and the discrepancy and fallback caveats
// say the client's count was the file's.
func TestCoverTokenizerBasis(t *testing.T) {
	in := partialInput()
	for i := range in.Atlas {
		in.Atlas[i].TokenBasis = schema.TokenizerBasisPrefix + "tok/llama.json"
	}
	a := &in.Atlas[0]
	a.TokenBasisFallbacks = iptr(2)
	a.UsagePromptDiffPct = f(31.5)
	a.Flags = append(a.Flags, schema.FlagUsageDiscrepancy)
	out := filepath.Join(t.TempDir(), "out.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	mustContain(t, text,
		"(ISL o200k_base, OSL tokenizer:tok/llama.json)",
		fmt.Sprintf("Token counts: OSL, ITL and tok/s count the client's count with tokenizer file tok/llama.json (%d points)", len(in.Atlas)),
		"2 valid requests on 1 point carried no usage or no tokenizer count and were counted on o200k_base instead",
		"Usage discrepancy: on 1 point the server's usage differs from the client's count (the tokenizer file's on tokenizer bases, else o200k_base) by more than 10 % on average (largest: prompt +31.5 %)",
	)
}

// TestCoverImportedBasis: imported points name their source tool's token counts on the cover
// (per source, as the file states them), never the raw basis string nor a basis of perfdag's,
// and the ISL/OSL line says whose counts a shape's means rest on.
func TestCoverImportedBasis(t *testing.T) {
	const model = "meta-llama/Llama-3.1-8B-Instruct"
	in := partialInput()
	in.Atlas[0].TokenBasis = schema.TokenBasisServer
	in.Atlas[1].TokenBasis = schema.ImportedBasis("aiperf", schema.CountedTokenizerPrefix+model)
	in.Atlas[2].TokenBasis = schema.ImportedBasis("vllm-bench", schema.CountedServer+", else "+schema.CountedTokenizerPrefix+model)
	in.Atlas[3].TokenBasis = in.Atlas[1].TokenBasis
	out := filepath.Join(t.TempDir(), "out.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	mustContain(t, text,
		"ISL/OSL aa-1k: declared 1,000/1,000 tokens; measured mean 1,000/1,000 tokens (perfdag's points: ISL o200k_base, OSL server usage; imported points: ISL and OSL as their source tool counted them).",
		"ISL/OSL aa-10k: declared 10,000/1,500 tokens; measured mean 1,000/1,000 tokens (imported points: ISL and OSL as their source tool counted them).",
		"Token counts: OSL, ITL and tok/s count the server's usage (1 point); ISL is the asked prompt in o200k_base tokens.",
		"Imported token counts: ISL, OSL, ITL and tok/s of imported points rest on their source tool's token counts, none counted by perfdag - "+
			"aiperf: tokenizer "+model+" (2 points); vllm-bench: server usage, else tokenizer "+model+" (1 point).",
	)
	for _, bad := range []string{schema.ImportedBasisPrefix, "o200k_base count"} {
		if strings.Contains(text, bad) {
			t.Errorf("cover says %q", bad)
		}
	}
}

// TestCoverPromptUsageUnknown: a server that states prompt_tokens 0 states no prompt count.
// The cover names the requests without one and never reads them as a −100 % discrepancy: not
// on a point measured now (usage_prompt_unknown, no prompt diff), nor on one measured before
// (prompt diff exactly −100 % with the usage_discrepancy flag it set), whose other diffs, all
// within 10 %, decide.
func TestCoverPromptUsageUnknown(t *testing.T) {
	in := partialInput()
	now, before := &in.Atlas[0], &in.Atlas[2]
	now.TokenBasis, before.TokenBasis = schema.TokenBasisServer, schema.TokenBasisServer
	now.UsagePromptUnknown, now.UsageCompletionDiffPct = iptr(7), f(1.5)
	before.UsagePromptDiffPct, before.UsageCompletionDiffPct = f(-100), f(-2)
	before.Flags = append(before.Flags, schema.FlagUsageDiscrepancy)
	text := coverText(t, in)
	mustContain(t, text, "Prompt usage unknown: the server's usage stated no prompt count (prompt_tokens 0 or absent) for 7 valid requests on 1 point and every request on 1 point; "+
		"their prompt size as received, prompt discrepancy and truncation are unknown, not counted.")
	for _, bad := range []string{"Usage discrepancy:", "-100.0 %"} {
		if strings.Contains(text, bad) {
			t.Errorf("the cover says %q of a prompt count the server never stated:\n%s", bad, text)
		}
	}
	// a real discrepancy beside an unknown prompt count is still one
	before.UsageCompletionDiffPct = f(-31)
	mustContain(t, coverText(t, in), "Usage discrepancy: on 1 point the server's usage differs from the o200k_base count by more than 10 % on average (largest: completion -31.0 %)")
}

// TestCoverClientBound: points whose client was their bottleneck are counted in a caveat that
// says what to do; a campaign without any has no such line.
func TestCoverClientBound(t *testing.T) {
	in := partialInput()
	in.Atlas[0].Flags = append(in.Atlas[0].Flags, schema.FlagClientBound)
	in.Atlas[1].Flags = append(in.Atlas[1].Flags, schema.FlagClientBound)
	out := filepath.Join(t.TempDir(), "out.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	mustContain(t, pdfText(t, out), "Client-bound: 2 points ran with the client as the bottleneck",
		"Lower their load or split it over more clients.")
	out = filepath.Join(t.TempDir(), "plain.pdf")
	if err := report.Render(context.Background(), partialInput(), out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(pdfText(t, out), "Client-bound") {
		t.Error("a campaign with no client-bound point has the caveat")
	}
}

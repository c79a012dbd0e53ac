package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/measure/hftok"
	"github.com/perfdag/perfdag/steps/measure/session"
	"github.com/perfdag/perfdag/steps/measure/workload"
	"github.com/perfdag/perfdag/steps/testkit"
)

// llamaTokenizerCampaign measures the real llama-server on the basis of the tokenizer.json made
// from its own model's vocabulary (steps/measure/hftok/testdata).
const llamaTokenizerCampaign = `version: 1
campaign: llama-tokenizer
kind: latency
endpoints:
  llama:
    url: BASE
    model: tiny-llama
    tokenizer: tok/tiny-llama.json
defaults: {hardware: CPU, quant: F16, engine: llamacpp, cache_mode: cold}
cells:
  - id: tiny
    workload: {shape: custom, input_tokens: 256, output_tokens: 128}
    concurrencies: [1, 2]
    requests_per_point: 8
`

// Issue 10, `tokenizer: PATH`: on the tokenizer basis every point, the atlas and SOURCE.md name
// tokenizer:tok/tiny-llama.json; each prompt's count is exactly what the server's own
// POST /tokenize says of the same text; the usage discrepancy is computed against the file's
// counts; each answer's count equals /tokenize's of the same text; the agreement with the server's usage (which adds its chat template to the prompt,
// and counts the tokens it sampled rather than the returned text re-tokenized) is logged.
func TestRealLlamaServerTokenizerBasis(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign against a real llama-server (~20 s)")
	}
	base := testkit.LlamaServer(t)
	work := t.TempDir()
	fixture, err := os.ReadFile(filepath.Join("..", "..", "steps", "measure", "hftok", "testdata", "tiny-llama-2L-256.tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteFile(t, filepath.Join(work, "tok", "tiny-llama.json"), string(fixture))
	file := filepath.Join(work, "llama.yaml")
	testkit.WriteFile(t, file, strings.ReplaceAll(llamaTokenizerCampaign, "BASE", base))
	dir := filepath.Join(work, "out")
	if out, err := perfdagChild("run", file, "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	const basis, maxTokens = "tokenizer:tok/tiny-llama.json", 128
	cell := schema.Cell{ID: "tiny", Workload: schema.Workload{Shape: "custom", InputTokens: 256, OutputTokens: maxTokens}}
	var table strings.Builder
	fmt.Fprintf(&table, "%-3s %8s %8s %9s %9s %8s %8s %9s %10s\n", "c", "prompt", "/tokenize", "usage.pr", "diff %", "answer", "usage", "diff %", "OSL(ITL)")
	for _, c := range []int{1, 2} {
		var p schema.Point
		if _, err := campaigndir.ReadJSON(dir, campaigndir.Point("tiny", schema.Conc(c)), &p); err != nil {
			t.Fatal(err)
		}
		if p.TokenBasis != basis || p.TokenBasisFallbacks != 0 || p.ErrorCount != 0 {
			t.Fatalf("c%d: basis %q, %d fallbacks, errors %v: want %s on every request", c, p.TokenBasis, p.TokenBasisFallbacks, p.ErrorsByClass, basis)
		}
		src, err := workload.Open(cell.Workload, work, session.Salt(&engine.Task{Dir: dir, Cell: &cell}, session.PhaseProfiling, schema.Conc(c)))
		if err != nil {
			t.Fatal(err)
		}
		var prompt, server, usagePrompt, answer, usageAnswer float64
		var n int
		for _, r := range readRecords(t, dir, "tiny", c) {
			if r.Phase != session.PhaseProfiling {
				continue
			}
			if r.TokenizerInput == nil || r.TokenizerOutput == nil || r.UsagePrompt == nil || r.UsageComplete == nil {
				t.Fatalf("c%d request %d: tokenizer counts %v/%v, usage %v/%v", c, r.Index, r.TokenizerInput, r.TokenizerOutput, r.UsagePrompt, r.UsageComplete)
			}
			pr, err := src.Prompt(r.Index)
			if err != nil {
				t.Fatal(err)
			}
			want := serverTokens(t, base, pr.Text)
			if *r.TokenizerInput != want {
				t.Errorf("c%d request %d: the prompt counts %d with the tokenizer file, %d by the server's /tokenize", c, r.Index, *r.TokenizerInput, want)
			}
			if *r.UsagePrompt <= want || *r.UsageComplete != maxTokens || *r.TokenizerOutput <= 0 {
				t.Errorf("c%d request %d: usage prompt %d completion %d, answer %d on the file: want the template on top of %d, %d sampled tokens, a counted answer",
					c, r.Index, *r.UsagePrompt, *r.UsageComplete, *r.TokenizerOutput, want, maxTokens)
			}
			n++
			prompt, server, usagePrompt = prompt+float64(*r.TokenizerInput), server+float64(want), usagePrompt+float64(*r.UsagePrompt)
			answer, usageAnswer = answer+float64(*r.TokenizerOutput), usageAnswer+float64(*r.UsageComplete)
		}
		if n != 8 || p.UsagePromptDiffPct == nil || p.UsageCompletionDiffPct == nil || p.OSL == nil {
			t.Fatalf("c%d: %d records; diff pct %v %v", c, n, p.UsagePromptDiffPct, p.UsageCompletionDiffPct)
		}
		// The point's discrepancy is the server's usage against the file's counts, request by request.
		if !within(p.MeanOSL, answer/float64(n), 1e-9) {
			t.Errorf("c%d: mean OSL %.2f, want the file's mean answer count %.2f", c, p.MeanOSL, answer/float64(n))
		}
		fmt.Fprintf(&table, "%-3d %8.1f %8.1f %9.1f %+9.1f %8.1f %8.1f %+9.1f %10.1f\n", c, prompt/float64(n), server/float64(n), usagePrompt/float64(n),
			*p.UsagePromptDiffPct, answer/float64(n), usageAnswer/float64(n), *p.UsageCompletionDiffPct, p.OSL.Avg)
	}
	var row schema.AtlasRow
	atlas, err := os.ReadFile(filepath.Join(dir, campaigndir.Atlas()))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(bytes.SplitN(atlas, []byte("\n"), 2)[0], &row); err != nil || row.TokenBasis != basis {
		t.Errorf("atlas row basis %q (%v), want %s", row.TokenBasis, err, basis)
	}
	src, err := os.ReadFile(campaigndir.Source(dir))
	sum := sha256.Sum256(fixture)
	if err != nil || !bytes.Contains(src, []byte("token basis: "+basis+"\n- tokenizer file sha256: "+hex.EncodeToString(sum[:]))) || bytes.Contains(src, []byte(work)) {
		t.Errorf("SOURCE.md (%v) should say token basis: %s with the file's SHA-256 and hold no machine path:\n%s", err, basis, src)
	}
	t.Logf("tokenizer basis vs llama-server (means per request; prompt: the file's count of the user text, /tokenize: the server's count of the same text, "+
		"usage.pr: usage.prompt_tokens with the chat template; answer: the file's count of the returned text, usage: completion_tokens):\n%s", table.String())

	// The answers' counts: the records keep no text, so ask the server for answers here and
	// hold the file's count of each to the server's /tokenize of the same text.
	tk, err := hftok.Load(filepath.Join(work, "tok", "tiny-llama.json"))
	if err != nil {
		t.Fatal(err)
	}
	src0, err := workload.Open(cell.Workload, work, "answers")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		pr, err := src0.Prompt(i)
		if err != nil {
			t.Fatal(err)
		}
		answer := serverAnswer(t, base, pr.Text, maxTokens)
		got, err := tk.Count(answer)
		if want := serverTokens(t, base, answer); err != nil || got != want {
			t.Errorf("answer %d: the file counts %d (%v), the server's /tokenize %d, of %q", i, got, err, want, answer)
		}
	}
}

// serverAnswer is the server's non-streamed answer to prompt.
func serverAnswer(t *testing.T, base, prompt string, maxTokens int) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "tiny-llama", "messages": []any{map[string]any{"role": "user", "content": prompt}},
		"max_tokens": maxTokens, "ignore_eos": true, "temperature": 0})
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Choices) != 1 || out.Choices[0].Message.Content == "" {
		t.Fatalf("chat completion: %s %v %+v", resp.Status, err, out)
	}
	return out.Choices[0].Message.Content
}

// serverTokens is the server's own count of text: POST /tokenize without special tokens.
func serverTokens(t *testing.T, base, text string) int {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"content": text, "add_special": false})
	resp, err := http.Post(base+"/tokenize", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/tokenize: %s %v", resp.Status, err)
	}
	return len(out.Tokens)
}

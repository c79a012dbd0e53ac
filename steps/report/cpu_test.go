package report_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/analysis/tpm"
	"github.com/perfdag/perfdag/steps/report"
)

// TestCPUCampaignWording: a llama.cpp-like campaign (CPU, no max_num_batched_tokens) has no
// per-node TPM (a GPUs-per-node multiple means nothing for a CPU) and names devices.
func TestCPUCampaignWording(t *testing.T) {
	in := partialInput()
	for i := range in.Atlas {
		in.Atlas[i].Hardware, in.Atlas[i].MaxNumBatchedTokens = "CPU", 0
	}
	s := tpm.Summarize(in.Campaign.Campaign, tpm.ConfigFor(in.Campaign), in.Atlas)
	in.TPM = &s
	out := filepath.Join(t.TempDir(), "cpu.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	mustContain(t, text, "out tok/s/", "$/device-")
	// the peak row: G1 label, peak, C, tok/s, TPM/device, TPM/replica, then n/a for the node
	if !regexpFind(`G1 CPU NVFP4 TP8 EP aa-10k peak 10 [0-9.,k]+ [0-9.,k]+ [0-9.,k]+ n/a`, text) {
		t.Errorf("the TPM table gives a per-node figure for a CPU:\n%s", text[strings.Index(text, "Group Point"):][:400])
	}
}

func regexpFind(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }

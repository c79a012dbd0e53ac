package report_test

import (
	"context"
	"html"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/report/smoke"
)

// TestStatedFiguresWithoutNoise: values the pages quote from a setting or an input file (the
// settle pause, the champion's TPOT SLO, the TPM SLA, bytes per parameter and element) carry
// no floating-point noise into the PDF or the HTML: they read as the tables print figures.
func TestStatedFiguresWithoutNoise(t *testing.T) {
	in, err := smoke.Input()
	if err != nil {
		t.Fatal(err)
	}
	var noise []string
	noisy := func(x float64) float64 { // one ulp off: 41.1 → 41.10000000000001
		n := math.Nextafter(x, math.Inf(1))
		noise = append(noise, strconv.FormatFloat(n, 'f', -1, 64))
		return n
	}
	in.Campaign.Settle.SettleS = noisy(41.1)
	in.Champion.TPOTSLOMs = noisy(50.2)
	in.TPM.TTFTSLAMs, in.TPM.TPOTSLAMs = noisy(2000.4), noisy(60.3)
	in.Roofline[0].WeightBytes, in.Roofline[0].KVBytes = noisy(0.5625), noisy(2)
	out := filepath.Join(t.TempDir(), "r.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	page, err := report.BuildHTML(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"pdf": pdfText(t, out), "html": html.UnescapeString(string(page))} {
		for _, bad := range noise {
			if strings.Contains(text, bad) {
				t.Errorf("%s prints %s", name, bad)
			}
		}
		mustContain(t, text, "a 41.1 s settle pause", "TPOT SLO of 50.2 ms", "TTFT mean <= 2,000 ms and TPOT mean <= 60.3 ms",
			"weights 0.56 B/param, KV 2.00 B/elem")
	}
}

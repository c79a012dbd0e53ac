package sim

import (
	"math"
	"sort"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

// ttft_sigma makes TTFT lognormal around the nominal TTFT: log(TTFT / nominal) has mean 0 and
// standard deviation sigma, in the deterministic mode (drawn from the request's identity) and
// in the served mode's plans (drawn from the arrival's generator); sigma 0 leaves it exact.
func TestTTFTSpreadIsLognormal(t *testing.T) {
	const n, sigma, nominalMs = 4000, 0.4, 50.0 // ttft 42 + prefill 8 per 1k × 1000 prompt tokens
	cfg := schema.SimConfig{Seed: 7, TTFTMs: 42, PrefillMsPer1K: 8, TTFTSigma: sigma}
	v, err := NewVirtual(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	voc, err := newVocabulary()
	if err != nil {
		t.Fatal(err)
	}
	virtual, served := make([]float64, n), make([]float64, n)
	for i := range n {
		r := v.Record("a", "profiling", 8, i, 1000, 16)
		virtual[i] = math.Log(float64(r.FirstTokenNs-r.StartNs) / 1e6 / nominalMs)
		served[i] = math.Log(makePlan(&p, voc, uint64(i), request{budget: 16}).ttftFactor)
	}
	for name, logs := range map[string][]float64{"deterministic": virtual, "served": served} {
		mean, sd := meanSD(logs)
		sort.Float64s(logs)
		// 4000 draws: the mean's standard error is 0.4/63 ≈ 0.0063, the sd's ≈ 0.0045
		if math.Abs(mean) > 0.025 || math.Abs(sd-sigma) > 0.02 || math.Abs(logs[n/2]) > 0.03 {
			t.Errorf("%s: log(TTFT/nominal) mean %.4f sd %.4f median %.4f, want 0, %.2f, 0", name, mean, sd, logs[n/2], sigma)
		}
	}
	cfg.TTFTSigma = 0
	flat, _ := NewVirtual(cfg)
	if r := flat.Record("a", "profiling", 8, 3, 1000, 16); r.FirstTokenNs-r.StartNs != int64(nominalMs*1e6) {
		t.Errorf("sigma 0: TTFT %d ns, want exactly %v ms", r.FirstTokenNs-r.StartNs, nominalMs)
	}
	if _, err := NewVirtual(schema.SimConfig{TTFTSigma: -1}); err == nil {
		t.Error("ttft_sigma -1 accepted")
	}
}

func meanSD(xs []float64) (float64, float64) {
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(xs)))
}

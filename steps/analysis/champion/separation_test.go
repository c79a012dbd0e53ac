package champion

import (
	"math"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

func ivl(lo, hi float64) schema.Interval {
	return schema.Interval{Lo: lo, Hi: hi, Method: "batch-means", N: 10}
}

// TestSeparation ranks sglang-a (990 tok/s/GPU at c32) over vllm-base (900), hand-computed:
// the difference 90 ± √(hb² + hs²) must exclude 0 for the two to be separated.
func TestSeparation(t *testing.T) {
	rows := func(base, sgl schema.Intervals) []schema.AtlasRow {
		r := abRows()
		r[1].Intervals, r[3].Intervals = base, sgl
		r[1].GPUs, r[3].GPUs = 8, 8
		return r
	}
	tests := []struct {
		name      string
		base, sgl schema.Intervals
		separated string
		note      string
		warned    bool
	}{
		// base ±20 (own key), sglang-a's whole-endpoint 7,800–8,040 tok/s ÷ 8 GPUs = 975–1,005
		// (±15): 90 ± 25 → [65, 115] excludes 0.
		{"separated", schema.Intervals{"output_tok_s_per_gpu": ivl(880, 920)}, schema.Intervals{"output_tok_s": ivl(7800, 8040)},
			"yes", "top two separated: sglang-a 990.0 ±15.0 vs vllm-base 900.0 ±20.0: difference +90.0 ±25.0", false},
		// ±70 and ±60: 90 ± 92.2 → [−2.2, 182.2] includes 0.
		{"not separated", schema.Intervals{"output_tok_s_per_gpu": ivl(830, 970)}, schema.Intervals{"output_tok_s_per_gpu": ivl(930, 1050)},
			"no", "top two not separated: sglang-a 990.0 ±60.0 vs vllm-base 900.0 ±70.0: difference +90.0 ±92.2 includes 0", true},
		{"unknown", nil, schema.Intervals{"output_tok_s_per_gpu": ivl(930, 1050)},
			"unknown", "separation unknown: arm vllm-base's best point has no 95 % interval of output_tok_s_per_gpu", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := selectRows(t, Options{}, rows(tt.base, tt.sgl))
			if got := SeparatedWord(c.Separated); got != tt.separated || !strings.HasPrefix(c.SeparationNote, tt.note) {
				t.Errorf("separated %s note %q, want %s %q", got, c.SeparationNote, tt.separated, tt.note)
			}
			warned := strings.Contains(strings.Join(c.Warnings, "\n"), c.SeparationNote)
			if warned != tt.warned {
				t.Errorf("warned %v, want %v (%q)", warned, tt.warned, c.Warnings)
			}
			if caution := strings.Contains(c.Recommendation, "Caution: top two not separated"); caution != (tt.separated == "no") {
				t.Errorf("recommendation %q", c.Recommendation)
			}
		})
	}
	// One ranked arm: nothing to separate, said in the note, no warning.
	c := selectRows(t, Options{}, abRows()[:3])
	if c.Separated != nil || !strings.Contains(c.SeparationNote, "vllm-base is the only arm") || strings.Contains(strings.Join(c.Warnings, "\n"), "separat") {
		t.Errorf("one arm: separated %v note %q warnings %q", c.Separated, c.SeparationNote, c.Warnings)
	}
}

// TestFocusInterval pins the focus metric → interval key mapping: a metric's own key first,
// the point record's name next, per-GPU metrics from the endpoint's interval ÷ GPUs, and none
// for tokens_per_watt (power's uncertainty is not measured).
func TestFocusInterval(t *testing.T) {
	row := schema.AtlasRow{GPUs: 4, Intervals: schema.Intervals{
		"output_token_throughput": ivl(400, 440), "tps_per_user": ivl(50, 54), "tokens_per_watt": ivl(1, 2),
		"total_tok_s": ivl(800, 880), "total_tok_s_per_gpu": ivl(199, 221)}}
	tests := []struct {
		metric string
		lo, hi float64 // NaN: no interval
	}{
		{"output_tok_s", 400, 440},
		{"output_tok_s_per_gpu", 100, 110},
		{"total_tok_s_per_gpu", 199, 221}, // its own key wins over total_tok_s ÷ 4
		{"tok_s_per_user", 50, 54},
		{"tokens_per_watt", math.NaN(), 0},
		{"request_throughput", math.NaN(), 0},
	}
	for _, tt := range tests {
		iv := FocusInterval(tt.metric, &row)
		switch {
		case math.IsNaN(tt.lo) && iv != nil:
			t.Errorf("%s: interval %+v, want none", tt.metric, iv)
		case !math.IsNaN(tt.lo) && (iv == nil || iv.Lo != tt.lo || iv.Hi != tt.hi):
			t.Errorf("%s: interval %+v, want [%v, %v]", tt.metric, iv, tt.lo, tt.hi)
		}
	}
	row.GPUs = 0
	if iv := FocusInterval("output_tok_s_per_gpu", &row); iv != nil {
		t.Errorf("no GPU count: per-GPU interval %+v, want none", iv)
	}
}

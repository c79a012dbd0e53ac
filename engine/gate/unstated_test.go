package gate

import (
	"slices"
	"testing"
)

// A nullable result field compiles against its type (Sample), evaluates as nil when the
// result does not state it, and a rule that fails on it names it (Unstated); a rule that
// handles nil itself (?? or == nil) is evaluated as written.
func TestUnstatedFields(t *testing.T) {
	type res struct {
		P50   *float64 `json:"ttft_p50_ms"`
		Count int      `json:"request_count"`
	}
	p50 := 87.5
	ctx := map[string]any{"concurrency": 4}
	sample := SampleEnv(ctx, res{})
	if v, ok := sample["ttft_p50_ms"].(float64); !ok || v != 0 {
		t.Fatalf("Sample gives ttft_p50_ms %#v, want a typed 0", sample["ttft_p50_ms"])
	}
	for _, tc := range []struct {
		rule     string
		stated   bool
		pass     bool
		err      bool
		unstated []string
	}{
		{"ttft_p50_ms < 100", true, true, false, nil},
		{"ttft_p50_ms < 100", false, false, true, []string{"ttft_p50_ms"}},
		{"not (ttft_p50_ms >= 100)", false, false, true, []string{"ttft_p50_ms"}},
		{"request_count > 0 and ttft_p50_ms < 2 * concurrency", false, false, true, []string{"ttft_p50_ms"}},
		{"ttft_p50_ms == nil or ttft_p50_ms < 100", false, true, false, []string{"ttft_p50_ms"}},
		{"(ttft_p50_ms ?? 0) < 100", false, true, false, []string{"ttft_p50_ms"}},
		{"request_count > 5", false, false, false, nil},
	} {
		prog, err := Compile(tc.rule, sample, false)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.rule, err)
		}
		r := res{Count: 3}
		if tc.stated {
			r.P50 = &p50
		}
		env := Env(ctx, r)
		ok, err := Eval(prog, env)
		if ok != tc.pass || (err != nil) != tc.err {
			t.Errorf("%q (stated %v): Eval = %v, %v; want %v, error %v", tc.rule, tc.stated, ok, err, tc.pass, tc.err)
		}
		if got := Unstated(tc.rule, env); !slices.Equal(got, tc.unstated) {
			t.Errorf("Unstated(%q) (stated %v) = %v, want %v", tc.rule, tc.stated, got, tc.unstated)
		}
	}
}

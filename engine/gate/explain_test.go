package gate

import (
	"strings"
	"testing"
)

func TestExplainSaysWhatToWrite(t *testing.T) {
	env := map[string]any{"ttft_p50_ms": 1.0, "num_prompts": 3, "concurrency": 2, "status": "ok"}
	for _, tc := range []struct {
		rule, msg, hint string
		col             int
	}{
		{`nm_prompts > 1`, "unknown name nm_prompts", `did you mean "num_prompts"?`, 1},
		{`ttft_p50_ms < "fast"`, "invalid operation: < (mismatched types number and string)", "compare a number with a number", 13},
		{`status == 3`, "mismatched types string and integer", "quoted string", 8},
		{`num_prompts >= 2 *`, "the rule ends too early", "finish the expression", 18},
		{`(num_prompts > 2`, "the rule ends too early", "close every (", 16},
		{`status = "ok"`, `unexpected operator "="`, "compare with ==", 8},
		{`ttft_p50_ms`, "expected boolean, but got number", "a rule must be true or false", 0},
	} {
		_, err := Compile(tc.rule, env, false)
		if err == nil {
			t.Fatalf("%s: compiled", tc.rule)
		}
		msg, _, col, hint := Explain(err, env)
		if !strings.Contains(msg, tc.msg) || !strings.Contains(hint, tc.hint) || col != tc.col {
			t.Errorf("%s: got %q (col %d) hint %q; want %q (col %d) hint containing %q", tc.rule, msg, col, hint, tc.msg, tc.col, tc.hint)
		}
		if goType.MatchString(msg) || strings.Contains(msg, "Operator(") || strings.Contains(msg, "EOF") {
			t.Errorf("%s: message %q shows Go's or the parser's names", tc.rule, msg)
		}
	}
}

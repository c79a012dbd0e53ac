package gate

import (
	"testing"
)

func TestValues(t *testing.T) {
	type res struct {
		TTFT   float64        `json:"ttft_p50_ms"`
		Errors map[string]int `json:"errors_by_class"`
		Note   *string        `json:"note"`
	}
	env := Env(map[string]any{"concurrency": 16, "cell": "aa-1k", "cells": []string{"a", "b"}},
		res{TTFT: 187.34, Errors: map[string]int{"timeout": 2, "blocked": 3}})
	for _, tc := range []struct{ rule, want string }{
		{"ttft_p50_ms < 100", "ttft_p50_ms = 187.3"},
		{"ttft_p50_ms < 100 && concurrency >= 8", "concurrency = 16, ttft_p50_ms = 187.3"},
		{"ttft_p50_ms < 100 || ttft_p50_ms < 2 * concurrency", "concurrency = 16, ttft_p50_ms = 187.3"}, // each once
		// a member with constant keys shows the member, not the whole map
		{"errors_by_class.timeout == 0", "errors_by_class.timeout = 2"},
		{`errors_by_class["blocked"] == 0`, "errors_by_class.blocked = 3"},
		// a whole map is JSON, never Go's map[...] text
		{"len(errors_by_class) == 0", `errors_by_class = {"blocked":3,"timeout":2}`},
		{"note != nil", "note = null"},
		{`cell == "x" && "a" in cells`, `cell = "aa-1k", cells = [a b]`},
		// predicate and let variables, functions and unknown names are not values
		{"let x = 1; all(cells, # != 'c') && x > unknown", "cells = [a b]"},
		{"1 > 2", ""},
		{"(((", ""},
	} {
		if got := Values(tc.rule, env); got != tc.want {
			t.Errorf("Values(%q) = %q, want %q", tc.rule, got, tc.want)
		}
	}
}

package gate

import (
	"errors"
	"strings"
	"testing"
)

func env() map[string]any {
	return map[string]any{"num_prompts": 30, "concurrency": 10, "cell": "aa-1k", "cells": []string{"aa-1k", "aa-10k"}}
}

func TestBudgetStopsHostileRules(t *testing.T) {
	tests := []struct {
		name, rule string
		budget     bool // true: ErrBudget; false: evaluates
		want       bool
	}{
		{"the issue's rule", `len(repeat(repeat("a", 100000), 100000)) > 0`, true, false},
		{"repeat at the budget", `len(repeat("a", 1000000)) == 1000000`, false, true},
		{"repeat one past the budget", `len(repeat("a", 1000001)) > 0`, true, false},
		{"doubling by concatenation", `let a = repeat("x", 300000); let b = a + a; let c = b + b; len(c) > 0`, true, false},
		{"serialising one string many times", `let s = repeat("x", 10000); len(toJSON(map(1..1000, {s}))) > 0`, true, false},
		{"replace that multiplies", `let s = repeat("a", 2000); len(replace(s, "a", s)) > 0`, true, false},
		{"nested loops over a shared range", `let r = 1..1000; all(r, {all(r, {all(r, {true})})})`, true, false},
		{"a big range", `len(1..2000000) > 0`, true, false},
		{"flatten of shared arrays", `let r = 1..1000; len(flatten(map(1..1000, {r}))) > 0`, true, false},
		{"doubling untyped strings", `let s = fromJSON(toJSON(repeat("x", 50000))); let b = s + s; let c = b + b; let d = c + c; len(d) > 0`, true, false},
		{"untyped numbers still add", `fromJSON("2") + fromJSON("3") == 5`, false, true},
		{"ordinary rule", `num_prompts >= 2 * concurrency`, false, true},
		{"ordinary loop", `all(cells, {# startsWith "aa-"}) and cell + "/x" == "aa-1k/x"`, false, true},
		{"a loop of a thousand", `sum(map(1..1000, {#})) == 500500`, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(tt.rule, env(), false)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			got, err := Eval(p, env())
			if tt.budget {
				if !errors.Is(err, ErrBudget) {
					t.Fatalf("Eval = %v, %v; want an ErrBudget error", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Eval = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestRuleSizeIsBounded(t *testing.T) {
	ones := func(n int) string { return strings.TrimSuffix(strings.Repeat("1 + ", n), " + ") }
	// n ones, n-1 pluses, 0 and > are 2n+1 nodes; not adds one
	if _, err := Compile("not ("+ones(MaxRuleNodes/2-1)+" > 0)", env(), false); err != nil {
		t.Fatalf("a rule of %d nodes: %v", MaxRuleNodes, err)
	}
	past := ones(MaxRuleNodes/2) + " > 0"
	if _, err := Compile(past, env(), false); err == nil || !strings.Contains(err.Error(), "exceeds maximum allowed nodes") {
		t.Fatalf("a rule past %d nodes: %v", MaxRuleNodes, err)
	}
}

func BenchmarkHostileRule(b *testing.B) {
	p, err := Compile(`len(repeat(repeat("a", 100000), 100000)) > 0`, env(), false)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Eval(p, env()); !errors.Is(err, ErrBudget) {
			b.Fatal(err)
		}
	}
}

func BenchmarkNestedLoopRule(b *testing.B) {
	p, err := Compile(`let r = 1..1000; all(r, {all(r, {all(r, {true})})})`, env(), false)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Eval(p, env()); !errors.Is(err, ErrBudget) {
			b.Fatal(err)
		}
	}
}

// Package gate compiles and evaluates the campaign's expr rules — quality gates and `when:`
// conditions — against typed environments, so a misspelt field is an error at validate time
// and values are passed as variables, never pasted into the rule text (Argo's `when` bug).
package gate

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"

	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/schema"
)

// Severities of a gate.
const (
	Fail = schema.SeverityFail
	Warn = schema.SeverityWarn
)

// Verdict is one gate evaluated on one node; the type is the data contract's, so steps read
// verdicts without importing the engine.
type Verdict = schema.GateVerdict

// Context returns the fields every rule may read besides a result, whatever the domain: the
// campaign's name and kind, its cell ids, the step, and the cell id and point the node runs
// for — concurrency (a closed-loop point's, a rate point's in-flight cap, 0 when none),
// request_rate (0 on a closed-loop point) and load (its key, c16 or r2.5-cap64) — zero values
// at wider scopes. A registry adds its domain's fields (RuleEnv).
func Context(c *schema.Campaign, cell *schema.Cell, l schema.Load, step string) map[string]any {
	ids := make([]string, 0, len(c.Cells))
	for _, cl := range c.Cells {
		ids = append(ids, cl.ID)
	}
	env := map[string]any{
		"campaign": c.Campaign, "kind": c.Kind, "cells": ids, "step": step,
		"cell": "", "concurrency": l.InFlight(), "request_rate": l.Rate, "load": l.Key(),
	}
	if cell != nil {
		env["cell"] = cell.ID
	}
	return env
}

// Fields flattens a result struct (or pointer, or map) into rule variables named by json tags;
// nullable pointers become their value or nil (an unstated value, see Unstated).
func Fields(result any) map[string]any { return fields(result, false) }

// Sample is Fields for type-checking a rule at validate time: a nil pointer becomes its
// element's zero value, so a rule on a nullable field (ttft_p50_ms < 100) compiles against its
// type instead of an untyped nil.
func Sample(result any) map[string]any { return fields(result, true) }

func fields(result any, typed bool) map[string]any {
	out := map[string]any{}
	if result == nil {
		return out
	}
	if m, ok := result.(map[string]any); ok {
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	v := reflect.ValueOf(result)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v = reflect.New(v.Type().Elem()).Elem()
			break
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct {
		flatten(v, out, typed)
	}
	return out
}

func flatten(v reflect.Value, out map[string]any, typed bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && name == "" && fv.Kind() == reflect.Struct {
			flatten(fv, out, typed)
			continue
		}
		if name == "" {
			name = f.Name
		}
		if fv.Kind() == reflect.Pointer {
			switch {
			case fv.IsNil() && typed:
				out[name] = reflect.Zero(fv.Type().Elem()).Interface()
			case fv.IsNil():
				out[name] = nil
			default:
				out[name] = fv.Elem().Interface()
			}
			continue
		}
		if tm, ok := fv.Interface().(encoding.TextMarshaler); ok && fv.Kind() == reflect.Struct {
			text, _ := tm.MarshalText() // a key type (a point's load) reads as its text
			out[name] = string(text)
			continue
		}
		out[name] = fv.Interface()
	}
}

// Env merges the context and a result's fields; result fields win.
func Env(ctx map[string]any, result any) map[string]any { return merge(ctx, Fields(result)) }

// SampleEnv is Env with Sample's typed fields: the environment rules compile against.
func SampleEnv(ctx map[string]any, result any) map[string]any { return merge(ctx, Sample(result)) }

func merge(ctx, fields map[string]any) map[string]any {
	env := make(map[string]any, len(ctx)+len(fields))
	for k, v := range ctx {
		env[k] = v
	}
	for k, v := range fields {
		env[k] = v
	}
	return env
}

// Compile type-checks a boolean rule against env. freeForm allows names env lacks (results of
// kinds without a declared type, such as exec's JSON stdout). The program is bounded: at most
// MaxRuleNodes, and its evaluation stops at Budget (see budget.go).
func Compile(rule string, env map[string]any, freeForm bool) (*vm.Program, error) {
	scoped := make(map[string]any, len(env)+1)
	for k, v := range env {
		scoped[k] = v
	}
	opts := append(options(scoped), expr.AsBool())
	if freeForm {
		opts = append(opts, expr.AllowUndefinedVariables())
	}
	return expr.Compile(rule, opts...)
}

// Eval runs a compiled rule within Budget; a rule that passes it fails with ErrBudget
// instead of eating memory or a core.
func Eval(p *vm.Program, env map[string]any) (bool, error) {
	out, err := run(p, env)
	if err != nil {
		return false, err
	}
	b, ok := out.(bool)
	if !ok {
		return false, fmt.Errorf("rule returned %T, want a boolean", out)
	}
	return b, nil
}

var (
	unknownName    = regexp.MustCompile(`unknown name ([A-Za-z_][A-Za-z0-9_]*)`)
	goType         = regexp.MustCompile(`\b(float64|float32|int64|int32|int|bool|interface \{\})\b`)
	tokenOperator  = regexp.MustCompile(`unexpected token Operator\("([^"]*)"\)`)
	mismatchedType = regexp.MustCompile(`mismatched types `)
)

// plainTypes names expr's Go types the way a rule's author thinks of them.
var plainTypes = map[string]string{
	"float64": "number", "float32": "number", "int64": "integer", "int32": "integer", "int": "integer",
	"bool": "boolean", "interface {}": "any value",
}

// Explain turns an expr compile error into a message (Go type names put in plain words), the
// 1-based line and column inside the rule text, and a hint: the nearest valid field for a
// misspelling, else what to write instead for the common mistakes (= for ==, a rule that
// stops after an operator, a comparison of a number with a string, a rule that is not true or
// false).
func Explain(err error, env map[string]any) (msg string, line, col int, hint string) {
	msg = err.Error()
	var fe *file.Error
	if errors.As(err, &fe) {
		msg, line, col = fe.Message, fe.Line, fe.Column+1
	}
	if m := unknownName.FindStringSubmatch(msg); m != nil {
		names := make([]string, 0, len(env))
		for k := range env {
			names = append(names, k)
		}
		sort.Strings(names)
		hint = diag.DidYouMean(m[1], names)
		if hint == "" {
			hint = "fields here: " + strings.Join(names, ", ")
		}
		return msg, line, col, hint
	}
	if m := tokenOperator.FindStringSubmatch(msg); m != nil {
		msg = tokenOperator.ReplaceAllString(msg, `unexpected operator "$1"`)
		if m[1] == "=" {
			hint = `compare with == (e.g. status == "ok"); = is not an operator in rules`
		}
	}
	switch {
	case strings.Contains(msg, "unexpected token EOF"):
		msg = strings.Replace(msg, "unexpected token EOF", "the rule ends too early", 1)
		hint = "finish the expression after the last operator and close every ( and ["
	case mismatchedType.MatchString(msg):
		hint = `compare a number with a number (e.g. ttft_p50_ms < 500) and a string with a quoted string (e.g. status == "ok")`
	case strings.HasPrefix(msg, "expected bool, but got"):
		hint = "a rule must be true or false: compare the field, e.g. num_prompts >= 2 * concurrency"
	}
	msg = goType.ReplaceAllStringFunc(msg, func(t string) string { return plainTypes[t] })
	return msg, line, col, hint
}

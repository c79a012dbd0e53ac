package gate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
)

// Values renders what a rule reads with the values it saw in env, e.g. "concurrency = 16,
// ttft_p50_ms = 187.3", so a verdict that did not pass says why. The names come from the
// rule's syntax tree (expr's parser): every variable, and for a member access with constant
// keys (errors_by_class.timeout, tpm["p50"]) the member's value rather than the whole map.
// Names env lacks (functions, predicate and let variables) are left out.
func Values(rule string, env map[string]any) string {
	tree, err := parser.Parse(rule)
	if err != nil {
		return ""
	}
	c := &collector{consumed: map[ast.Node]bool{}}
	ast.Walk(&tree.Node, c)
	seen := map[string]bool{}
	var parts []string
	for _, r := range c.reads {
		if c.consumed[r.node] || seen[r.path] {
			continue
		}
		seen[r.path] = true
		root, _, _ := strings.Cut(r.path, ".")
		root, _, _ = strings.Cut(root, "[")
		if _, ok := env[root]; !ok {
			continue
		}
		v, ok := env[r.path]
		if !ok {
			if v, err = expr.Eval(r.path, env); err != nil {
				continue
			}
		}
		parts = append(parts, r.path+" = "+format(v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// Unstated lists, sorted, the variables a rule reads that env holds as nil: values the result
// does not state (an imported point without a TTFT p50, say). A rule whose evaluation failed
// on one was not evaluated — the value is missing, not zero. Names env lacks are left out.
func Unstated(rule string, env map[string]any) []string {
	tree, err := parser.Parse(rule)
	if err != nil {
		return nil
	}
	c := &collector{consumed: map[ast.Node]bool{}}
	ast.Walk(&tree.Node, c)
	var out []string
	for _, r := range c.reads {
		root, _, _ := strings.Cut(r.path, ".")
		root, _, _ = strings.Cut(root, "[")
		if v, ok := env[root]; ok && v == nil && !slices.Contains(out, root) {
			out = append(out, root)
		}
	}
	sort.Strings(out)
	return out
}

type read struct {
	node ast.Node
	path string
}

// collector gathers variables and constant-key member chains; a chain's inner nodes are
// consumed by the outer one, so a.b.c is listed once, not also as a and a.b.
type collector struct {
	reads    []read
	consumed map[ast.Node]bool
}

func (c *collector) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.IdentifierNode:
		c.reads = append(c.reads, read{n, n.Value})
	case *ast.MemberNode:
		if n.Method || n.Optional {
			return
		}
		if path, ok := memberPath(n); ok {
			c.consumed[n.Node] = true
			c.reads = append(c.reads, read{n, path})
		}
	}
}

// memberPath spells a member chain rooted at a variable with constant keys; false otherwise.
func memberPath(n ast.Node) (string, bool) {
	switch x := n.(type) {
	case *ast.IdentifierNode:
		return x.Value, true
	case *ast.MemberNode:
		if x.Method || x.Optional {
			return "", false
		}
		base, ok := memberPath(x.Node)
		if !ok {
			return "", false
		}
		switch p := x.Property.(type) {
		case *ast.StringNode:
			if isName(p.Value) {
				return base + "." + p.Value, true
			}
			return base + "[" + fmt.Sprintf("%q", p.Value) + "]", true
		case *ast.IntegerNode:
			return base + "[" + fmt.Sprint(p.Value) + "]", true
		}
	}
	return "", false
}

func isName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// format writes a value as a reader expects it: numbers short, strings quoted, lists and
// maps as JSON (never Go's map[...] text), long values cut.
func format(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case float64:
		return fmt.Sprintf("%.4g", x)
	case float32:
		return fmt.Sprintf("%.4g", x)
	case string:
		return fmt.Sprintf("%q", x)
	case []string:
		if len(x) > 5 {
			return fmt.Sprintf("[%s, … %d more]", strings.Join(x[:5], " "), len(x)-5)
		}
		return "[" + strings.Join(x, " ") + "]"
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	s := fmt.Sprint(rv.Interface())
	switch rv.Kind() {
	case reflect.Pointer:
		s = "null"
	case reflect.Map, reflect.Slice, reflect.Array, reflect.Struct:
		if b, err := json.Marshal(rv.Interface()); err == nil {
			s = string(b)
		}
	case reflect.Float32, reflect.Float64:
		s = fmt.Sprintf("%.4g", rv.Float())
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return s
}

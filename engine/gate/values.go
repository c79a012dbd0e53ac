package gate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
)

// Values renders the variables a rule reads with their values in env, e.g.
// "concurrency=16, num_prompts=20", so a verdict that did not pass says what it saw.
func Values(rule string, env map[string]any) string {
	tree, err := parser.Parse(rule)
	if err != nil {
		return ""
	}
	names := map[string]bool{}
	ast.Walk(&tree.Node, identifiers(names))
	keys := make([]string, 0, len(names))
	for k := range names {
		if _, ok := env[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+format(env[k]))
	}
	return strings.Join(parts, ", ")
}

type identifiers map[string]bool

func (v identifiers) Visit(node *ast.Node) {
	if id, ok := (*node).(*ast.IdentifierNode); ok {
		v[id.Value] = true
	}
}

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
	s := fmt.Sprint(v)
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

package gate

import (
	"fmt"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
)

// Threshold is one clause of a rule's top-level conjunction that compares a variable with a
// number (ttft_p50_ms <= 250), so a chart can draw the variable against its limit.
type Threshold struct {
	Clause string  // the clause as the parser writes it back
	Name   string  // the variable compared
	Op     string  // <, <=, >, >= or ==, read with the variable on the left
	Limit  float64 // the number it is compared with
}

// Holds reports whether v meets the clause.
func (t Threshold) Holds(v float64) bool {
	switch t.Op {
	case "<":
		return v < t.Limit
	case "<=":
		return v <= t.Limit
	case ">":
		return v > t.Limit
	case ">=":
		return v >= t.Limit
	case "==":
		return v == t.Limit
	}
	return false
}

// flipped reads a comparison with its operands swapped: 250 >= x is x <= 250.
var flipped = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}

// Thresholds splits a rule at its top-level && (and) into clauses, in the order written: the
// clauses that compare a variable with a number as Thresholds, the others' text as rest (a
// disjunction, a comparison of two variables, a string test). Chained comparisons
// (1 < x < 5) are the two clauses the parser makes of them.
func Thresholds(rule string) ([]Threshold, []string, error) {
	tree, err := parser.Parse(rule)
	if err != nil {
		return nil, nil, fmt.Errorf("parse rule %q: %w", rule, err)
	}
	var ts []Threshold
	var rest []string
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		if b, ok := n.(*ast.BinaryNode); ok && (b.Operator == "&&" || b.Operator == "and") {
			walk(b.Left)
			walk(b.Right)
			return
		}
		if t, ok := threshold(n); ok {
			ts = append(ts, t)
			return
		}
		rest = append(rest, n.String())
	}
	walk(tree.Node)
	return ts, rest, nil
}

// threshold reads one clause as a variable compared with a number.
func threshold(n ast.Node) (Threshold, bool) {
	b, ok := n.(*ast.BinaryNode)
	if !ok || flipped[b.Operator] == "" {
		return Threshold{}, false
	}
	op := b.Operator
	id, isID := b.Left.(*ast.IdentifierNode)
	lim, isNum := number(b.Right)
	if !isID || !isNum {
		id, isID = b.Right.(*ast.IdentifierNode)
		lim, isNum = number(b.Left)
		op = flipped[op]
	}
	if !isID || !isNum {
		return Threshold{}, false
	}
	return Threshold{Clause: n.String(), Name: id.Value, Op: op, Limit: lim}, true
}

// number reads a numeric literal, signed or not.
func number(n ast.Node) (float64, bool) {
	switch x := n.(type) {
	case *ast.IntegerNode:
		return float64(x.Value), true
	case *ast.FloatNode:
		return x.Value, true
	case *ast.UnaryNode:
		v, ok := number(x.Node)
		switch {
		case !ok:
		case x.Operator == "-":
			return -v, true
		case x.Operator == "+":
			return v, true
		}
	}
	return 0, false
}

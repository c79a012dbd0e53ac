package gate

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/vm"
	"github.com/expr-lang/expr/vm/runtime"
)

// Bounds on one rule. A rule is one line over a node's result; these bounds are far above
// what such a line needs and keep a hostile one (`len(repeat(repeat("a",1e5),1e5)) > 0`,
// nested loops over ranges) from eating memory or a core: the evaluation errors instead.
const (
	// MaxRuleNodes bounds a rule's size (expr syntax-tree nodes), checked when it compiles.
	MaxRuleNodes = 1000
	// Budget bounds one evaluation, in expr's memory units: one per array or map element
	// created, one per byte of a string a function builds, and one per loop iteration of a
	// predicate (all, any, filter, map, ...), so both memory and time are bounded.
	Budget = 1_000_000
)

// ErrBudget is the class of an evaluation stopped by Budget.
var ErrBudget = errors.New("rule_budget_exceeded")

// costs says, for the builtins that build strings or arrays, how big the result will be
// before it is built; the wrapped builtin refuses a call whose result alone passes Budget and
// charges the rest to the evaluation. Builtins not listed allocate nothing that grows with
// their input (len, abs, hasPrefix, trim, ...) and run as expr ships them.
var costs = map[string]func(args []any) uint{
	"repeat": func(a []any) uint {
		n := runtime.ToInt(a[1])
		if n <= 0 {
			return 0
		}
		return mulCap(uint(len(str(a[0]))), uint(n))
	},
	"replace": func(a []any) uint {
		s, old := str(a[0]), str(a[1])
		n := uint(strings.Count(s, old))
		return uint(len(s)) + mulCap(n, uint(len(str(a[2]))))
	},
	"join": func(a []any) uint {
		glue := ""
		if len(a) > 1 {
			glue = str(a[1])
		}
		return deep(a[0]) + mulCap(shallow(a[0]), uint(len(glue)))
	},
	"string":     func(a []any) uint { return deep(a[0]) },
	"toJSON":     func(a []any) uint { return mulCap(deep(a[0]), 6) }, // \u00XX escapes
	"fromJSON":   func(a []any) uint { return deep(a[0]) },
	"toBase64":   func(a []any) uint { return deep(a[0])*4/3 + 4 },
	"fromBase64": func(a []any) uint { return deep(a[0]) },
	"upper":      func(a []any) uint { return deep(a[0]) },
	"lower":      func(a []any) uint { return deep(a[0]) },
	"split":      func(a []any) uint { return deep(a[0]) },
	"splitAfter": func(a []any) uint { return deep(a[0]) },
	"reverse":    func(a []any) uint { return shallow(a[0]) },
	"uniq":       func(a []any) uint { return shallow(a[0]) },
	"sort":       func(a []any) uint { return shallow(a[0]) },
	"take":       func(a []any) uint { return shallow(a[0]) },
	"keys":       func(a []any) uint { return shallow(a[0]) },
	"values":     func(a []any) uint { return shallow(a[0]) },
	"toPairs":    func(a []any) uint { return mulCap(shallow(a[0]), 3) },
	"fromPairs":  func(a []any) uint { return shallow(a[0]) },
	"concat":     func(a []any) uint { return sumCap(a, shallow) },
	"flatten":    func(a []any) uint { return flatCost(a[0]) },
}

// counter is one evaluation's charge against Budget, reached by the rewritten builtins
// through a hidden variable (a compiled program is shared by concurrent evaluations).
type counter struct{ used uint }

func (c *counter) charge(n uint, what string) error {
	c.used += n
	if c.used > Budget {
		return fmt.Errorf("%s: the rule used more than its budget of %d units: %w", what, Budget, ErrBudget)
	}
	return nil
}

const (
	budgetVar   = "__perfdag_budget"
	tickName    = "__perfdag_tick"
	concatName  = "__perfdag_concat"
	addName     = "__perfdag_add"
	boundPrefix = "__perfdag_"
)

var counterType = reflect.TypeFor[*counter]()

// options are the compile options that bound evaluation: rule size, the charged builtins, a
// charge per predicate iteration, and `+` of strings charged like a built string. env gets
// the hidden counter variable.
func options(env map[string]any) []expr.Option {
	env[budgetVar] = (*counter)(nil)
	return []expr.Option{expr.Env(env), expr.MaxNodes(MaxRuleNodes), expr.Patch(charger{}), func(c *conf.Config) {
		for name, cost := range costs {
			c.Functions[boundPrefix+name] = charged(builtin.Builtins[builtin.Index[name]], cost)
		}
		c.Functions[tickName] = &builtin.Function{Name: tickName,
			Func: func(a ...any) (any, error) {
				return true, a[0].(*counter).charge(1, "loop iterations")
			},
			Types: []reflect.Type{reflect.FuncOf([]reflect.Type{counterType}, []reflect.Type{reflect.TypeFor[bool]()}, false)}}
		c.Functions[concatName] = &builtin.Function{Name: concatName,
			Func: func(a ...any) (any, error) {
				x, y := a[1].(string), a[2].(string)
				if err := a[0].(*counter).charge(uint(len(x)+len(y)), "string concatenation"); err != nil {
					return nil, err
				}
				return x + y, nil
			},
			Types: []reflect.Type{reflect.TypeFor[func(*counter, string, string) string]()}}
		c.Functions[addName] = &builtin.Function{Name: addName,
			Func: func(a ...any) (any, error) {
				x, xs := a[1].(string)
				y, ys := a[2].(string)
				if !xs || !ys {
					return runtime.Add(a[1], a[2]), nil
				}
				if err := a[0].(*counter).charge(uint(len(x)+len(y)), "string concatenation"); err != nil {
					return nil, err
				}
				return x + y, nil
			},
			Types: []reflect.Type{reflect.TypeFor[func(*counter, any, any) any]()}}
	}}
}

// charged is a builtin taking the counter first: it refuses a call whose result alone passes
// Budget before building it, and charges the result's size to the evaluation.
func charged(f *builtin.Function, cost func([]any) uint) *builtin.Function {
	call := func(args ...any) (any, error) {
		switch {
		case f.Func != nil:
			return f.Func(args...)
		case f.Safe != nil:
			out, _, err := f.Safe(args...)
			return out, err
		}
		return f.Fast(args[0]), nil
	}
	g := &builtin.Function{Name: boundPrefix + f.Name, Deref: f.Deref}
	g.Func = func(args ...any) (any, error) {
		n := cost(args[1:])
		if n > Budget {
			return nil, fmt.Errorf("%s would build %d units, more than the budget of %d: %w", f.Name, n, Budget, ErrBudget)
		}
		if err := args[0].(*counter).charge(n, f.Name); err != nil {
			return nil, err
		}
		return call(args[1:]...)
	}
	for _, t := range f.Types {
		in := []reflect.Type{counterType}
		for i := range t.NumIn() {
			in = append(in, t.In(i))
		}
		out := make([]reflect.Type, t.NumOut())
		for i := range out {
			out[i] = t.Out(i)
		}
		g.Types = append(g.Types, reflect.FuncOf(in, out, t.IsVariadic()))
	}
	if f.Validate != nil {
		g.Validate = func(args []reflect.Type) (reflect.Type, error) { return f.Validate(args[1:]) }
	}
	if f.Deref != nil {
		g.Deref = func(i int, t reflect.Type) bool { return i > 0 && f.Deref(i-1, t) }
	}
	return g
}

// charger rewrites a rule before it compiles: the listed builtins become their charged
// versions, every predicate body first calls the tick (one unit per iteration), and `+` of
// two strings (or of untyped values, which may be strings) becomes a charged concatenation.
type charger struct{}

func budgetArg() ast.Node { return &ast.IdentifierNode{Value: budgetVar} }

func (charger) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.BuiltinNode:
		if _, ok := costs[n.Name]; ok {
			ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: boundPrefix + n.Name},
				Arguments: append([]ast.Node{budgetArg()}, n.Arguments...)})
		}
	case *ast.PredicateNode:
		if seq, ok := n.Node.(*ast.SequenceNode); ok && isTick(seq) {
			return
		}
		n.Node = &ast.SequenceNode{Nodes: []ast.Node{&ast.CallNode{Callee: &ast.IdentifierNode{Value: tickName}, Arguments: []ast.Node{budgetArg()}}, n.Node}}
	case *ast.BinaryNode:
		switch {
		case n.Operator != "+":
		case isString(n.Left) && isString(n.Right):
			ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: concatName}, Arguments: []ast.Node{budgetArg(), n.Left, n.Right}})
		case isAny(n.Left) || isAny(n.Right): // untyped (free-form results): charged when strings
			ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: addName}, Arguments: []ast.Node{budgetArg(), n.Left, n.Right}})
		}
	}
}

func isTick(seq *ast.SequenceNode) bool {
	if len(seq.Nodes) == 0 {
		return false
	}
	c, ok := seq.Nodes[0].(*ast.CallNode)
	if !ok {
		return false
	}
	id, ok := c.Callee.(*ast.IdentifierNode)
	return ok && id.Value == tickName
}

func isString(n ast.Node) bool {
	t := n.Type()
	return t != nil && t.Kind() == reflect.String
}

func isAny(n ast.Node) bool {
	t := n.Type()
	return t == nil || t.Kind() == reflect.Interface
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// shallow is the element count of an array or map (1 for anything else).
func shallow(v any) uint {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String:
		return uint(rv.Len())
	}
	return 1
}

// deep is the size of a value with every string's bytes and every element counted, stopping
// just past Budget (an array holding one big string a thousand times is a thousand copies
// once serialized).
func deep(v any) uint {
	var n uint
	var walk func(rv reflect.Value)
	walk = func(rv reflect.Value) {
		if n > Budget {
			return
		}
		switch rv.Kind() {
		case reflect.Interface, reflect.Pointer:
			if !rv.IsNil() {
				walk(rv.Elem())
			}
		case reflect.String:
			n += uint(rv.Len())
		case reflect.Slice, reflect.Array:
			n += uint(rv.Len())
			for i := 0; i < rv.Len() && n <= Budget; i++ {
				walk(rv.Index(i))
			}
		case reflect.Map:
			n += uint(rv.Len())
			for it := rv.MapRange(); it.Next() && n <= Budget; {
				walk(it.Key())
				walk(it.Value())
			}
		default:
			n++
		}
	}
	walk(reflect.ValueOf(v))
	return n
}

func flatCost(v any) uint {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return 1
	}
	var n uint
	for i := 0; i < rv.Len() && n <= Budget; i++ {
		n += 1 + flatCost(rv.Index(i).Interface())
	}
	return n
}

func mulCap(a, b uint) uint {
	if a != 0 && b > (Budget+1)/a+1 {
		return Budget + 1
	}
	return a * b
}

func sumCap(args []any, f func(any) uint) uint {
	var n uint
	for _, a := range args {
		n += f(a)
		if n > Budget {
			return n
		}
	}
	return n
}

// run evaluates a program under Budget with a fresh counter; a budget stop is an ErrBudget
// error (expr's own memory budget, for ranges and literals, included).
func run(p *vm.Program, env map[string]any) (any, error) {
	scoped := make(map[string]any, len(env)+1)
	for k, v := range env {
		scoped[k] = v
	}
	scoped[budgetVar] = &counter{}
	m := vm.VM{MemoryBudget: Budget}
	out, err := m.Run(p, scoped)
	if err != nil && !errors.Is(err, ErrBudget) && strings.Contains(err.Error(), "memory budget exceeded") {
		err = fmt.Errorf("%w: %w", ErrBudget, err)
	}
	return out, err
}

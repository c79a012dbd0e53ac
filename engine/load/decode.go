package load

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/perfdag/perfdag/engine/diag"
)

// decoder walks goccy's AST straight into typed structs, so every value keeps its position and
// every mistake of a file is reported, not just the first (Dagu lost positions by decoding
// through maps; a plain Unmarshal stops at the first error).
type decoder struct {
	file    string
	diags   *diag.List
	nodes   map[string]ast.Node         // path → value node, for positioning later checks
	keys    map[string]ast.Node         // path → key node
	aliases map[*ast.AliasNode]ast.Node // alias → the anchored value it names (aliasPass)
	bad     map[string]bool             // paths whose value failed to decode: later checks stay quiet
	unknown map[string]bool             // mappings holding an unknown key: it may be the missing one
	badNode map[ast.Node]bool           // nodes already reported (e.g. an unset ${VAR})
}

func newDecoder(file string, diags *diag.List) *decoder {
	return &decoder{file: file, diags: diags, nodes: map[string]ast.Node{}, keys: map[string]ast.Node{},
		aliases: map[*ast.AliasNode]ast.Node{}, bad: map[string]bool{}, unknown: map[string]bool{}, badNode: map[ast.Node]bool{}}
}

// errorf records a problem at a node.
func (d *decoder) errorf(n ast.Node, hint, format string, args ...any) {
	line, col := pos(n)
	d.diags.Add(d.file, line, col, hint, format, args...)
}

func pos(n ast.Node) (int, int) {
	if n == nil {
		return 0, 0
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return 0, 0
	}
	return tk.Position.Line, tk.Position.Column
}

// unwrap resolves tags, anchors and aliases down to the node holding the value. The alias
// pass has refused cycles, so the loop ends; the bound is only a guard.
func (d *decoder) unwrap(n ast.Node) ast.Node {
	for range MaxDepth {
		switch v := n.(type) {
		case *ast.TagNode:
			n = v.Value
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			target, ok := d.aliases[v]
			if !ok {
				return n
			}
			n = target
		default:
			return n
		}
	}
	return n
}

// ExtensionPrefix marks top-level keys perfdag ignores (x-endpoint: &ep {...}), so blocks
// shared with merge keys (<<: *ep) can be anchored somewhere that is not itself a campaign key.
const ExtensionPrefix = "x-"

var unmarshalerType = reflect.TypeFor[interface {
	UnmarshalYAML(func(any) error) error
}]()

// decode fills v (addressable) from node, recording problems under path.
func (d *decoder) decode(node ast.Node, v reflect.Value, path string) {
	node = d.unwrap(node)
	d.nodes[path] = node
	if _, isNull := node.(*ast.NullNode); isNull || node == nil {
		return
	}
	if reflect.PointerTo(v.Type()).Implements(unmarshalerType) {
		d.leaf(node, v, path)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(node, v.Elem(), path)
	case reflect.Struct:
		d.decodeStruct(node, v, path)
	case reflect.Slice:
		seq, ok := node.(*ast.SequenceNode)
		if !ok {
			d.bad[path] = true
			d.errorf(node, "", "%s: want a list, got %s", label(path), describe(node))
			return
		}
		out := reflect.MakeSlice(v.Type(), len(seq.Values), len(seq.Values))
		for i, item := range seq.Values {
			d.decode(item, out.Index(i), indexPath(path, i))
		}
		v.Set(out)
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			d.leaf(node, v, path)
			return
		}
		d.decodeMap(node, v, path)
	case reflect.Interface:
		if val := d.value(node, path); val != nil {
			v.Set(reflect.ValueOf(val))
		}
	default:
		d.leaf(node, v, path)
	}
}

// leaf decodes a scalar, free-form map or custom type, checking the YAML type first so the
// message speaks YAML ("want an integer, got a string") instead of Go.
func (d *decoder) leaf(node ast.Node, v reflect.Value, path string) {
	if !reflect.PointerTo(v.Type()).Implements(unmarshalerType) {
		if want, ok := compatible(node, v.Type()); !ok {
			d.bad[path] = true
			d.errorf(node, "", "%s: want %s, got %s", label(path), want, describe(node))
			return
		}
	}
	tmp := reflect.New(v.Type())
	if err := yaml.NodeToValue(node, tmp.Interface()); err != nil {
		msg := err.Error()
		var yerr yaml.Error
		if errors.As(err, &yerr) {
			msg = yerr.GetMessage()
		}
		d.bad[path] = true
		d.errorf(d.inner(node, path, msg), "", "%s: %s", label(path), firstLine(msg))
		return
	}
	v.Set(tmp.Elem())
	d.index(node, path)
}

// inner is where a custom type's error belongs: the nested key its message starts with
// ("requests_per_point.auto.mx: unknown key" points at mx), else the value itself.
func (d *decoder) inner(node ast.Node, path, msg string) ast.Node {
	d.index(node, path)
	base := path[strings.LastIndexAny(path, ".]")+1:]
	at, best := node, 0
	for k, n := range d.keys {
		rel, ok := strings.CutPrefix(k, path+".")
		if ok && strings.HasPrefix(msg, base+"."+rel+":") && len(rel) > best {
			at, best = n, len(rel)
		}
	}
	return at
}

// index records the positions of a custom type's nested keys and values (requests_per_point's
// {auto: {metric: ...}}), so later checks point at the key they are about.
func (d *decoder) index(node ast.Node, path string) {
	pairs, ok := mappingPairs(d.unwrap(node))
	if !ok {
		return
	}
	for _, kv := range pairs {
		child := join(path, keyString(kv.Key))
		d.keys[child] = kv.Key
		d.nodes[child] = d.unwrap(kv.Value)
		d.index(kv.Value, child)
	}
}

func (d *decoder) decodeStruct(node ast.Node, v reflect.Value, path string) {
	pairs, ok := d.pairs(node, path)
	if !ok {
		d.bad[path] = true
		d.errorf(node, "", "%s: want a mapping of keys, got %s", label(path), describe(node))
		return
	}
	fields := fieldsOf(v.Type())
	seen := map[string]bool{}
	for _, kv := range pairs {
		key := keyString(kv.Key)
		if path == "" && strings.HasPrefix(key, ExtensionPrefix) {
			continue // x-shared: &base {...}: a place for anchors, read by nothing
		}
		child := join(path, key)
		d.keys[child] = kv.Key
		if seen[key] {
			d.errorf(kv.Key, "remove one of the two", "%s: key %q appears twice", label(path), key)
			continue
		}
		seen[key] = true
		idx, ok := fields[key]
		if !ok {
			hint := hintFor(key, fields)
			d.unknown[path] = true
			if near := diag.Nearest(key, mapNames(fields)); near != "" {
				d.bad[join(path, near)] = true // "concurrency:" was meant: do not also say it is missing
			}
			d.errorf(kv.Key, hint, "unknown key %q in %s", key, label(path))
			continue
		}
		d.decode(kv.Value, v.FieldByIndex(idx), child)
	}
}

// decodeMap fills a map keyed by name (endpoints, tolerances, free-form extra), each value
// decoded at its own path so it keeps its position.
func (d *decoder) decodeMap(node ast.Node, v reflect.Value, path string) {
	pairs, ok := d.pairs(node, path)
	if !ok {
		d.bad[path] = true
		d.errorf(node, "", "%s: want a mapping of names, got %s", label(path), describe(node))
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(pairs))
	for _, kv := range pairs {
		key := keyString(kv.Key)
		child := join(path, key)
		d.keys[child] = kv.Key
		if m.MapIndex(reflect.ValueOf(key).Convert(v.Type().Key())).IsValid() {
			d.errorf(kv.Key, "remove one of the two", "%s: name %q appears twice", label(path), key)
			continue
		}
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(kv.Value, elem, child)
		m.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), elem)
	}
	v.Set(m)
}

func mappingPairs(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}, true
	}
	return nil, false
}

func keyString(k ast.MapKeyNode) string {
	if tk := k.GetToken(); tk != nil {
		return tk.Value
	}
	return strings.TrimSpace(k.String())
}

// fieldsOf maps yaml keys to field index paths, flattening inline structs.
func fieldsOf(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("yaml")
			if tag == "-" || !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(append([]int{}, prefix...), i)
			if strings.Contains(opts, "inline") {
				walk(f.Type, idx)
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			out[name] = idx
		}
	}
	walk(t, nil)
	return out
}

func mapNames(fields map[string][]int) []string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func hintFor(key string, fields map[string][]int) string {
	names := mapNames(fields)
	if h := diag.DidYouMean(key, names); h != "" {
		return h
	}
	return "valid keys here: " + strings.Join(names, ", ")
}

// compatible reports whether a YAML node can fill a Go type, and what was wanted.
func compatible(n ast.Node, t reflect.Type) (string, bool) {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		_, ok := n.(*ast.IntegerNode)
		return "an integer", ok
	case reflect.Float64, reflect.Float32:
		switch n.(type) {
		case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
			return "a number", true
		}
		return "a number", false
	case reflect.Bool:
		_, ok := n.(*ast.BoolNode)
		return "true or false", ok
	case reflect.String:
		switch n.(type) {
		case *ast.MappingNode, *ast.MappingValueNode, *ast.SequenceNode:
			return "a string", false
		}
		return "a string", true
	case reflect.Map:
		_, ok := mappingPairs(n)
		return "a mapping", ok
	case reflect.Slice:
		_, ok := n.(*ast.SequenceNode)
		return "a list", ok
	}
	return "", true
}

// describe names a node's YAML type and value for messages.
func describe(n ast.Node) string {
	switch v := n.(type) {
	case *ast.StringNode:
		return "the string " + strconv.Quote(v.Value)
	case *ast.LiteralNode:
		return "a block string"
	case *ast.IntegerNode:
		return "the integer " + v.GetToken().Value
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "the number " + v.GetToken().Value
	case *ast.BoolNode:
		return "the boolean " + v.GetToken().Value
	case *ast.SequenceNode:
		return "a list"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.NullNode:
		return "null"
	}
	if n == nil {
		return "nothing"
	}
	return strings.ToLower(n.Type().String())
}

func indexPath(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// label names a path for messages; the top level is "the campaign".
func label(path string) string {
	if path == "" {
		return "the campaign"
	}
	return path
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// position returns the line and column of a token, or zeros.
func position(tk *token.Token) (int, int) {
	if tk == nil || tk.Position == nil {
		return 0, 0
	}
	return tk.Position.Line, tk.Position.Column
}

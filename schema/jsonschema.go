package schema

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// schemaer lets a type describe itself when reflection cannot (Count, Duration).
type schemaer interface{ JSONSchema() map[string]any }

// schemaTweaker lets a struct add to the schema reflection made of it what its tags cannot say
// (SLO: at least one key, each above zero), its keys still listed and documented as fields.
type schemaTweaker interface{ TweakSchema(s map[string]any) }

// JSONSchema generates the campaign file's JSON Schema from the Go types, so editors and the
// loader can never disagree (go-task's hand-kept schema drifted; this one cannot). enums add
// the values only a registry knows, by key path ("pipeline[].kind": the step kinds).
func JSONSchema(enums map[string][]string) ([]byte, error) {
	root := typeSchema(reflect.TypeFor[Campaign]())
	for path, values := range enums {
		if node := lookup(root, path); node != nil {
			node["enum"] = values
		}
	}
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = "https://perfdag.dev/schema/campaign.schema.json"
	root["title"] = "perfdag campaign"
	// x- keys hold blocks shared through merge keys (x-endpoint: &ep {...}); perfdag ignores them.
	root["patternProperties"] = map[string]any{"^x-": map[string]any{}}
	b, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// lookup finds the schema node of a key path ("pipeline[].kind"), nil when there is none.
func lookup(node map[string]any, path string) map[string]any {
	for _, part := range strings.Split(path, ".") {
		list := strings.HasSuffix(part, "[]")
		props, _ := node["properties"].(map[string]any)
		next, _ := props[strings.TrimSuffix(part, "[]")].(map[string]any)
		if next == nil {
			return nil
		}
		if list {
			if next, _ = next["items"].(map[string]any); next == nil {
				return nil
			}
		}
		node = next
	}
	return node
}

// Field is one documented key of the campaign file, for generated docs.
type Field struct {
	Path string // dotted path, [] for list items
	Type string // with its range when it has one: "integer 1..100000"
	Doc  string
}

// Range reads a numeric field's `range:"min,max"` tag: the bounds `validate` enforces and the
// JSON Schema states as minimum/maximum. For a list or map of numbers the range applies to
// every element. ok is false when the field has no range.
func Range(tag reflect.StructTag) (lo, hi float64, ok bool) {
	r := tag.Get("range")
	if r == "" {
		return 0, 0, false
	}
	a, b, found := strings.Cut(r, ",")
	lo, err1 := strconv.ParseFloat(a, 64)
	hi, err2 := strconv.ParseFloat(b, 64)
	if !found || err1 != nil || err2 != nil || lo > hi {
		panic("schema: malformed range tag " + strconv.Quote(r)) // a programming error in the types
	}
	return lo, hi, true
}

// FieldRange is the range tag of T's field, for a command-line flag that sets the same value
// as the field's key: the flag takes what the campaign file would, no more.
func FieldRange[T any](field string) (lo, hi float64) {
	f, found := reflect.TypeFor[T]().FieldByName(field)
	if found {
		lo, hi, found = Range(f.Tag)
	}
	if !found {
		panic("schema: no range tag on " + reflect.TypeFor[T]().Name() + "." + field) // a programming error
	}
	return lo, hi
}

// FormatBound prints a range bound the way the docs and messages show it (no exponent).
func FormatBound(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Fields lists every key of the campaign file with its documentation, in declaration order.
func Fields() []Field {
	var out []Field
	walkFields(reflect.TypeFor[Campaign](), "", &out, map[reflect.Type]bool{})
	return out
}

// FieldsOf lists the keys of a parameter struct (a kind's `with:`) as Fields lists the
// campaign file's, so every `with:` key can be documented from its type.
func FieldsOf(params any) []Field {
	var out []Field
	walkFields(reflect.TypeOf(params), "", &out, map[reflect.Type]bool{})
	return out
}

func walkFields(t reflect.Type, prefix string, out *[]Field, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for _, f := range structFields(t) {
		path := f.name
		if prefix != "" {
			path = prefix + "." + f.name
		}
		typ := typeName(f.typ)
		if f.hasRange {
			typ += " " + FormatBound(f.lo) + ".." + FormatBound(f.hi)
		}
		*out = append(*out, Field{Path: path, Type: typ, Doc: f.doc})
		if f.typ.Implements(reflect.TypeFor[schemaer]()) {
			continue // describes itself (Count, Duration): its Go fields are not YAML keys
		}
		ft := f.typ
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch ft.Kind() {
		case reflect.Struct:
			walkFields(ft, path, out, seen)
		case reflect.Slice:
			walkFields(ft.Elem(), path+"[]", out, seen)
		case reflect.Map:
			walkFields(ft.Elem(), path+".<name>", out, seen)
		}
	}
}

func typeName(t reflect.Type) string {
	if t.Implements(reflect.TypeFor[schemaer]()) {
		return strings.ToLower(t.Name())
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeName(t.Elem())
	case reflect.Slice:
		return "list of " + typeName(t.Elem())
	case reflect.Map:
		return "map of " + typeName(t.Elem())
	case reflect.Struct:
		return "mapping"
	case reflect.Interface:
		return "any"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	}
	return t.Kind().String()
}

type structField struct {
	name     string
	typ      reflect.Type
	doc      string
	enum     []string
	required bool
	hasRange bool
	lo, hi   float64
}

// structFields flattens inline fields and reads the yaml, doc and enum tags.
func structFields(t reflect.Type) []structField {
	var out []structField
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("yaml")
		if tag == "-" || !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(opts, "inline") {
			out = append(out, structFields(sf.Type)...)
			continue
		}
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		f := structField{name: name, typ: sf.Type, doc: sf.Tag.Get("doc"), required: !strings.Contains(opts, "omitempty")}
		if e := sf.Tag.Get("enum"); e != "" {
			f.enum = strings.Split(e, ",")
		}
		f.lo, f.hi, f.hasRange = Range(sf.Tag)
		out = append(out, f)
	}
	return out
}

func typeSchema(t reflect.Type) map[string]any {
	if t.Implements(reflect.TypeFor[schemaer]()) {
		return reflect.Zero(t).Interface().(schemaer).JSONSchema()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeSchema(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": typeSchema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": typeSchema(t.Elem())}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Struct:
		props := map[string]any{}
		var required []string
		for _, f := range structFields(t) {
			s := typeSchema(f.typ)
			if f.doc != "" {
				s["description"] = f.doc
			}
			if len(f.enum) > 0 {
				s["enum"] = f.enum
			}
			if f.hasRange {
				bound(s, f.lo, f.hi)
			}
			props[f.name] = s
			if f.required {
				required = append(required, f.name)
			}
		}
		out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			out["required"] = required
		}
		if tw, ok := reflect.Zero(t).Interface().(schemaTweaker); ok {
			tw.TweakSchema(out)
		}
		return out
	}
	return map[string]any{}
}

// bound puts a range on a number's schema, or on the elements of a list or map of numbers.
func bound(s map[string]any, lo, hi float64) {
	switch s["type"] {
	case "array":
		bound(s["items"].(map[string]any), lo, hi)
	case "object":
		bound(s["additionalProperties"].(map[string]any), lo, hi)
	default:
		s["minimum"], s["maximum"] = lo, hi
	}
}

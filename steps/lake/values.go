package lake

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
)

// encodeJSON is compact JSON that keeps "<", ">" and "&" as written.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// fieldIndex maps a struct type's JSON field names to their field index paths (embedded
// structs without a JSON name are flattened, as encoding/json does).
func fieldIndex(t reflect.Type, prefix []int, out map[string][]int) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		idx := append(slices.Clone(prefix), i)
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			fieldIndex(f.Type, idx, out)
			continue
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = idx
	}
}

// extractor reads one table's typed column values out of records of one struct type.
type extractor struct {
	t     Table
	typ   reflect.Type
	index [][]int // per column: the field's index path; nil for computed columns
}

func newExtractor(t Table, typ reflect.Type) (*extractor, error) {
	fields := map[string][]int{}
	fieldIndex(typ, nil, fields)
	x := &extractor{t: t, typ: typ, index: make([][]int, len(t.Columns))}
	for i, c := range t.Columns {
		if c.Field == "" {
			continue
		}
		idx, ok := fields[c.Field]
		if !ok {
			return nil, fmt.Errorf("%s.%s: record %s has no field %q", t.Name, c.Name, typ, c.Field)
		}
		x.index[i] = idx
	}
	return x, nil
}

// values turns one record (a pointer to the extractor's struct type) into the table's column
// values, in column order: string, int64, float64, bool, JSON text, or nil for NULL. A nil
// pointer, an empty list or map, and an empty string in a nullable text column are NULL —
// exactly what the record's JSON (row_json) omits or writes as null. computed holds the
// columns without a Field, except row_json, which is the record's JSON.
func (x *extractor) values(record any, computed map[string]any) ([]any, error) {
	rv := reflect.ValueOf(record)
	if rv.Kind() != reflect.Pointer || rv.Elem().Type() != x.typ {
		return nil, fmt.Errorf("%s: record is %T, want *%s", x.t.Name, record, x.typ)
	}
	rv = rv.Elem()
	out := make([]any, len(x.t.Columns))
	for i, c := range x.t.Columns {
		if x.index[i] == nil {
			if c.Name == ColRowJSON {
				raw, err := encodeJSON(record)
				if err != nil {
					return nil, fmt.Errorf("encode %s record: %w", x.t.Name, err)
				}
				out[i] = string(raw)
				continue
			}
			v, ok := computed[c.Name]
			if !ok {
				return nil, fmt.Errorf("%s.%s: no value computed (a bug in the publisher)", x.t.Name, c.Name)
			}
			out[i] = v
			continue
		}
		v, err := column(c, rv.FieldByIndex(x.index[i]))
		if err != nil {
			return nil, fmt.Errorf("%s.%s (field %s): %w", x.t.Name, c.Name, c.Field, err)
		}
		out[i] = v
	}
	return out, nil
}

// column converts one field to its column value.
func column(c Column, f reflect.Value) (any, error) {
	if f.Kind() == reflect.Pointer {
		if f.IsNil() {
			if c.Null {
				return nil, nil
			}
			f = reflect.Zero(f.Type().Elem())
		} else {
			f = f.Elem()
		}
	}
	if c.JSON {
		if (f.Kind() == reflect.Slice || f.Kind() == reflect.Map) && f.Len() == 0 && c.Null {
			return nil, nil
		}
		b, err := encodeJSON(f.Interface())
		if err != nil {
			return nil, err
		}
		return string(b), nil
	}
	if tm, ok := f.Interface().(encoding.TextMarshaler); ok && c.Type == Text && f.Kind() == reflect.Struct {
		b, err := tm.MarshalText() // a key type: a point's load
		if err != nil {
			return nil, err
		}
		if len(b) == 0 && c.Null {
			return nil, nil
		}
		return string(b), nil
	}
	switch {
	case c.Type == Text && f.Kind() == reflect.String:
		if f.Len() == 0 && c.Null {
			return nil, nil
		}
		return f.String(), nil
	case c.Type == BigInt && f.CanInt():
		return f.Int(), nil
	case c.Type == Double && f.CanFloat():
		x := f.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v is not a finite number", x)
		}
		return x, nil
	case c.Type == Boolean && f.Kind() == reflect.Bool:
		return f.Bool(), nil
	}
	return nil, fmt.Errorf("a %s does not fit a %s column", f.Type(), c.Type)
}

// normalize turns a value read back from either engine into the column's Go type, so rows
// from SQLite (booleans as 0/1, integral reals) and PostgreSQL compare equal.
func normalize(c Column, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch c.Type {
	case Boolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			return x != 0, nil
		}
	case BigInt:
		switch x := v.(type) {
		case int64:
			return x, nil
		case int32:
			return int64(x), nil
		case float64:
			if x == math.Trunc(x) {
				return int64(x), nil
			}
		}
	case Double:
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		}
	default: // Text and JSON
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	}
	return nil, fmt.Errorf("column %s: read %v (%T), want %s", c.Name, v, v, c.Type)
}

package lake_test

import (
	"encoding"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/lake"
	"github.com/perfdag/perfdag/steps/testkit"
)

// TestSchemaGolden keeps testdata/schema.sql, the documented DDL, equal to what Schema() runs.
func TestSchemaGolden(t *testing.T) {
	testkit.Golden(t, filepath.Join("testdata", "schema.sql"), []byte(lake.Schema()))
}

// jsonField is one field of a record type as encoding/json writes it.
type jsonField struct {
	typ       reflect.Type
	omitempty bool
}

func jsonFields(t reflect.Type, out map[string]jsonField) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			jsonFields(f.Type, out)
			continue
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		out[name] = jsonField{typ: f.Type, omitempty: strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")}
	}
}

// TestColumnsMatchRecords: every typed column reads a field its record really has, with a
// column type and nullability that fit the Go type, and every scalar field has a column.
func TestColumnsMatchRecords(t *testing.T) {
	records := map[string]any{
		lake.AtlasTable: schema.AtlasRow{}, lake.CampaignTable: schema.CampaignRow{}, lake.TPMTable: schema.TPMRow{},
		lake.CostTable: schema.CostRow{}, lake.RooflineTable: schema.RooflineRow{}, lake.HistoryTable: schema.HistoryRow{},
	}
	for _, tb := range lake.Tables() {
		t.Run(tb.Name, func(t *testing.T) {
			fields := map[string]jsonField{}
			jsonFields(reflect.TypeOf(records[tb.Name]), fields)
			used := map[string]bool{"schema": true} // the table name is the schema
			names := map[string]bool{}
			for _, c := range tb.Columns {
				if names[c.Name] {
					t.Errorf("column %s appears twice", c.Name)
				}
				names[c.Name] = true
				if c.Field == "" {
					continue
				}
				f, ok := fields[c.Field]
				if !ok {
					t.Errorf("column %s reads field %q, which %T does not have", c.Name, c.Field, records[tb.Name])
					continue
				}
				used[c.Field] = true
				typ, ptr := f.typ, false
				if typ.Kind() == reflect.Pointer {
					typ, ptr = typ.Elem(), true
				}
				var want lake.Type
				textKey := typ.Kind() == reflect.Struct && typ.Implements(reflect.TypeFor[encoding.TextMarshaler]())
				switch {
				case textKey: // a key type (a point's load) is stored as its text
					want = lake.Text
				case typ.Kind() == reflect.String:
					want = lake.Text
				case typ.Kind() == reflect.Int, typ.Kind() == reflect.Int64:
					want = lake.BigInt
				case typ.Kind() == reflect.Float64:
					want = lake.Double
				case typ.Kind() == reflect.Bool:
					want = lake.Boolean
				case typ.Kind() == reflect.Slice, typ.Kind() == reflect.Map, typ.Kind() == reflect.Struct:
					want = lake.JSON
					if !c.JSON {
						t.Errorf("column %s holds a %s but is not marked JSON", c.Name, typ)
					}
				}
				if c.Type != want {
					t.Errorf("column %s is %s, field %s is %s (want %s)", c.Name, c.Type, c.Field, f.typ, want)
				}
				nullable := ptr || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map ||
					(f.omitempty && (typ.Kind() == reflect.String || textKey))
				if c.Null != nullable {
					t.Errorf("column %s: Null = %t, but field %s (%s, omitempty %t) is nullable = %t", c.Name, c.Null, c.Field, f.typ, f.omitempty, nullable)
				}
			}
			for name := range fields {
				if !used[name] {
					t.Errorf("field %s of %T has no column (add one, or it lives only in row_json)", name, records[tb.Name])
				}
			}
			if !names[lake.ColCampaignID] || !names[lake.ColRowJSON] {
				t.Errorf("table lacks campaign_id or row_json")
			}
			if tb.Key[0] != lake.ColCampaignID {
				t.Errorf("key %v must start with campaign_id", tb.Key)
			}
			for _, k := range tb.Key {
				i := slices.IndexFunc(tb.Columns, func(c lake.Column) bool { return c.Name == k })
				if i < 0 || tb.Columns[i].Null {
					t.Errorf("key column %s is missing or nullable", k)
				}
			}
		})
	}
}

func TestInputKey(t *testing.T) {
	tests := []struct {
		name string
		row  schema.AtlasRow
		want float64
	}{
		{"mean input tokens first", schema.AtlasRow{MeanInputTokens: schema.F(1023.5), Extra: map[string]any{"isl": 4096}}, 1023.5},
		{"extra isl as decoded JSON", schema.AtlasRow{Extra: map[string]any{"isl": 4096.0}}, 4096},
		{"extra isl as int", schema.AtlasRow{Extra: map[string]any{"isl": 2048}}, 2048},
		{"neither", schema.AtlasRow{Extra: map[string]any{"isl": "x"}}, -1},
	}
	for _, tt := range tests {
		if got := lake.InputKey(&tt.row); got != tt.want {
			t.Errorf("%s: InputKey = %v, want %v", tt.name, got, tt.want)
		}
	}
}

package schema

import (
	"encoding/json"
	"testing"
)

func TestSchemaShape(t *testing.T) {
	b, _ := JSONSchema(nil)
	var s struct {
		Required   []string                  `json:"required"`
		Properties map[string]map[string]any `json:"properties"`
		Additional bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"version", "campaign", "kind", "endpoints", "defaults", "cells", "settle", "gates", "pipeline", "publish", "schedule", "tpm", "cost"} {
		if _, ok := s.Properties[key]; !ok {
			t.Errorf("top-level key %q missing from the schema", key)
		}
	}
	if s.Additional {
		t.Error("unknown top-level keys must be rejected")
	}
	cells := s.Properties["cells"]["items"].(map[string]any)["properties"].(map[string]any)
	for _, key := range []string{"id", "workload", "concurrencies", "requests_per_point", "hardware", "tensor_parallel"} {
		if _, ok := cells[key]; !ok {
			t.Errorf("cell key %q missing (inline identity fields must be flattened)", key)
		}
	}
	rpp := cells["requests_per_point"].(map[string]any)
	if _, ok := rpp["oneOf"]; !ok {
		t.Errorf("requests_per_point must accept an integer or \"Nx\": %v", rpp)
	}
}

func TestCount(t *testing.T) {
	cases := []struct {
		in        string
		at, want  int
		wantError bool
	}{
		{"3x", 10, 30, false}, {"40", 10, 40, false}, {"1x", 64, 64, false},
		{"0", 1, 0, true}, {"x", 1, 0, true}, {"-2x", 1, 0, true}, {"3.5x", 1, 0, true},
	}
	for _, c := range cases {
		n, err := ParseCount(c.in)
		if (err != nil) != c.wantError {
			t.Errorf("ParseCount(%q) err = %v", c.in, err)
			continue
		}
		if err == nil && n.For(c.at) != c.want {
			t.Errorf("%q at c%d = %d, want %d", c.in, c.at, n.For(c.at), c.want)
		}
	}
	if got := (Count{}).For(2); got != 10 {
		t.Errorf("unset at c2 = %d, want max(10, 3×2) = 10", got)
	}
	if got := (Count{}).For(64); got != 192 {
		t.Errorf("unset at c64 = %d, want 192", got)
	}
}

// FieldsOf documents a parameter struct's keys as Fields does the campaign's: YAML names,
// types with ranges, docs, nested lists, and nothing for `yaml:"-"` or unexported fields.
func TestFieldsOf(t *testing.T) {
	type item struct {
		Name string `yaml:"name" doc:"the item"`
	}
	type params struct {
		Command []string `yaml:"command" doc:"argv"`
		Slo     float64  `yaml:"slo_ms,omitempty" range:"0,600" doc:"threshold"`
		Items   []item   `yaml:"items,omitempty" doc:"items"`
		Skip    string   `yaml:"-"`
		hidden  int
	}
	want := []Field{
		{Path: "command", Type: "list of string", Doc: "argv"},
		{Path: "slo_ms", Type: "number 0..600", Doc: "threshold"},
		{Path: "items", Type: "list of mapping", Doc: "items"},
		{Path: "items[].name", Type: "string", Doc: "the item"},
	}
	got := FieldsOf(&params{hidden: 1})
	if len(got) != len(want) {
		t.Fatalf("FieldsOf = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("field %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

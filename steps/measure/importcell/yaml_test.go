package importcell

import (
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/perfdag/perfdag/schema"
)

func testCell(id string) schema.Cell {
	return schema.Cell{ID: id, Identity: schema.Identity{Model: "m", Engine: "vllm", CacheMode: "cold"},
		Workload: schema.Workload{Shape: "custom", InputTokens: 550, OutputTokens: 16}, Concurrencies: []int{1, 4},
		Import: &schema.CellImport{Format: "vllm-bench", Points: []schema.ImportPoint{{Concurrency: 1, Path: "a.json"}, {Concurrency: 4, Path: "b.json"}}}}
}

const item = `- id: new
  model: m
  engine: vllm
  cache_mode: cold
  workload: {shape: custom, input_tokens: 550, output_tokens: 16}
  concurrencies: [1, 4]
  import:
    format: vllm-bench
    points:
      - concurrency: 1
        path: a.json
      - concurrency: 4
        path: b.json
`

func indented(s string, n int) string {
	pad := strings.Repeat(" ", n)
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(pad + l)
		}
	}
	return b.String()
}

// Append inserts the cell as text after the last line of the cells: list, whatever follows,
// and keeps every other byte of the file.
func TestAppend(t *testing.T) {
	head := "# top comment\nversion: 1\ncampaign: c\nendpoints:\n  e: {url: \"sim://\", model: m}   # spaced comment\n"
	cases := []struct {
		name, src, want string
	}{
		{"list last, comment after",
			head + "cells:\n  - id: a\n    workload: {}\n    concurrencies: [1]\n  # trailing comment\n",
			head + "cells:\n  - id: a\n    workload: {}\n    concurrencies: [1]\n" + indented(item, 2) + "  # trailing comment\n"},
		{"list then other keys",
			head + "cells:\n  - id: a\n    concurrencies: [1]\n\n# gates\ngates: []\n",
			head + "cells:\n  - id: a\n    concurrencies: [1]\n" + indented(item, 2) + "\n# gates\ngates: []\n"},
		{"unindented list, no final newline",
			head + "cells:\n- id: a\n  concurrencies: [1]",
			head + "cells:\n- id: a\n  concurrencies: [1]\n" + item},
		{"empty cells",
			head + "cells:\ngates: []\n",
			head + "cells:\n" + indented(item, 2) + "gates: []\n"},
		{"no cells key",
			head,
			head + "cells:\n" + indented(item, 2)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Append([]byte(tc.src), "c.yaml", []schema.Cell{testCell("new")})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			var back struct {
				Cells []schema.Cell `yaml:"cells"`
			}
			if err := yaml.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			last := back.Cells[len(back.Cells)-1]
			if last.ID != "new" || last.Import == nil || len(last.Import.Points) != 2 || last.Import.Points[1].Path != "b.json" || last.CacheMode != "cold" {
				t.Errorf("the appended cell reads back as %+v", last)
			}
		})
	}
}

func TestAppendRefuses(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"duplicate id", "version: 1\ncells:\n  - {id: new, concurrencies: [1]}\n", `already has a cell "new"`},
		{"flow list", "version: 1\ncells: [{id: a}]\n", "c.yaml:2: cells: written in flow style"},
		{"not a list", "version: 1\ncells: {id: a}\n", "c.yaml:2: cells: not a list"},
		{"not a mapping", "- a\n- b\n", "not a campaign file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Append([]byte(tc.src), "c.yaml", []schema.Cell{testCell("new")})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

package load

import (
	"reflect"
	"strings"
	"testing"
)

func TestMergeKeys(t *testing.T) {
	src := `version: 1
campaign: shared
x-endpoint: &ep {model: m, request_timeout_s: 30}
x-cell: &cell
  workload: {shape: aa-1k, extra_body: {temperature: 0}}
  concurrencies: [1, 8]
  hardware: B200
endpoints:
  a: {<<: *ep, url: "sim://"}
  b: {<<: *ep, url: "http://h:8000", model: other}
cells:
  - {<<: *cell, id: c1, endpoint: a}
  - <<: [*cell, {hardware: H100, requests_per_point: 40}]
    id: c2
    endpoint: b
    concurrencies: [4]
`
	c, l := loadSrc(t, "m.yaml", src, nil)
	if l != nil {
		t.Fatalf("merge keys: %v", l)
	}
	s := c.Spec
	if a, b := s.Endpoints["a"], s.Endpoints["b"]; a.Model != "m" || a.TimeoutS != 30 || b.Model != "other" || b.TimeoutS != 30 || b.URL != "http://h:8000" {
		t.Errorf("endpoints = %+v / %+v", a, b)
	}
	c1, c2 := s.Cells[0], s.Cells[1]
	if c1.ID != "c1" || !reflect.DeepEqual(c1.Concurrencies, []int{1, 8}) || c1.Hardware != "B200" || c1.Workload.ExtraBody["temperature"] != uint64(0) {
		t.Errorf("c1 = %+v", c1)
	}
	// own keys win over merged ones; of two merged blocks, the earlier wins
	if !reflect.DeepEqual(c2.Concurrencies, []int{4}) || c2.Hardware != "B200" || c2.RequestsPerPoint.For(4) != 40 || c2.Workload.Shape != "aa-1k" {
		t.Errorf("c2 = %+v", c2)
	}
}

func TestMergeKeyErrorsArePositioned(t *testing.T) {
	tests := []struct {
		name, src, msg string
		line, col      int
	}{
		// a mistake inside a shared block is reported where the block is written, once
		{"bad value in the base", "version: 1\ncampaign: c\nx-cell: &cell {workload: {}, concurrencies: [0]}\nendpoints:\n  main: {url: \"sim://\", model: m}\ncells:\n  - {<<: *cell, id: a}\n",
			"cells[0].concurrencies[0] must be between 1 and 100000, got 0", 3, 46},
		{"unknown key in the base", "version: 1\ncampaign: c\nx-ep: &ep {modle: m}\nendpoints:\n  main: {<<: *ep, url: \"sim://\", model: m}\ncells: []\n",
			`unknown key "modle" in endpoints.main`, 3, 12},
		{"merge of a scalar", "version: 1\ncampaign: c\nendpoints:\n  main: {<<: 5, url: \"sim://\", model: m}\ncells: []\n",
			"endpoints.main: merge key <<: want a mapping (an alias to one, or a list of them), got the integer 5", 4, 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, l := loadSrc(t, "m.yaml", tt.src, nil)
			if len(l) != 1 || l[0].Line != tt.line || l[0].Col != tt.col || l[0].Message != tt.msg {
				t.Fatalf("problems %v, want exactly %d:%d: %s", l, tt.line, tt.col, tt.msg)
			}
		})
	}
}

// Each file has exactly the listed mistakes; no check may add a problem that only repeats one.
func TestNoCascades(t *testing.T) {
	head := "version: 1\ncampaign: c\nendpoints:\n  main: {url: \"sim://\", model: m}\n"
	tests := []struct {
		name, src string
		want      []string
	}{
		{"wrong-type concurrencies among two more mistakes", head + "cells:\n  - {id: c1, workload: {shape: aa-1k}, concurrencies: [1], warmup_requests: ten}\n  - {id: c2, workload: {shape: aa-1k}, concurrencies: 8}\n  - {id: c3, workload: {shape: aa-1k}, concurrency: [1]}\n",
			[]string{
				`6:77: cells[0].warmup_requests: want an integer, got the string "ten"`,
				"7:55: cells[1].concurrencies: want a list, got the integer 8",
				`8:40: unknown key "concurrency" in cells[2]`,
			}},
		{"endpoints is not a mapping", "version: 1\ncampaign: c\nendpoints: [sim]\ncells:\n  - {id: a, workload: {}, concurrencies: [1]}\n",
			[]string{"3:12: endpoints: want a mapping of names, got a list"}},
		{"an endpoint is a string", "version: 1\ncampaign: c\nendpoints:\n  main: sim://\ncells:\n  - {id: a, workload: {}, concurrencies: [1]}\n",
			[]string{`4:9: endpoints.main: want a mapping of keys, got the string "sim://"`}},
		{"a cell is a string", head + "cells:\n  - aa-1k\n",
			[]string{`6:5: cells[0]: want a mapping of keys, got the string "aa-1k"`}},
		{"a gate is a list", head + "cells:\n  - {id: a, workload: {}, concurrencies: [1]}\ngates:\n  - [x]\n",
			[]string{"8:5: gates[0]: want a mapping of keys, got a list"}},
		{"NaN rate and infinite extra", head + "cells:\n  - {id: a, workload: {request_rate: .nan, extra_body: {x: .inf}}, concurrencies: [1]}\n",
			[]string{
				"6:38: cells[0].workload.request_rate must be a finite number, got NaN",
				"6:60: cells[0].workload.extra_body.x: the number .inf is not a finite number (JSON cannot carry it)",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, l := loadSrc(t, "f.yaml", tt.src, nil)
			var got []string
			for _, d := range l {
				got = append(got, strings.TrimPrefix(d.Error(), "f.yaml:"))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

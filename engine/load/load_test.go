package load

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/diag"
)

func loadFile(t *testing.T, name string, env map[string]string) (*Campaign, diag.List) {
	t.Helper()
	src, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return loadSrc(t, name, string(src), env)
}

func loadSrc(t *testing.T, name, src string, env map[string]string) (*Campaign, diag.List) {
	t.Helper()
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := Bytes(name, ".", []byte(src), testRegistry(t), Options{Lookup: lookup})
	if err == nil {
		return c, nil
	}
	var l diag.List
	if !errors.As(err, &l) {
		t.Fatalf("error is not a diag.List: %v", err)
	}
	return nil, l
}

func TestThreeMistakesThreeErrors(t *testing.T) {
	_, l := loadFile(t, "three-mistakes.yaml", nil)
	want := []struct {
		line, col int
		msg, hint string
	}{
		{8, 5, `unknown key "concurrency"`, `did you mean "concurrencies"?`},
		{11, 24, `want an integer, got the string "ten"`, ""},
		{15, 11, "unknown name nm_prompts", `did you mean "num_prompts"?`},
	}
	if len(l) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(l), len(want), l.Error())
	}
	for i, w := range want {
		d := l[i]
		if d.Line != w.line || d.Col != w.col || !strings.Contains(d.Message, w.msg) || d.Hint != w.hint {
			t.Errorf("problem %d = %d:%d %q (hint %q), want %d:%d %q (hint %q)", i, d.Line, d.Col, d.Message, d.Hint, w.line, w.col, w.msg, w.hint)
		}
		if d.File != "three-mistakes.yaml" {
			t.Errorf("problem %d file = %q", i, d.File)
		}
	}
}

func TestValidFileDecodesEverySection(t *testing.T) {
	c, l := loadFile(t, "valid.yaml", map[string]string{})
	if l != nil {
		t.Fatalf("unexpected problems:\n%s", l.Error())
	}
	s := c.Spec
	if s.Endpoints["main"].URL != "http://vllm.svc:8000" {
		t.Errorf("default interpolation: url = %q", s.Endpoints["main"].URL)
	}
	if got := s.Cells[0].RequestsPerPoint.For(10); got != 30 {
		t.Errorf("3x at c10 = %d, want 30", got)
	}
	if got := s.Cells[1].RequestsPerPoint.For(10); got != 40 {
		t.Errorf("40 at c10 = %d, want 40", got)
	}
	if s.Cells[0].Hardware != "B200" || s.Cells[1].Hardware != "GB300" {
		t.Errorf("defaults merge: hardware %q / %q", s.Cells[0].Hardware, s.Cells[1].Hardware)
	}
	if s.Cells[0].Model != "moonshotai/Kimi-K2.6" || s.Cells[0].GPUs != 8 || s.Cells[0].Endpoint != "main" {
		t.Errorf("cell 0 identity = %+v endpoint %q", s.Cells[0].Identity, s.Cells[0].Endpoint)
	}
	if s.Schedule.CatchupWindow.Hours() != 24 || s.Cost.USDPerGPUHour["B200"] != 4.5 {
		t.Errorf("schedule/cost = %+v %+v", s.Schedule, s.Cost)
	}
	if !c.Default || len(c.Steps) != 4 || len(c.Gates) != 2 {
		t.Errorf("default pipeline %v with %d steps, %d gates", c.Default, len(c.Steps), len(c.Gates))
	}
}

func TestInterpolation(t *testing.T) {
	base := "version: 1\ncampaign: c\nendpoints:\n  main: {url: \"%s\", model: m}\ncells: []\n"
	cases := []struct {
		url, want, err string
		env            map[string]string
	}{
		{"${HOST}", "http://h:1", "", map[string]string{"HOST": "http://h:1"}},
		{"${HOST:-http://d:2}", "http://d:2", "", nil},
		{"http://x/$${HOST}", "http://x/${HOST}", "", nil},
		{"${MISSING}", "", "environment variable MISSING is not set", nil},
	}
	for _, c := range cases {
		src := strings.Replace(base, "%s", c.url, 1)
		camp, l := loadSrc(t, "i.yaml", src, c.env)
		if c.err != "" {
			if len(l) == 0 || !strings.Contains(l[0].Message, c.err) || l[0].Line != 4 {
				t.Errorf("%s: problems %v, want %q at line 4", c.url, l, c.err)
			}
			continue
		}
		if l != nil {
			t.Errorf("%s: %v", c.url, l)
			continue
		}
		if got := camp.Spec.Endpoints["main"].URL; got != c.want {
			t.Errorf("%s → %q, want %q", c.url, got, c.want)
		}
	}
}

func TestBadInputs(t *testing.T) {
	head := "version: 1\ncampaign: c\nendpoints:\n  main: {url: \"sim://\", model: m}\n"
	cells := "cells:\n  - {id: a, workload: {shape: aa-1k}, concurrencies: [1, 2]}\n"
	cases := []struct {
		name, src, want string
		line            int
	}{
		{"slug with slash", "version: 1\ncampaign: ../etc\nendpoints:\n  main: {url: \"sim://\", model: m}\ncells: []\n", "not a valid slug", 2},
		{"cell id is a path", head + "cells:\n  - {id: ../x, workload: {}, concurrencies: [1]}\n", "not a valid id", 6},
		{"duplicate cell id", head + "cells:\n  - {id: a, workload: {}, concurrencies: [1]}\n  - {id: a, workload: {}, concurrencies: [1]}\n", "used twice", 7},
		{"zero concurrency", head + "cells:\n  - {id: a, workload: {}, concurrencies: [0]}\n", "cells[0].concurrencies[0] must be between 1 and 100000, got 0", 6},
		{"duplicate concurrency", head + "cells:\n  - {id: a, workload: {}, concurrencies: [8, 8]}\n", "appears twice", 6},
		{"bad requests_per_point", head + "cells:\n  - {id: a, workload: {}, concurrencies: [1], requests_per_point: 3y}\n", "requests_per_point", 6},
		{"unknown endpoint", head + "cells:\n  - {id: a, endpoint: mian, workload: {}, concurrencies: [1]}\n", "not defined", 6},
		{"unknown kind", head + cells + "pipeline:\n  - {id: x, kind: run-shap}\n", `unknown kind "run-shap"`, 8},
		{"missing need", head + cells + "pipeline:\n  - {id: x, kind: aggregate, needs: [y]}\n", `needs "y"`, 8},
		{"bad foreach", head + cells + "pipeline:\n  - {id: x, kind: aggregate, foreach: cell}\n", "runs per campaign", 8},
		{"bad severity", head + cells + "gates:\n  - {id: g, on: run-shape, rule: num_prompts > 1, severity: warning}\n", "not one of fail, warn", 8},
		{"gate on nothing", head + cells + "gates:\n  - {id: g, on: runshape, rule: num_prompts > 1}\n", "no step id or kind", 8},
		{"rule not boolean", head + cells + "gates:\n  - {id: g, on: run-shape, rule: num_prompts + 1}\n", "expected boolean", 8},
		{"bad with key", head + cells + "pipeline:\n  - {id: x, kind: exec, with: {comand: [ls]}}\n", `unknown key "comand"`, 8},
		{"bad cron", head + cells + "schedule: {cron: \"61 * * * *\"}\n", "schedule.cron", 7},
		{"bad timezone", head + cells + "schedule: {cron: \"0 3 * * 1\", timezone: Mars/Base}\n", "not a known time zone", 7},
		{"two documents", head + cells + "---\nversion: 1\n", "one YAML document", 8},
		{"syntax", "version: 1\ncampaign: [\n", "YAML syntax", 0},
		{"wrong type for cells", head + "cells: {id: a}\n", "want a list", 5},
		{"api key literal", head + "  other: {url: \"http://x\", model: m, api_key_env: sk-123}\n" + cells, "not an environment variable name", 5},
		{"tokenizer basis without a file", head + "  other: {url: \"http://x\", model: m, token_basis: tokenizer}\n" + cells, "token_basis tokenizer needs the tokenizer file", 5},
		{"tokenizer on another basis", head + "  other: {url: \"http://x\", model: m, token_basis: server, tokenizer: t.json}\n" + cells, "tokenizer is only read on the tokenizer basis", 5},
		{"unknown basis", head + "  other: {url: \"http://x\", model: m, token_basis: llama}\n" + cells, "not one of server, o200k_base, tokenizer", 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, l := loadSrc(t, "b.yaml", c.src, nil)
			if len(l) == 0 {
				t.Fatalf("no problem reported, want %q", c.want)
			}
			for _, d := range l {
				if strings.Contains(d.Message, c.want) {
					if c.line != 0 && d.Line != c.line {
						t.Errorf("%q at line %d, want line %d", d.Message, d.Line, c.line)
					}
					return
				}
			}
			t.Errorf("problems %v, want one containing %q", l, c.want)
		})
	}
}

func FuzzLoad(f *testing.F) {
	for _, name := range []string{"valid.yaml", "three-mistakes.yaml"} {
		src, _ := os.ReadFile("testdata/" + name)
		f.Add(src)
	}
	f.Add([]byte("version: 1\ncampaign: x\ncells: [{id: a, concurrencies: [1]}]\npipeline: [{id: p, kind: exec, foreach: point, with: {command: [true]}}]\n"))
	f.Add([]byte("&a [*a]"))
	// hostile shapes: merge keys, aliases that multiply, deep nesting, NaN, huge numbers
	f.Add([]byte(base + "x-c: &c {workload: {}, concurrencies: [1]}\ncells2: [{<<: *c, id: b}]\n"))
	f.Add([]byte(base + "x-a: &a [x, x, x]\nx-b: &b [*a, *a, *a]\nx-c: [*b, *b, *b]\n"))
	f.Add([]byte(base + "x-d: [[[[[[[[[[{a: {b: [1]}}]]]]]]]]]]\n"))
	f.Add([]byte(base + "settle: {settle_s: .nan}\ndefaults: {gpus: -3}\n"))
	f.Add([]byte("version: 1\ncampaign: c\ncells: [{id: a, concurrencies: [4000000000], requests_per_point: 9999999999x}]\n"))
	reg := testRegistry(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		c, err := Bytes("f.yaml", ".", src, reg, Options{Lookup: func(string) (string, bool) { return "", false }})
		if err == nil && c == nil {
			t.Fatal("nil campaign without error")
		}
		var l diag.List
		if err != nil && !errors.As(err, &l) {
			t.Fatalf("error is not positioned: %v", err)
		}
		for _, d := range l {
			_ = d.Format(src) // rendering any position must not panic
		}
	})
}

// Imported points were measured elsewhere: a campaign of imported cells only needs no
// endpoint, while a measured cell still does.
func TestEndpointsOptionalForImportedCells(t *testing.T) {
	imported := "  - {id: i, workload: {shape: aa-1k}, concurrencies: [4], import: {format: vllm-bench, points: [{concurrency: 4, path: r.json}]}}\n"
	if _, l := loadSrc(t, "i.yaml", "version: 1\ncampaign: c\ncells:\n"+imported, nil); l != nil {
		t.Errorf("imported cells without endpoints: %v", l)
	}
	two := "version: 1\ncampaign: c\nendpoints:\n  a: {url: \"sim://\", model: m}\n  b: {url: \"sim://\", model: m}\ncells:\n"
	if _, l := loadSrc(t, "i.yaml", two+imported, nil); l != nil {
		t.Errorf("an imported cell naming none of two endpoints: %v", l)
	}
	_, l := loadSrc(t, "m.yaml", "version: 1\ncampaign: c\ncells:\n"+imported+"  - {id: m, workload: {shape: aa-1k}, concurrencies: [4]}\n", nil)
	if len(l) != 1 || !strings.Contains(l[0].Message, "cell m has no endpoint") || l[0].Line != 5 {
		t.Errorf("a measured cell without an endpoint: %v, want one problem at line 5", l)
	}
}

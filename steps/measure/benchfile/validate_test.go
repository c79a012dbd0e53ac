package benchfile

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// edit changes one file of a format's fixture: old becomes new ("" old: new is the whole
// file). The files: "aiperf" (profile_export_aiperf.json), "aiperf.jsonl" (its records),
// "vllm" (a --save-detailed result), "sglang" (a --output-details line, two requests failed).
type edit struct{ file, old, new, value string }

// hostile is one row of the table: a value no tool writes, the formats it applies to (one
// edit each, with the value as that file then holds it, which the refusal must quote), the
// field each format's refusal names, and more text it says. The expected line is the line
// the edit's new text lands on in the edited file.
type hostile struct {
	name  string
	edits []edit
	field map[string]string // by edited file
	want  string
}

var (
	conc  = map[string]string{"aiperf": "input_config.loadgen.concurrency", "vllm": "max_concurrency", "sglang": "max_concurrency"}
	ttft0 = map[string]string{"aiperf.jsonl": "metrics.time_to_first_token.value", "vllm": "ttfts[0]", "sglang": "ttfts[0]"}
	count = map[string]string{"aiperf": "request_count.avg", "vllm": "completed", "sglang": "completed"}
	dur   = map[string]string{"aiperf": "benchmark_duration.avg", "vllm": "duration", "sglang": "duration"}
	doc   = map[string]string{"aiperf": "(document)", "vllm": "(document)", "sglang": "(document)"}
)

var hostiles = []hostile{
	{"fractional concurrency", []edit{
		{"aiperf", `"concurrency": 4`, `"concurrency": 4.5`, "4.5"},
		{"vllm", `"max_concurrency": 4`, `"max_concurrency": 4.5`, "4.5"},
		{"sglang", `"max_concurrency": 2`, `"max_concurrency": 4.5`, "4.5"}},
		conc, "a concurrency is a whole number from 1 to 100000"},
	{"concurrency beyond an int", []edit{
		{"aiperf", `"concurrency": 4`, `"concurrency": 1e300`, "1e300"},
		{"vllm", `"max_concurrency": 4`, `"max_concurrency": 1e300`, "1e300"},
		{"sglang", `"max_concurrency": 2`, `"max_concurrency": 1e300`, "1e300"}},
		conc, "a concurrency is a whole number from 1 to 100000"},
	{"negative concurrency", []edit{
		{"aiperf", `"concurrency": 4`, `"concurrency": -4`, "-4"},
		{"vllm", `"max_concurrency": 4`, `"max_concurrency": -4`, "-4"},
		{"sglang", `"max_concurrency": 2`, `"max_concurrency": -4`, "-4"}},
		conc, "a concurrency is a whole number from 1"},
	{"negative request TTFT", []edit{
		{"aiperf.jsonl", `"time_to_first_token":{"value":56.334`, `"time_to_first_token":{"value":-56.334`, "-56.334 ms"},
		{"vllm", `"ttfts": [0.056334`, `"ttfts": [-0.056334`, "-0.056334"},
		{"sglang", `"ttfts": [0.05`, `"ttfts": [-0.05`, "-0.05"}},
		ttft0, "a time is a finite number from 0 up to 11.6 days"},
	{"request TTFT of 1e308", []edit{
		{"aiperf.jsonl", `"time_to_first_token":{"value":56.334`, `"time_to_first_token":{"value":1e308`, "1e308 ms"},
		{"vllm", `"ttfts": [0.056334`, `"ttfts": [1e308`, "1e308"},
		{"sglang", `"ttfts": [0.05`, `"ttfts": [1e308`, "1e308"}},
		ttft0, "a time is a finite number from 0 up to 11.6 days"},
	{"request TTFT NaN", []edit{
		{"aiperf.jsonl", `"time_to_first_token":{"value":56.334`, `"time_to_first_token":{"value":NaN`, "NaN"},
		{"vllm", `"ttfts": [0.056334`, `"ttfts": [NaN`, "NaN"},
		{"sglang", `"ttfts": [0.05`, `"ttfts": [NaN`, "NaN"}},
		ttft0, "a time is a finite number"},
	{"TTFT past the request's latency", []edit{
		{"aiperf.jsonl", `"time_to_first_token":{"value":56.334`, `"time_to_first_token":{"value":300`, "300 ms"},
		{"vllm", `"ttfts": [0.056334`, `"ttfts": [0.3`, "0.3"}},
		map[string]string{"aiperf.jsonl": "metrics.time_to_first_token.value", "vllm": "ttfts[0]"}, "more than the request"},
	{"negative gap between chunks", []edit{
		{"aiperf.jsonl", `"inter_chunk_latency":{"value":[9.953`, `"inter_chunk_latency":{"value":[-9.953`, "-9.953 ms"},
		{"vllm", `"itls": [[0.009953`, `"itls": [[-0.009953`, "-0.009953"},
		{"sglang", `"itls": [[0.01`, `"itls": [[-0.01`, "-0.01"}},
		map[string]string{"aiperf.jsonl": "metrics.inter_chunk_latency.value[0]", "vllm": "itls[0][0]", "sglang": "itls[0][0]"}, "a time is a finite number from 0 up to 11.6 days"},
	{"negative mean TTFT", []edit{
		{"aiperf", `"avg": 50.291124999999994`, `"avg": -50`, "-50 ms"},
		{"vllm", `"mean_ttft_ms": 50.29112500000001`, `"mean_ttft_ms": -50`, "-50"},
		{"sglang", `"mean_ttft_ms": 60.0`, `"mean_ttft_ms": -50`, "-50"}},
		map[string]string{"aiperf": "time_to_first_token.avg", "vllm": "mean_ttft_ms", "sglang": "mean_ttft_ms"}, "a time is a finite number from 0 up to 11.6 days"},
	{"zero duration", []edit{
		{"aiperf", `"avg": 0.437933`, `"avg": 0`, "0 sec"},
		{"vllm", `"duration": 0.440033`, `"duration": 0`, "holds 0:"},
		{"sglang", `"duration": 0.5`, `"duration": 0`, "holds 0:"}},
		dur, "a run's duration is a finite number above 0"},
	{"negative duration", []edit{
		{"aiperf", `"avg": 0.437933`, `"avg": -1`, "-1 sec"},
		{"vllm", `"duration": 0.440033`, `"duration": -1`, "-1"},
		{"sglang", `"duration": 0.5`, `"duration": -1`, "-1"}},
		dur, "a run's duration is a finite number above 0"},
	{"negative request count", []edit{
		{"aiperf", `"avg": 8.0`, `"avg": -1`, "-1"},
		{"vllm", `"completed": 8`, `"completed": -1`, "-1"},
		{"sglang", `"completed": 4`, `"completed": -1`, "-1"}},
		count, "a request count is a whole number from 0"},
	{"request count of 1e12", []edit{
		{"aiperf", `"avg": 8.0`, `"avg": 1e12`, "1e12"},
		{"vllm", `"completed": 8`, `"completed": 1e12`, "1e12"},
		{"sglang", `"completed": 4`, `"completed": 1e12`, "1e12"}},
		count, "a request count is a whole number from 0 to 1e+09"},
	{"request count that is not the per-request data's", []edit{
		{"aiperf", `"avg": 8.0`, `"avg": 7`, "holds 7, but profile_export.jsonl holds 8 valid profiling records"},
		{"vllm", `"completed": 8`, `"completed": 7`, "holds 7, but errors lists 8 requests without an error text"},
		{"sglang", `"completed": 4`, `"completed": 3`, "holds 3, but errors lists 4 requests without an error text"}},
		count, ""},
	{"failed count that is not the errors'", []edit{
		{"vllm", `"failed": 0`, `"failed": 2`, "holds 2, but errors lists 0 requests with an error text"}},
		map[string]string{"vllm": "failed"}, ""},
	{"input total that is not the requests'", []edit{
		{"aiperf", `"avg": 4400.0`, `"avg": 4401`, "holds 4401"},
		{"vllm", `"total_input_tokens": 4400`, `"total_input_tokens": 4401`, "holds 4401"},
		{"sglang", `"total_input_tokens": 400`, `"total_input_tokens": 401`, "holds 401"}},
		map[string]string{"aiperf": "total_isl.avg", "vllm": "total_input_tokens", "sglang": "total_input_tokens"}, "sum to"},
	{"fractional token count", []edit{
		{"aiperf.jsonl", `"input_sequence_length":{"value":548`, `"input_sequence_length":{"value":548.5`, "548.5"},
		{"vllm", `"input_lens": [548`, `"input_lens": [548.5`, "548.5"},
		{"sglang", `"input_lens": [100`, `"input_lens": [100.5`, "100.5"}},
		map[string]string{"aiperf.jsonl": "metrics.input_sequence_length.value", "vllm": "input_lens[0]", "sglang": "input_lens[0]"}, "a whole number"},
	{"itls shorter than ttfts", []edit{
		{"vllm", `, [0.011353, 0.011529, 0.009662, 0.012199, 0.01184, 0.012124, 0.011894, 0.010677, 0.010697, 0.009811, 0.011403, 0.009687, 0.009702, 0.010126, 0.009987]]`, `]`, "holds 7 entries, ttfts holds 8"},
		{"sglang", `, [0.016]]`, `]`, "holds 5 entries, ttfts holds 6"}},
		map[string]string{"vllm": "itls", "sglang": "itls"}, "one entry per request"},
	{"errors longer than the requests", []edit{
		{"vllm", `"errors": ["", "", "", "", "", "", "", ""]`, `"errors": ["", "", "", "", "", "", "", "", ""]`, "holds 9 entries, ttfts holds 8"},
		{"sglang", `"errors": [""`, `"errors": ["", ""`, "holds 7 entries, ttfts holds 6"}},
		map[string]string{"vllm": "errors", "sglang": "errors"}, "one entry per request"},
	{"a list that is not one", []edit{
		{"vllm", `"input_lens": [`, `"input_lens": {"a": 1}, "x": [`, `holds {"a": 1}`},
		{"sglang", `"input_lens": [`, `"input_lens": "many", "x": [`, `holds "many"`}},
		map[string]string{"vllm": "input_lens", "sglang": "input_lens"}, "expected a list with one number per request"},
	{"null document", []edit{{"aiperf", "", "null\n", "holds null"}, {"vllm", "", "null\n", "holds null"}, {"sglang", "", "null\n", "holds null"}},
		doc, "expected a result object"},
	{"array document", []edit{{"aiperf", "", "[]\n", "holds an array"}, {"vllm", "", "[]\n", "holds an array"}, {"sglang", "", "[]\n", "holds an array"}},
		doc, "expected a result object"},
	{"null line before the runs", []edit{
		{"aiperf.jsonl", `{"metadata"`, "null\n{\"metadata\"", "holds null"},
		{"sglang", "{", "null\n{", "holds null"}},
		map[string]string{"aiperf.jsonl": "(line)", "sglang": "(line)"}, "expected a result object"},
}

// fixtures are each format's valid files, by edited-file name.
func fixtures(t *testing.T) map[string]string {
	return map[string]string{
		"aiperf":       read(t, "testdata/aiperf/"+AIPerfAggregate),
		"aiperf.jsonl": read(t, "testdata/aiperf/"+AIPerfRecords),
		"vllm":         read(t, "testdata/vllm-result-c4.json"),
		"sglang":       strings.SplitAfter(read(t, "testdata/sglang-details.jsonl"), "\n")[1],
	}
}

// readEdited writes a format's fixture with one file edited and reads it as the import does:
// the path of the edited file, and the error.
func readEdited(t *testing.T, files map[string]string, e edit) (string, error) {
	dir := t.TempDir()
	content := files[e.file]
	if e.old == "" {
		content = e.new
	} else if !strings.Contains(content, e.old) {
		t.Fatalf("fixture %s lacks %q", e.file, e.old)
	} else {
		content = strings.Replace(content, e.old, e.new, 1)
	}
	switch e.file {
	case "aiperf", "aiperf.jsonl":
		agg, recs := files["aiperf"], files["aiperf.jsonl"]
		path := filepath.Join(dir, AIPerfAggregate)
		if e.file == "aiperf" {
			agg = content
		} else {
			recs, path = content, filepath.Join(dir, AIPerfRecords)
		}
		writeFile(t, filepath.Join(dir, AIPerfAggregate), agg)
		writeFile(t, filepath.Join(dir, AIPerfRecords), recs)
		_, err := ReadAIPerf(dir, Expect{Concurrency: 4}, opts)
		return path, err
	case "vllm":
		path := filepath.Join(dir, "result.json")
		writeFile(t, path, content)
		_, err := ReadVLLM(path, Expect{Concurrency: 4}, opts)
		return path, err
	}
	path := filepath.Join(dir, "bench.jsonl")
	writeFile(t, path, content)
	_, err := ReadSGLang(path, Expect{Concurrency: 2}, opts)
	return path, err
}

// TestHostileValues runs every hostile value against every reader it applies to: each
// refuses it naming the edited file, the line the value is on, the field and the value as
// the file holds it — one validation for all three formats.
func TestHostileValues(t *testing.T) {
	files := fixtures(t)
	for _, h := range hostiles {
		for _, e := range h.edits {
			t.Run(h.name+"/"+e.file, func(t *testing.T) {
				path, err := readEdited(t, files, e)
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("error %v, want a refusal naming file, line and field", err)
				}
				edited, _ := os.ReadFile(path)
				line := 1
				if e.old != "" {
					line = 1 + strings.Count(string(edited[:strings.Index(string(edited), e.new)]), "\n")
				}
				if strings.HasPrefix(e.new, "null\n") {
					line = 1 // the null line the edit put first
				}
				msg := err.Error()
				if pe.File != path || pe.Line != line || pe.Field != h.field[e.file] {
					t.Errorf("refusal at %s:%d field %q, want %s:%d field %q\n%s", pe.File, pe.Line, pe.Field, path, line, h.field[e.file], msg)
				}
				if !strings.Contains(msg, e.value) || !strings.Contains(msg, h.want) {
					t.Errorf("refusal %q does not quote %q or say %q", msg, e.value, h.want)
				}
				if !strings.HasPrefix(msg, path+":") || !strings.HasPrefix(h.field[e.file], "(") && !strings.Contains(msg, h.field[e.file]+":") {
					t.Errorf("refusal %q does not start with %s:LINE or name the field", msg, path)
				}
				if strings.Contains(msg, "not JSON") || strings.Contains(msg, "9223372036854775808") {
					t.Errorf("refusal %q calls valid JSON not JSON, or quotes an overflowed number", msg)
				}
			})
		}
	}
	// every format is in the table, and every row applies to one at least
	seen := map[string]bool{}
	for _, h := range hostiles {
		for _, e := range h.edits {
			seen[strings.TrimSuffix(e.file, ".jsonl")] = true
		}
	}
	if got := len(seen); got != 3 {
		t.Errorf("the table reaches %d formats, want aiperf, vllm and sglang", got)
	}
}

// A UTF-8 byte-order mark (some Windows tools write one) is dropped, in every format: the
// file reads as without it, at the same lines.
func TestByteOrderMark(t *testing.T) {
	files := fixtures(t)
	for _, name := range []string{"aiperf", "aiperf.jsonl", "vllm", "sglang"} {
		if _, err := readEdited(t, files, edit{name, "", "\xEF\xBB\xBF" + files[name], ""}); err != nil {
			t.Errorf("%s with a BOM: %v", name, err)
		}
	}
	path := filepath.Join(t.TempDir(), "bom.json")
	writeFile(t, path, "\xEF\xBB\xBF"+files["vllm"])
	if f, _, err := Detect(path); err != nil || f != SourceVLLM {
		t.Errorf("detecting a vLLM result with a BOM: %s, %v", f, err)
	}
	for _, doc := range []string{"null", "[]", "\xEF\xBB\xBFnull"} {
		writeFile(t, path, doc)
		_, _, err := Detect(path)
		if err == nil || strings.Contains(err.Error(), "not JSON") || !strings.Contains(err.Error(), "expected a result object") {
			t.Errorf("detecting %q: %v, want 'holds ..., expected a result object'", doc, err)
		}
	}
	writeFile(t, path, "hello")
	if _, _, err := Detect(path); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("detecting text: %v, want not JSON", err)
	}
}

// The rules' messages say what is accepted, in the file's own terms.
func TestRuleWording(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		r    rule
		want string
	}{
		{"4.5", ruleConcurrency, "holds 4.5: a concurrency is a whole number from 1 to 100000"},
		{"1e300", ruleConcurrency, "holds 1e300: a concurrency is a whole number from 1 to 100000"},
		{"1e400", ruleCount, "holds 1e400: a request count is a whole number from 0 to 1e+09"},
		{`"NaN"`, ruleSeconds, "holds NaN: a time is a finite number from 0 up to 11.6 days"},
		{`"4"`, ruleCount, `holds "4", not a number: a request count is a whole number from 0 to 1e+09`},
		{"null", ruleDuration, "holds null, not a number: a run's duration is a finite number above 0 up to 11.6 days"},
		{"[1]", ruleRate, "holds [1], not a number: a rate is a finite number from 0"},
	} {
		if _, got := number([]byte(tc.raw), tc.r); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.raw, got, tc.want)
		}
	}
	for _, tc := range []struct {
		r    rule
		v    float64
		want bool
	}{
		{ruleConcurrency, 7, true}, {ruleConcurrency, 100000, true}, {ruleConcurrency, 100001, false}, {ruleCount, 0, true},
		{ruleDuration, 0, false}, {ruleDuration, 1e-9, true}, {ruleSeconds, MaxSeconds, true}, {ruleSeconds, MaxSeconds * 1.0001, false},
		{ruleTotalTokens, 1 << 53, true}, {ruleRate, 1e300, true}, {ruleRate, math.Inf(1), false},
	} {
		if got := tc.r.ok(tc.v); got != tc.want {
			t.Errorf("%s: %g accepted %v, want %v", tc.r.what, tc.v, got, tc.want)
		}
	}
}

package workload

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestReadTraceGood(t *testing.T) {
	in := strings.Join([]string{
		`{"text_input": "What is the capital of France?", "output_length": 20}`,
		``,
		`   `,
		`{"timestamp": 0, "text_input": "Explain caches.", "hash_ids": [46, 47], "input_length": 3}` + "\r",
		`{"text_input": "Count to three.", "output_length": 1500.0}`,
	}, "\n")
	got, err := ReadTrace(strings.NewReader(in), "d.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []TraceEntry{
		{Line: 1, TextInput: "What is the capital of France?", OutputLength: 20},
		{Line: 4, TextInput: "Explain caches."},
		{Line: 5, TextInput: "Count to three.", OutputLength: 1500},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ReadTrace = %+v\nwant %+v", got, want)
	}
}

// TestReadTraceBad checks that every kind of bad line is reported as file:line: field.
func TestReadTraceBad(t *testing.T) {
	cases := []struct {
		line string
		want string
	}{
		{`{"input_length": 655, "output_length": 52, "hash_ids": [46, 47]}`, "d.jsonl:2: text_input: missing; replay sends real text"},
		{`{"output_length": 52}`, "d.jsonl:2: text_input: missing; every replay line needs the prompt text"},
		{`{"text_input": 42}`, "d.jsonl:2: text_input: want a string, got 42"},
		{`{"text_input": "  "}`, "d.jsonl:2: text_input: empty"},
		{`{"text_input": "hi", "output_length": "many"}`, `d.jsonl:2: output_length: want a positive integer, got "many"`},
		{`{"text_input": "hi", "output_length": 0}`, "d.jsonl:2: output_length: want a positive integer, got 0"},
		{`{"text_input": "hi", "output_length": 2.5}`, "d.jsonl:2: output_length: want a positive integer, got 2.5"},
		{`{"text_input": "hi", "input_length": -1}`, "d.jsonl:2: input_length: want a non-negative integer, got -1"},
		{`{"text_input": "hi", "timestamp": "soon"}`, `d.jsonl:2: timestamp: want a non-negative number of milliseconds, got "soon"`},
		{`{"text_input": "hi", "hash_ids": [1, "x"]}`, `d.jsonl:2: hash_ids: want a list of integers, got [1, "x"]`},
		{`{"text_input": "hi", "output_lenght": 5}`, `d.jsonl:2: unknown field "output_lenght"`},
		{`{"text_input": "hi", "session_id": "s1"}`, `d.jsonl:2: unknown field "session_id"`},
		{`{"text_input": "hi"`, "d.jsonl:2: not a JSON object: unexpected end of JSON input"},
		{`["text_input"]`, "d.jsonl:2: not a JSON object: got a JSON array"},
		{`null`, "d.jsonl:2: not a JSON object: null"},
		{`{"text_input": "hi"} {"text_input": "again"}`, "d.jsonl:2: not a JSON object: invalid character '{' after top-level value (column 22)"},
	}
	for _, c := range cases {
		in := `{"text_input": "fine", "output_length": 1}` + "\n" + c.line + "\n"
		_, err := ReadTrace(strings.NewReader(in), "d.jsonl")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("line %s:\n got error %v\nwant it to contain %q", c.line, err, c.want)
		}
	}
}

func TestReadTraceManyErrors(t *testing.T) {
	var b strings.Builder
	for range 13 {
		b.WriteString("{}\n")
	}
	_, err := ReadTrace(strings.NewReader(b.String()), "x.jsonl")
	if err == nil {
		t.Fatal("no error for 13 bad lines")
	}
	msg := err.Error()
	for _, want := range []string{"x.jsonl:1: text_input", "x.jsonl:10: text_input", "x.jsonl: 3 more bad lines"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "x.jsonl:11:") {
		t.Errorf("error lists more than 10 lines:\n%s", msg)
	}
}

func TestReadTraceEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n  \n"} {
		_, err := ReadTrace(strings.NewReader(in), "e.jsonl")
		if err == nil || !strings.Contains(err.Error(), "e.jsonl: no requests") {
			t.Errorf("ReadTrace(%q) error = %v, want no requests", in, err)
		}
	}
}

// FuzzReadTrace: any input either parses into entries with text and positive budgets on real
// line numbers, or fails with errors that all start with the file name.
func FuzzReadTrace(f *testing.F) {
	for _, s := range []string{
		`{"text_input": "hello", "output_length": 3}`,
		"{\"text_input\": \"a\"}\n\n{\"text_input\": \"b\", \"timestamp\": 5, \"hash_ids\": [1]}\r\n",
		`{"input_length": 10}`,
		`{"text_input": "x", "output_length": 1e3}`,
		"not json\n{}",
		`{"text_input": "\u0000", "output_length": -0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ReadTrace(bytes.NewReader(data), "f.jsonl")
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "f.jsonl:") {
					t.Fatalf("error line %q does not name the file", line)
				}
			}
			return
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		prev := 0
		for _, e := range entries {
			if strings.TrimSpace(e.TextInput) == "" || e.OutputLength < 0 || e.Line <= prev || e.Line > lines {
				t.Fatalf("bad entry %+v (previous line %d, %d lines)", e, prev, lines)
			}
			prev = e.Line
		}
	})
}

package benchfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// serveFile is a vLLM or SGLang result file read once: its runs — one JSON object, or one a
// line as vLLM --append-result and SGLang write them — each indexed by its max_concurrency
// and parsed in full only when a reader asks for it. A file of a thousand runs is read and
// split once per Files; reading one of its runs parses that run only.
type serveFile struct {
	size   int64 // as stat saw it before the read: a change re-reads the file
	mtime  time.Time
	runs   []*serveRun
	lastAt map[int]*serveRun // the last run at each concurrency
	vetted bool              // the first run was checked not to be an AIPerf record
}

// wantServe says what a vLLM/SGLang file holds, for messages about one that does not.
const wantServe = "want an AIPerf export, a vLLM bench serve result or SGLang bench_serving lines"

// serveRun is one run (result object) of a serveFile.
type serveRun struct {
	file   string
	line   int    // the line the object starts on
	text   []byte // the object, Python's bare Infinity/NaN quoted (pythonJSON)
	jsonl  bool   // one line of a JSONL file
	conc   int    // max_concurrency; 0 when the run states none (absent or null)
	parses int    // full parses (doc), for tests
}

// openServe reads a vLLM/SGLang result file and splits it into runs. Only each run's
// max_concurrency is read and checked here (it precedes the per-request lists, so a run's
// lists are not scanned); a run is parsed in full by doc.
func openServe(path string) (*serveFile, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench import: %w", err)
	}
	clean := pythonJSON(data)
	f := &serveFile{}
	t := bytes.TrimSpace(clean)
	switch {
	case len(t) == 0:
		return nil, &Error{File: path, Line: 1, Field: "(document)", Msg: "empty file: " + wantServe}
	case notObject(t) != "":
		return nil, &Error{File: path, Line: 1 + bytes.Count(clean[:len(clean)-len(bytes.TrimLeft(clean, " \t\r\n"))], []byte{'\n'}), Field: "(document)",
			Msg: notObject(t) + ": " + wantServe}
	case t[0] == '{' && json.Valid(t): // one object, possibly over several lines
		start := bytes.IndexByte(clean, '{')
		f.runs = []*serveRun{{file: path, line: 1 + bytes.Count(clean[:start], []byte{'\n'}), text: t}}
	default:
		line := 0
		for rest := clean; len(rest) > 0; {
			line++
			l := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				l, rest = rest[:i], rest[i+1:]
			} else {
				rest = nil
			}
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			if msg := notObject(l); msg != "" {
				return nil, &Error{File: path, Line: line, Field: "(line)", Msg: "this line " + msg + " (one result object a line)"}
			}
			if l := bytes.TrimSpace(l); l[0] != '{' {
				if len(f.runs) == 0 { // the file does not start with JSON at all
					return nil, &Error{File: path, Line: line, Field: "(document)", Msg: "not JSON: " + wantServe}
				}
				return nil, &Error{File: path, Line: line, Field: "(line)", Msg: fmt.Sprintf("not JSON (it starts %q): one result object a line", l[:min(len(l), 20)])}
			}
			f.runs = append(f.runs, &serveRun{file: path, line: line, text: l, jsonl: true})
		}
	}
	f.lastAt = map[int]*serveRun{}
	for _, r := range f.runs {
		raw, err := topKey(r.text, "max_concurrency")
		if err != nil {
			return nil, r.syntax(err)
		}
		if raw == nil || string(raw) == "null" {
			continue
		}
		c, problem := number(raw, ruleConcurrency)
		if problem != "" {
			return nil, &Error{File: r.file, Line: r.line + lineOfKey(r.text, 1, "max_concurrency") - 1, Field: "max_concurrency", Msg: problem}
		}
		r.conc = int(c)
		f.lastAt[r.conc] = r
	}
	return f, nil
}

// syntax positions a decode error of the run's text (a streaming decoder's error is
// replaced by the whole-text decode's, which says where the text breaks).
func (r *serveRun) syntax(err error) error {
	var v any
	if e := json.Unmarshal(r.text, &v); e != nil {
		err = e
	}
	if r.jsonl {
		return lineError(r.file, r.line, r.text, err)
	}
	return jsonError(r.file, r.text, r.line-1, err)
}

// doc parses the run in full. The parse is not kept: a Files holding every run of a large
// file keeps its text (one copy), not a map of each run's keys (several).
func (r *serveRun) doc() (*serveDoc, error) {
	r.parses++
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(r.text, &keys); err != nil {
		return nil, r.syntax(err)
	}
	return &serveDoc{file: r.file, line: r.line, text: r.text, keys: keys}, nil
}

// pick chooses the run an import reads (SGLang appends one line per run, vLLM
// --append-result one object per run): the last one at conc, or the last run when none
// matches (the concurrency check then names the mismatch). An AIPerf records file given
// as a result is refused at its first line.
func (f *serveFile) pick(conc int) (*serveDoc, error) {
	if !f.vetted {
		first, err := f.runs[0].doc()
		if err != nil {
			return nil, err
		}
		if _, ok := first.keys["metadata"]; ok {
			return nil, first.pos("metadata", "this is an AIPerf profile_export.jsonl record, not a bench serve result")
		}
		f.vetted = true
	}
	run := f.runs[len(f.runs)-1]
	if r, ok := f.lastAt[conc]; ok && conc > 0 {
		run = r
	}
	return run.doc()
}

// concurrencies lists the file's run concurrencies in file order, each once; every run is
// checked to be whole JSON, so a broken line is reported even when a later run at its
// concurrency would shadow it.
func (f *serveFile) concurrencies() ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, r := range f.runs {
		if !json.Valid(r.text) {
			var v any
			return nil, r.syntax(json.Unmarshal(r.text, &v))
		}
		if r.conc > 0 && !seen[r.conc] {
			seen[r.conc] = true
			out = append(out, r.conc)
		}
	}
	return out, nil
}

// topKey returns the raw value of a top-level key of a JSON object, reading keys in order
// and stopping at key: nil when the object lacks it. Values before it are skipped whole.
func topKey(obj []byte, key string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // the object's '{' (openServe checked it is one)
		return nil, err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if k == key {
			return v, nil
		}
	}
	return nil, nil
}

// serveDoc is one parsed vLLM/SGLang result object with its keys kept raw; prefix names
// the object it is inside ("details." for SGLang's nested per-request lists).
type serveDoc struct {
	file   string
	line   int    // the line the object starts on
	text   []byte // the object's text, for positions
	keys   map[string]json.RawMessage
	prefix string
}

// lineOf is the line of a field of the object (its first line when absent).
func (d *serveDoc) lineOf(field string) int {
	return d.line + lineOfKey(d.text, 1, lastKey(field)) - 1
}

func (d *serveDoc) pos(field, msg string) *Error {
	return &Error{File: d.file, Line: d.lineOf(field), Field: d.prefix + field, Msg: msg}
}

// num reads key under r: ok false when the object lacks it or holds null (an error when
// required).
func (d *serveDoc) num(key string, r rule, required bool) (float64, bool, error) {
	raw, ok := d.keys[key]
	if !ok || string(raw) == "null" {
		if required {
			return 0, false, &Error{File: d.file, Line: d.line, Field: d.prefix + key, Msg: "missing"}
		}
		return 0, false, nil
	}
	v, problem := number(raw, r)
	if problem != "" {
		return 0, false, d.pos(key, problem)
	}
	return v, true, nil
}

func (d *serveDoc) str(key string) string {
	var s string
	_ = json.Unmarshal(d.keys[key], &s)
	return s
}

// pythonJSON replaces the bare tokens Infinity, -Infinity and NaN outside strings (Python's
// json.dumps writes them) by quoted strings, so encoding/json can read the document. It
// copies the text between tokens and strings in blocks: a file of a thousand runs, each
// with request_rate Infinity, is one pass.
func pythonJSON(data []byte) []byte {
	if !bytes.Contains(data, []byte("Infinity")) && !bytes.Contains(data, []byte("NaN")) {
		return data
	}
	out := make([]byte, 0, len(data)+64)
	done := 0 // data[:done] is in out
	for i := 0; i < len(data); {
		j := bytes.IndexAny(data[i:], `"IN`)
		if j < 0 {
			break
		}
		i += j
		if data[i] == '"' { // skip the string: to the next quote not escaped
			i++
			for i < len(data) {
				k := bytes.IndexAny(data[i:], `"\`)
				if k < 0 {
					i = len(data)
					break
				}
				i += k
				if data[i] == '\\' {
					i += 2
					continue
				}
				i++
				break
			}
			continue
		}
		tok := ""
		switch {
		case bytes.HasPrefix(data[i:], []byte("Infinity")):
			tok = "Infinity"
		case bytes.HasPrefix(data[i:], []byte("NaN")):
			tok = "NaN"
		default:
			i++
			continue
		}
		start := i
		if tok == "Infinity" && i > 0 && data[i-1] == '-' {
			start--
		}
		out = append(out, data[done:start]...)
		out = append(out, '"')
		out = append(out, data[start:i+len(tok)]...)
		out = append(out, '"')
		i += len(tok)
		done = i
	}
	return append(out, data[done:]...)
}

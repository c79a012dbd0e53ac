package benchfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/perfdag/perfdag/schema"
)

// serveFile is a vLLM or SGLang result file indexed once: its runs — one JSON object, or one
// a line as vLLM --append-result and SGLang write them — each with its place in the file and
// its load (request_rate and max_concurrency), read from disk and parsed in full only when a reader asks for it. The
// index of a file of ten thousand runs is a few hundred kB: what a reader holds at once is one
// run, whatever the file's size.
type serveFile struct {
	size   int64 // as stat saw it before the read: a change re-reads the file
	mtime  time.Time
	runs   []*serveRun
	lastAt map[schema.Load]*serveRun // the last run at each load
	vetted bool                      // the first run was checked not to be an AIPerf record
}

// wantServe says what a vLLM/SGLang file holds, for messages about one that does not.
const wantServe = "want an AIPerf export, a vLLM bench serve result or SGLang bench_serving lines"

// serveRun is one run (result object) of a serveFile.
type serveRun struct {
	file   string
	line   int         // the line the object starts on
	off    int64       // where its text starts in the file
	n      int         // its length in bytes, as the file holds it
	text   []byte      // the object when held (a file read whole); nil: read from off by load
	jsonl  bool        // one line of a JSONL file
	at     schema.Load // its request_rate and max_concurrency (runLoad); zero for a burst or when unreadable
	broken bool        // not whole JSON: Runs reports it
	parses int         // full parses (doc), for tests
}

// syntaxOf positions a decode error of the run's text (a streaming decoder's error is
// replaced by the whole-text decode's, which says where the text breaks).
func (r *serveRun) syntaxOf(text []byte, err error) error {
	var v any
	if e := json.Unmarshal(text, &v); e != nil {
		err = e
	}
	if r.jsonl {
		return lineError(r.file, r.line, text, err)
	}
	return jsonError(r.file, text, r.line-1, err)
}

// doc reads and parses the run in full. Neither is kept: a Files holding every run of a large
// file keeps where each run is, not its text nor a map of its keys.
func (r *serveRun) doc() (*serveDoc, error) {
	r.parses++
	text, err := r.load()
	if err != nil {
		return nil, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(text, &keys); err != nil {
		return nil, r.syntaxOf(text, err)
	}
	return &serveDoc{file: r.file, line: r.line, text: text, keys: keys}, nil
}

// pick chooses the run an import reads (SGLang appends one line per run, vLLM
// --append-result one object per run): the last one at load l, or the last run when none
// matches (the load check then names the mismatch). An AIPerf records file given as a result
// is refused at its first line.
func (f *serveFile) pick(l schema.Load) (*serveDoc, error) {
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
	if r, ok := f.lastAt[l]; ok && !l.IsZero() {
		run = r
	}
	return run.doc()
}

// loads lists the loads of the file's runs in file order, each once; every run is checked to
// be whole JSON, so a broken line is reported even when a later run at its load would shadow
// it.
func (f *serveFile) loads() ([]schema.Load, error) {
	var out []schema.Load
	seen := map[schema.Load]bool{}
	for _, r := range f.runs {
		if r.broken {
			text, err := r.load()
			if err != nil {
				return nil, err
			}
			var v any
			return nil, r.syntaxOf(text, json.Unmarshal(text, &v))
		}
		if !r.at.IsZero() && !seen[r.at] {
			seen[r.at] = true
			out = append(out, r.at)
		}
	}
	return out, nil
}

// topKeys returns the raw values of top-level keys of a JSON object, reading keys in order
// and stopping once every one is found: a key the object lacks is absent from the map. Values
// before them are skipped whole.
func topKeys(obj []byte, keys ...string) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(keys))
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
		if s, ok := k.(string); ok && slices.Contains(keys, s) {
			out[s] = v
			if len(out) == len(keys) {
				break
			}
		}
	}
	return out, nil
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

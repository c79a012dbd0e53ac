package benchfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/schema"
)

// what names an imported file in bounded's messages.
const what = "benchmark output"

// openServe indexes a vLLM/SGLang result file run by run, reading it as a stream: a JSONL
// file (one run a line) is held one line at a time, each run's place, load and
// wholeness noted; its text is read again when a reader asks for the run (load). A file whose
// first line is not a whole result object (one object over several lines, or not a result
// at all) is one run or an error: it is read whole (openWhole). The problems reported, and
// their order, are openWhole's: a line that is not a result object first, then a run's
// load.
func openServe(path string) (*serveFile, error) {
	fh, st, err := bounded.Open(what, path)
	if err != nil {
		return nil, fmt.Errorf("bench import: %w", err)
	}
	defer fh.Close()
	if st.Size() > MaxFileBytes {
		return nil, fmt.Errorf("bench import: %w", &bounded.Error{What: what, Path: path, Limit: MaxFileBytes, Err: bounded.ErrTooLarge})
	}
	rd := bufio.NewReaderSize(bounded.LimitReader(fh, what, path, MaxFileBytes), 256<<10)
	var (
		f       = &serveFile{}
		buf     []byte
		off     int64
		concErr error // the first run whose load (request_rate, max_concurrency) is refused
	)
	for line := 1; ; line++ {
		raw, newline, err := nextLine(rd, buf)
		if err != nil {
			var be *bounded.Error
			if errors.As(err, &be) {
				return nil, fmt.Errorf("bench import: %w", err)
			}
			return nil, fmt.Errorf("bench import: read %s %s: %w", what, path, err)
		}
		buf = raw[:0]
		start := off
		off += int64(len(raw))
		if newline {
			off++
		}
		if !newline && len(raw) == 0 {
			break
		}
		if line == 1 && bytes.HasPrefix(raw, utf8BOM) {
			raw, start = raw[len(utf8BOM):], start+int64(len(utf8BOM))
		}
		l := pythonJSON(raw)
		t := bytes.TrimSpace(l)
		if len(t) > 0 {
			if len(f.runs) == 0 && (t[0] != '{' || !json.Valid(t)) {
				return openWhole(path) // one object over several lines, or not a result file
			}
			if msg := notObject(l); msg != "" {
				return nil, &Error{File: path, Line: line, Field: "(line)", Msg: "this line " + msg + " (one result object a line)"}
			}
			if t[0] != '{' {
				return nil, &Error{File: path, Line: line, Field: "(line)", Msg: fmt.Sprintf("not JSON (it starts %q): one result object a line", t[:min(len(t), 20)])}
			}
			r := &serveRun{file: path, line: line, off: start, n: len(raw), jsonl: true}
			if err := r.index(l); err != nil && concErr == nil {
				concErr = err
			}
			f.runs = append(f.runs, r)
		}
		if !newline {
			break
		}
	}
	if len(f.runs) == 0 {
		return nil, &Error{File: path, Line: 1, Field: "(document)", Msg: "empty file: " + wantServe}
	}
	if concErr != nil {
		return nil, concErr
	}
	f.byLoad()
	return f, nil
}

// nextLine reads the next line of rd into buf (grown to the longest line): without its '\n',
// and whether it had one (the last line may not).
func nextLine(rd *bufio.Reader, buf []byte) ([]byte, bool, error) {
	buf = buf[:0]
	for {
		chunk, err := rd.ReadSlice('\n')
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf[:len(buf)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return buf, false, nil
		default:
			return nil, false, err
		}
	}
}

// openWhole reads a vLLM/SGLang result file whole and splits it into runs, each holding its
// text: a file that is one object (possibly over several lines), or one that is not a result
// file (the problem is then named here).
func openWhole(path string) (*serveFile, error) {
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
	for _, r := range f.runs {
		if err := r.index(r.text); err != nil {
			return nil, err
		}
	}
	f.byLoad()
	return f, nil
}

// index notes what the run's text says of it: its load (only request_rate and
// max_concurrency are read: they precede the per-request lists, so those are not scanned) and
// whether it is whole JSON.
func (r *serveRun) index(text []byte) error {
	r.broken = !json.Valid(text)
	raw, err := topKeys(text, rateKey, concKey)
	if err != nil {
		return r.syntaxOf(text, err)
	}
	l, field, problem := runLoad(raw[rateKey], raw[concKey])
	if problem != "" {
		return &Error{File: r.file, Line: r.line + lineOfKey(text, 1, field) - 1, Field: field, Msg: problem}
	}
	r.at = l
	return nil
}

// byLoad indexes the runs by load: the last run at each.
func (f *serveFile) byLoad() {
	f.lastAt = map[schema.Load]*serveRun{}
	for _, r := range f.runs {
		if !r.at.IsZero() {
			f.lastAt[r.at] = r
		}
	}
}

// load returns the run's text, Python's bare Infinity/NaN quoted: the text held, or the run
// read again from its place in the file.
func (r *serveRun) load() ([]byte, error) {
	if r.text != nil {
		return r.text, nil
	}
	fh, _, err := bounded.Open(what, r.file)
	if err != nil {
		return nil, fmt.Errorf("bench import: %w", err)
	}
	defer fh.Close()
	b := make([]byte, r.n)
	if _, err := fh.ReadAt(b, r.off); err != nil {
		return nil, fmt.Errorf("bench import: read the run at line %d of %s: %w (was the file changed while it was imported?)", r.line, r.file, err)
	}
	return pythonJSON(b), nil
}

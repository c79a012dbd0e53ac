package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// TraceEntry is one request line of a mooncake_trace JSONL file as replay uses it.
type TraceEntry struct {
	Line         int    // 1-based line number in the file
	TextInput    string // text_input: the prompt sent as is
	OutputLength int    // output_length, 0 when the line has none
}

// maxTraceErrors bounds how many bad lines one error reports.
const maxTraceErrors = 10

// traceFields are the mooncake_trace keys a line may carry. timestamp and hash_ids are
// accepted and ignored: replay runs in file order under the cell's concurrency, and the text
// is sent as written.
var traceFields = map[string]bool{"text_input": true, "output_length": true, "input_length": true, "timestamp": true, "hash_ids": true}

// ReadTrace parses mooncake_trace JSONL for replay. Blank lines are skipped; every bad line is
// reported (up to 10) as name:line: field: problem.
func ReadTrace(r io.Reader, name string) ([]TraceEntry, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var (
		out  []TraceEntry
		errs []error
		more int
	)
	for line := 1; ; line++ {
		raw, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		if s := bytes.TrimSpace(raw); len(s) > 0 {
			e, perr := parseTraceLine(s)
			switch {
			case perr != nil && len(errs) < maxTraceErrors:
				errs = append(errs, fmt.Errorf("%s:%d: %w", name, line, perr))
			case perr != nil:
				more++
			default:
				e.Line = line
				out = append(out, e)
			}
		}
		if err == io.EOF {
			break
		}
	}
	if more > 0 {
		errs = append(errs, fmt.Errorf("%s: %d more bad lines", name, more))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no requests (want one JSON object per line with text_input)", name)
	}
	return out, nil
}

// parseTraceLine checks one non-blank line and names the field at fault.
func parseTraceLine(s []byte) (TraceEntry, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(s, &obj); err != nil {
		return TraceEntry{}, fmt.Errorf("not a JSON object: %s", jsonProblem(err))
	}
	if obj == nil {
		return TraceEntry{}, errors.New("not a JSON object: null")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !traceFields[k] {
			return TraceEntry{}, fmt.Errorf("unknown field %q (known: text_input, output_length, input_length, timestamp, hash_ids)", k)
		}
	}
	var e TraceEntry
	if raw, ok := obj["output_length"]; ok {
		n, err := traceInt(raw)
		if err != nil || n < 1 {
			return TraceEntry{}, fmt.Errorf("output_length: want a positive integer, got %s", clip(raw))
		}
		e.OutputLength = n
	}
	if raw, ok := obj["input_length"]; ok {
		if n, err := traceInt(raw); err != nil || n < 0 {
			return TraceEntry{}, fmt.Errorf("input_length: want a non-negative integer, got %s", clip(raw))
		}
	}
	if raw, ok := obj["timestamp"]; ok {
		var ts float64
		if err := json.Unmarshal(raw, &ts); err != nil || ts < 0 {
			return TraceEntry{}, fmt.Errorf("timestamp: want a non-negative number of milliseconds, got %s", clip(raw))
		}
	}
	if raw, ok := obj["hash_ids"]; ok {
		var ids []int64
		if err := json.Unmarshal(raw, &ids); err != nil {
			return TraceEntry{}, fmt.Errorf("hash_ids: want a list of integers, got %s", clip(raw))
		}
	}
	raw, ok := obj["text_input"]
	if !ok {
		if _, hasLen := obj["input_length"]; hasLen {
			return TraceEntry{}, errors.New("text_input: missing; replay sends real text, and a line with only input_length (and hash_ids) would need a synthesized prompt whose content is not recorded, so the run could not be reproduced. Generate a text dataset with `perfdag dataset generate`, or use mode synthetic")
		}
		return TraceEntry{}, errors.New("text_input: missing; every replay line needs the prompt text")
	}
	if err := json.Unmarshal(raw, &e.TextInput); err != nil {
		return TraceEntry{}, fmt.Errorf("text_input: want a string, got %s", clip(raw))
	}
	if strings.TrimSpace(e.TextInput) == "" {
		return TraceEntry{}, errors.New("text_input: empty")
	}
	return e, nil
}

// traceInt reads an integer, accepting integral floats such as 1500.0.
func traceInt(raw json.RawMessage) (int, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, fmt.Errorf("%v is not an integer token count", f)
	}
	return int(f), nil
}

// jsonProblem describes a JSON syntax error with its column.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (column %d)", se.Error(), se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "got a JSON " + te.Value
	}
	return err.Error()
}

// clip quotes a raw JSON value for an error message, shortened when long.
func clip(raw json.RawMessage) string {
	s := string(raw)
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

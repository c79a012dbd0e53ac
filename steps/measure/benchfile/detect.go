package benchfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/perfdag/perfdag/steps/measure/stats"
)

// Formats lists the import formats, in the order help texts name them.
func Formats() []string { return []string{SourceAIPerf, SourceVLLM, SourceSGLang} }

// Read reads path as the given format (one of Formats).
func Read(format, path string, e Expect, o stats.Options) (*Result, error) {
	switch format {
	case SourceAIPerf:
		return ReadAIPerf(path, e, o)
	case SourceVLLM:
		return ReadVLLM(path, e, o)
	case SourceSGLang:
		return ReadSGLang(path, e, o)
	}
	return nil, fmt.Errorf("import format %q: want aiperf, vllm-bench or sglang-bench", format)
}

// Detect names the format of path from its content: an AIPerf artifact directory (or one of
// its two files, then the directory is the path to import), a vLLM bench serve result
// (model_id) or an SGLang bench_serving line (backend without model_id). It returns the path
// to import, which differs from path only for an AIPerf file.
func Detect(path string) (format, importPath string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", "", fmt.Errorf("bench import: %w", err)
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(path, AIPerfAggregate)); err == nil {
			return SourceAIPerf, path, nil
		}
		return "", "", &Error{File: path, Line: 0, Field: "(directory)", Msg: "holds no " + AIPerfAggregate + ": not an AIPerf artifact directory (a variant A/B bundle of several arms? import it with --bundle)"}
	}
	if b := filepath.Base(path); b == AIPerfAggregate || b == AIPerfRecords {
		return SourceAIPerf, filepath.Dir(path), nil
	}
	data, err := readFile(path)
	if err != nil {
		return "", "", fmt.Errorf("bench import: %w", err)
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return "", "", &Error{File: path, Line: 1, Field: "(document)", Msg: "not JSON: want an AIPerf export, a vLLM bench serve result or an SGLang bench_serving line"}
	}
	clean := pythonJSON(data)
	var keys map[string]json.RawMessage
	line := 1
	if json.Unmarshal(clean, &keys) != nil {
		// JSONL: the last non-empty line is the run an import reads.
		keys = nil
		for i, raw := range bytes.Split(clean, []byte{'\n'}) {
			if len(bytes.TrimSpace(raw)) == 0 {
				continue
			}
			var k map[string]json.RawMessage
			if err := json.Unmarshal(raw, &k); err != nil {
				return "", "", lineError(path, i+1, raw, err)
			}
			keys, line = k, i+1
		}
	}
	_, model := keys["model_id"]
	_, backend := keys["backend"]
	_, config := keys["input_config"]
	_, metadata := keys["metadata"]
	switch {
	case model:
		return SourceVLLM, path, nil
	case backend:
		return SourceSGLang, path, nil
	case config:
		return SourceAIPerf, filepath.Dir(path), nil
	case metadata:
		return SourceAIPerf, filepath.Dir(path), nil
	}
	return "", "", &Error{File: path, Line: line, Field: "(document)",
		Msg: "not a known benchmark output: no model_id (vLLM), backend (SGLang) or input_config (AIPerf)"}
}

// Locate returns the path format reads for path: an AIPerf file names its directory; a
// directory given for a one-file format, or a plain file for AIPerf, is an error.
func Locate(format, path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("bench import: %w", err)
	}
	switch {
	case format == SourceAIPerf && !st.IsDir():
		if b := filepath.Base(path); b == AIPerfAggregate || b == AIPerfRecords {
			return filepath.Dir(path), nil
		}
		return "", &Error{File: path, Field: "(file)", Msg: "aiperf imports an artifact directory (" + AIPerfAggregate + " and " + AIPerfRecords + "), not a file"}
	case format != SourceAIPerf && st.IsDir():
		return "", &Error{File: path, Field: "(directory)", Msg: format + " imports one result file, not a directory"}
	}
	return path, nil
}

// pickRun chooses the run an import reads from a file of several (SGLang appends one line per
// run, vLLM --append-result one object per run): the last one at the expected concurrency, or
// the last run when none matches (the concurrency check then names the mismatch).
func pickRun(docs []*serveDoc, conc int) *serveDoc {
	if conc > 0 {
		for i := len(docs) - 1; i >= 0; i-- {
			if c, ok, err := docs[i].num("max_concurrency", false); err == nil && ok && int(c) == conc {
				return docs[i]
			}
		}
	}
	return docs[len(docs)-1]
}

// Runs lists the concurrencies of the runs a vLLM or SGLang result file holds, in file order,
// each once (a concurrency run twice counts once: an import reads its last run); nil for
// AIPerf, whose directory is always one run. A run without a max_concurrency is skipped.
func Runs(format, path string) ([]int, error) {
	if format != SourceVLLM && format != SourceSGLang {
		return nil, nil
	}
	docs, err := readServeDocs(path)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, d := range docs {
		c, ok, err := d.num("max_concurrency", false)
		if err != nil {
			return nil, err
		}
		if ok && !slices.Contains(out, int(c)) {
			out = append(out, int(c))
		}
	}
	return out, nil
}

package benchfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Formats lists the import formats, in the order help texts name them.
func Formats() []string { return []string{SourceAIPerf, SourceVLLM, SourceSGLang} }

// Detect names the format of path from its content: an AIPerf artifact directory (or one of
// its two files, then the directory is the path to import), a vLLM bench serve result
// (model_id) or an SGLang bench_serving line (backend without model_id). It returns the path
// to import, which differs from path only for an AIPerf file.
func Detect(path string) (format, importPath string, err error) { return NewFiles().Detect(path) }

// Detect is the package's Detect reading through fs: a file it recognises is not read again
// by the import that follows.
func (fs *Files) Detect(path string) (format, importPath string, err error) {
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
	d, err := fs.lastRun(path) // the run an import reads
	if err != nil {
		return "", "", err
	}
	_, model := d.keys["model_id"]
	_, backend := d.keys["backend"]
	_, config := d.keys["input_config"]
	_, metadata := d.keys["metadata"]
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
	return "", "", &Error{File: path, Line: d.line, Field: "(document)",
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

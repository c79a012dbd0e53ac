package benchfile

import (
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// ReadSGLang reads a `sglang.bench_serving` JSONL file (one run appended per line: the last
// line at the expected load, else the last line). With --output-details a line carries the
// per-request lists (input_lens, output_lens, ttfts, itls, errors; newer builds nest them
// under details) and every statistic is recomputed from them; without, its aggregates are
// used as stated. SGLang records no send times: the window is the file's duration.
func ReadSGLang(file string, e Expect, o stats.Options) (*Result, error) {
	return NewFiles().readSGLang(file, e, o)
}

func (fs *Files) readSGLang(file string, e Expect, o stats.Options) (*Result, error) {
	d, err := fs.run(file, e.Want())
	if err != nil {
		return nil, err
	}
	if _, ok := d.keys["model_id"]; ok {
		return nil, d.pos("model_id", "this is a vLLM bench serve result (import it as vllm-bench)")
	}
	if _, ok := d.keys["backend"]; !ok {
		return nil, &Error{File: file, Line: d.line, Field: "backend", Msg: "missing (not an SGLang bench_serving result?)"}
	}
	r := &Result{Source: SourceSGLang, File: file, TokenBasis: sglangCounted(d)}
	if err := r.readServe(d, e, o, "backend", "random_input_len", "random_output_len"); err != nil {
		return nil, err
	}
	return r, nil
}

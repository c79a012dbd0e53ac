package benchfile

import (
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// ReadSGLang reads a `sglang.bench_serving` JSONL file (one run appended per line: the last
// line at e.Concurrency, else the last line). Its aggregates are used as stated; the file
// carries no per-request timing.
func ReadSGLang(file string, e Expect, o stats.Options) (*Result, error) {
	d, err := readServeRun(file, e.Concurrency)
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
	agg, err := d.fixedRun(r)
	if err != nil {
		return nil, err
	}
	isl, _, _ := d.num("random_input_len", false)
	osl, _, _ := d.num("random_output_len", false)
	if err := r.check(e, d.data, d.line, "backend", "max_concurrency", isl, osl, "random_input_len", "random_output_len"); err != nil {
		return nil, err
	}
	r.finish(o, agg)
	r.serveClock(d)
	return r, nil
}

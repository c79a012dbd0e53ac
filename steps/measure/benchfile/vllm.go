package benchfile

import (
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// ReadVLLM reads a `vllm bench serve --save-result` JSON file (with --append-result, one
// object per run: the last one at the expected load, else the last one).
func ReadVLLM(file string, e Expect, o stats.Options) (*Result, error) {
	return NewFiles().readVLLM(file, e, o)
}

func (fs *Files) readVLLM(file string, e Expect, o stats.Options) (*Result, error) {
	d, err := fs.run(file, e.Want())
	if err != nil {
		return nil, err
	}
	if _, ok := d.keys["model_id"]; !ok {
		if _, sg := d.keys["random_input_len"]; sg {
			return nil, &Error{File: file, Line: d.line, Field: "model_id", Msg: "missing: this looks like an SGLang bench_serving result (import it as sglang-bench)"}
		}
		return nil, &Error{File: file, Line: d.line, Field: "model_id", Msg: "missing (not a vLLM bench serve result?)"}
	}
	r := &Result{Source: SourceVLLM, File: file, Model: d.str("model_id")}
	r.TokenBasis = vllmCounted(d)
	if v := d.str("vllm_version"); v != "" {
		r.SourceVersion = v
	}
	if err := r.readServe(d, e, o, "model_id", "", ""); err != nil {
		return nil, err
	}
	return r, nil
}

package benchfile

import (
	"strings"

	"github.com/perfdag/perfdag/schema"
)

// What each tool's token counts are (its sources, see shared reference imports/):
//
//   - AIPerf re-encodes the prompt and the streamed text with its client tokenizer (--tokenizer,
//     else each model's own), or takes the server's usage with --use-server-token-count
//     (input_config.endpoint.use_server_token_count).
//   - vLLM bench serve takes usage.completion_tokens (and, in recent builds, prompt_tokens) when
//     the server sent usage, else re-encodes the generated text with tokenizer_id (1 token per
//     request without a tokenizer).
//   - SGLang bench_serving's total_output_tokens sums each request's output_len, which its
//     backend's request function fills: the server's meta_info/usage completion_tokens, else the
//     requested output length; trt and truss always the requested length. Its
//     total_output_tokens_retokenized (the client tokenizer's count) is not what perfdag reads.

// pointBasis is the token basis an imported point names: the source's counts, as it made them.
func (r *Result) pointBasis() string { return schema.ImportedBasis(r.Source, r.TokenBasis) }

// aiperfCounted is what an AIPerf run counted its tokens with, from its input_config.
func aiperfCounted(cfg aiperfConfig) string {
	if cfg.Endpoint.UseServerTokenCount {
		return schema.CountedServer
	}
	name := cfg.Tokenizer.Name
	if name == "" { // AIPerf loads each model's own tokenizer
		name = strings.Join(cfg.Endpoint.ModelNames, ", ")
	}
	if name == "" {
		return "client tokenizer (the file names none)"
	}
	return schema.CountedTokenizerPrefix + name
}

// vllmCounted is what a vLLM bench serve result counted its tokens with.
func vllmCounted(d *serveDoc) string {
	tok := d.str("tokenizer_id")
	if tok == "" { // --skip-tokenizer-init: a request without usage counts 1 output token
		return schema.CountedServer + ", else 1 token per request (no tokenizer)"
	}
	return schema.CountedServer + ", else " + schema.CountedTokenizerPrefix + tok
}

// sglangCounted is what an SGLang bench_serving run's total_output_tokens counts, by the
// backend its line names.
func sglangCounted(d *serveDoc) string {
	switch b := d.str("backend"); b {
	case "sglang", "sglang-native":
		return schema.CountedServer
	case "sglang-oai", "sglang-oai-chat", "vllm", "vllm-chat", "lmdeploy", "lmdeploy-chat":
		return schema.CountedServer + ", else " + schema.CountedRequested
	case "trt", "truss":
		return schema.CountedRequested
	default:
		return "output_len of backend " + b
	}
}

// Package benchgen writes other tools' benchmark outputs at scale, for the import's memory
// tests and benchmarks: an SGLang bench_serving JSONL of many runs, each with its per-request
// lists (--output-details), consistent so the import accepts every run.
package benchgen

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// SGLangDetails writes path: runs lines of sglang.bench_serving output at max_concurrency
// 1..runs, each with requests requests of about 100 prompt and 16 output tokens and their
// per-request lists (input_lens, output_lens, ttfts, itls, generated_texts, errors), the
// stated totals agreeing with the lists. It returns the file's size in bytes.
func SGLangDetails(path string, runs, requests int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", path, err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for c := 1; c <= runs; c++ {
		w.WriteString(sglangLine(c, requests))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	return st.Size(), f.Close()
}

const outputTokens = 16

// sglangLine is one run at concurrency c, as Python's json.dumps writes it (", " and ": ").
func sglangLine(c, n int) string {
	var (
		ins, outs, ttfts, itls, texts, errs []string
		inTotal, ttftSum                    float64
		itlSum                              float64
	)
	for i := range n {
		in := 90 + (i*7+c)%21
		inTotal += float64(in)
		ttft := 0.04 + float64((i*13+c)%50)/1000 + float64(c%7)/1e6
		ttftSum += ttft
		gaps := make([]string, outputTokens-1)
		for g := range gaps {
			v := 0.008 + float64((i+g*3+c)%11)/1000 + float64(g)/1e7
			itlSum += v
			gaps[g] = num(v)
		}
		ins = append(ins, strconv.Itoa(in))
		outs = append(outs, strconv.Itoa(outputTokens))
		ttfts = append(ttfts, num(ttft))
		itls = append(itls, "["+strings.Join(gaps, ", ")+"]")
		texts = append(texts, strconv.Quote(fmt.Sprintf("the answer to request %d of run %d is a short sentence of sixteen tokens", i, c)))
		errs = append(errs, `""`)
	}
	duration := float64(n) * 0.25 / float64(c)
	if duration < 0.5 {
		duration = 0.5
	}
	meanTTFT, meanITL := ttftSum/float64(n)*1000, itlSum/float64(n*(outputTokens-1))*1000
	e2e := meanTTFT + meanITL*(outputTokens-1)
	var b strings.Builder
	fmt.Fprintf(&b, `{"backend": "sglang-oai-chat", "dataset_name": "random", "request_rate": Infinity, "max_concurrency": %d, `+
		`"sharegpt_output_len": null, "random_input_len": 100, "random_output_len": %d, "random_range_ratio": 0.2, "duration": %s, `+
		`"completed": %d, "total_input_tokens": %d, "total_output_tokens": %d, "total_output_tokens_retokenized": %d, `+
		`"request_throughput": %s, "input_throughput": %s, "output_throughput": %s, `+
		`"mean_e2e_latency_ms": %s, "median_e2e_latency_ms": %s, "std_e2e_latency_ms": 3.5, "p99_e2e_latency_ms": %s, `+
		`"mean_ttft_ms": %s, "median_ttft_ms": %s, "std_ttft_ms": 14.1, "p99_ttft_ms": %s, `+
		`"mean_tpot_ms": %s, "median_tpot_ms": %s, "std_tpot_ms": 3.1, "p99_tpot_ms": %s, `+
		`"mean_itl_ms": %s, "median_itl_ms": %s, "std_itl_ms": 3.2, "p95_itl_ms": %s, "p99_itl_ms": %s, "concurrency": %s, "accept_length": null, `,
		c, outputTokens, num(duration), n, int(inTotal), n*outputTokens, n*outputTokens,
		num(float64(n)/duration), num(inTotal/duration), num(float64(n*outputTokens)/duration),
		num(e2e), num(e2e), num(e2e*1.3), num(meanTTFT), num(meanTTFT), num(meanTTFT*1.8),
		num(meanITL), num(meanITL), num(meanITL*1.5), num(meanITL), num(meanITL), num(meanITL*1.6), num(meanITL*1.9), num(float64(min(c, n))*0.9))
	fmt.Fprintf(&b, `"input_lens": [%s], "output_lens": [%s], "ttfts": [%s], "itls": [%s], "generated_texts": [%s], "errors": [%s]}`,
		strings.Join(ins, ", "), strings.Join(outs, ", "), strings.Join(ttfts, ", "), strings.Join(itls, ", "), strings.Join(texts, ", "), strings.Join(errs, ", "))
	return b.String()
}

// num writes a float in its shortest round-trip form with a point, as Python's repr does for
// the magnitudes written here.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

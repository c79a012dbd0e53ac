package promscrape

import (
	"strings"
	"time"

	"github.com/perfdag/perfdag/schema"
)

// SpecWindowSchema names the record Window produces.
const SpecWindowSchema = "spec_window_v1"

// Alias lists, current name first, then deprecated names, then other engines (reference/telemetry.md
// §1.3–§1.6, reference/measurement.md and peers/README.md for llama.cpp's `llamacpp:` names).
// They are read-only lookup tables.
var (
	kvCacheUsageAliases = []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage",
		"llamacpp:kv_cache_usage_ratio"}
	runningAliases = []string{"vllm:num_requests_running", "sglang:num_running_reqs", "llamacpp:requests_processing",
		"dynamo_frontend_inflight_requests", "dynamo_frontend_active_requests"}
	queuedAliases = []string{"vllm:num_requests_waiting", "sglang:num_queue_reqs", "llamacpp:requests_deferred",
		"dynamo_frontend_queued_requests"}
	generationAliases = []string{"vllm:generation_tokens", "sglang:generation_tokens", "llamacpp:tokens_predicted",
		"dynamo_frontend_output_tokens"}
	specDraftsAliases   = []string{"vllm:spec_decode_num_drafts", "llamacpp:spec_decode_num_drafts"}
	specDraftTokAliases = []string{"vllm:spec_decode_num_draft_tokens", "llamacpp:spec_decode_num_draft_tokens"}
	specAcceptedAliases = []string{"vllm:spec_decode_num_accepted_tokens", "llamacpp:spec_decode_num_accepted_tokens"}
	sglAcceptLenAliases = []string{"sglang:spec_accept_length"}
	sglAcceptRateAlias  = []string{"sglang:spec_accept_rate"}
	// prefixCachePairs are (hits, queries) counter pairs in tokens; the first pair a scrape
	// exports wins. SGLang has no query counter: cached prompt tokens over prompt tokens is the
	// same ratio.
	prefixCachePairs = [][2]string{
		{"vllm:prefix_cache_hits", "vllm:prefix_cache_queries"},
		{"vllm:gpu_prefix_cache_hits", "vllm:gpu_prefix_cache_queries"},
		{"sglang:cached_tokens", "sglang:prompt_tokens"},
	}
)

// Reading is what one scrape contributes to a window's peaks and gauge averages; a Sampler keeps
// these (a few numbers) rather than whole scrapes, so sampling a long run stays small.
type Reading struct {
	At                 time.Time `json:"t"`
	KVCacheUsage       *float64  `json:"kv_cache_usage,omitempty"`            // busiest engine, ratio 0–1
	RunningRequests    *float64  `json:"num_requests_running,omitempty"`      // summed over engines
	QueuedRequests     *float64  `json:"num_requests_waiting,omitempty"`      // summed over engines
	SGLangAcceptLength *float64  `json:"sglang_spec_accept_length,omitempty"` // mean over ranks
	SGLangAcceptRate   *float64  `json:"sglang_spec_accept_rate,omitempty"`   // mean over ranks
	// Families names the engine metric families the scrape held (see Engines).
	Families []string `json:"families,omitempty"`
}

// Reading extracts the gauges a window tracks from one scrape (nil fields: not exported).
func (s *Scrape) Reading() Reading {
	if s == nil {
		return Reading{}
	}
	r := Reading{At: s.At}
	r.KVCacheUsage = opt(s.Max(kvCacheUsageAliases...))
	r.RunningRequests = opt(s.Sum(runningAliases...))
	r.QueuedRequests = opt(s.Sum(queuedAliases...))
	r.Families = s.Engines()
	r.SGLangAcceptLength = opt(s.Mean(sglAcceptLenAliases...))
	r.SGLangAcceptRate = opt(s.Mean(sglAcceptRateAlias...))
	return r
}

// Window computes what scrape-spec records for one point from the scrape before the run, the
// scrape after it and the readings sampled during it. Cell, concurrency and file names are the
// caller's to set.
//
// vLLM: acceptance length = 1 + Δaccepted/Δdrafts and accept rate = Δaccepted/Δdraft_tokens, both
// null when Δdrafts is 0; a counter the server does not export stays null (absent is not zero).
// Servers old enough to lack the drafts counter still get the rate (from draft tokens) but no
// acceptance length. SGLang exports gauges only: the mean of the readings taken in the window
// (the samples and the after scrape). KV-cache usage and running requests are peaks over every
// reading including before and after; prefix-cache hit rates are hits/queries in tokens.
func Window(before, after *Scrape, samples ...Reading) schema.SpecWindow {
	w := schema.SpecWindow{Schema: SpecWindowSchema, Source: "none"}
	if before != nil && after != nil {
		w.WindowS = after.At.Sub(before.At).Seconds()
	}

	drafts, okD := Delta(before, after, specDraftsAliases...)
	draftToks, okT := Delta(before, after, specDraftTokAliases...)
	accepted, okA := Delta(before, after, specAcceptedAliases...)
	if okD || okT || okA {
		w.Source = "vllm"
		if _, name := after.Family(specDraftTokAliases...); strings.HasPrefix(name, "llamacpp:") {
			w.Source = "llamacpp"
		}
		w.Drafts, w.DraftTokens, w.AcceptedTokens = opt(drafts, okD), opt(draftToks, okT), opt(accepted, okA)
		if okA && okD && drafts > 0 {
			w.AcceptanceLength = f64(1 + accepted/drafts)
		}
		if okA && okT && draftToks > 0 && (!okD || drafts > 0) {
			w.SpecAcceptRate = f64(accepted / draftToks)
		}
	}

	inWindow := append(append([]Reading(nil), samples...), after.Reading())
	if w.Source == "none" {
		l := meanOf(inWindow, func(r Reading) *float64 { return r.SGLangAcceptLength })
		rate := meanOf(inWindow, func(r Reading) *float64 { return r.SGLangAcceptRate })
		if l != nil || rate != nil {
			w.Source = "sglang"
			w.AcceptanceLength, w.SpecAcceptRate = l, rate
		}
	}

	all := append([]Reading{before.Reading()}, inWindow...)
	w.KVCacheUsagePeak = maxOf(all, func(r Reading) *float64 { return r.KVCacheUsage })
	w.RunningRequestsPeak = maxOf(all, func(r Reading) *float64 { return r.RunningRequests })

	w.PrefixCacheHitRatePre = cumulativeHitRate(before)
	w.PrefixCacheHitRatePost = cumulativeHitRate(after)
	if pair := prefixPair(after); pair != nil {
		hits, okH := Delta(before, after, pair[0])
		queries, okQ := Delta(before, after, pair[1])
		if okH && okQ && queries > 0 {
			w.PrefixCacheHitRate = f64(hits / queries)
		}
	}

	if gen, ok := Delta(before, after, generationAliases...); ok {
		w.GenerationTokens = f64(gen)
		if w.WindowS > 0 {
			w.AvgGenerationTokPerS = f64(gen / w.WindowS)
		}
	}
	return w
}

// prefixPair returns the first (hits, queries) pair the scrape exports in full.
func prefixPair(s *Scrape) *[2]string {
	for i, p := range prefixCachePairs {
		if f, _ := s.Family(p[0]); f == nil {
			continue
		}
		if f, _ := s.Family(p[1]); f == nil {
			continue
		}
		return &prefixCachePairs[i]
	}
	return nil
}

// cumulativeHitRate is hits/queries since the server started; nil without queries.
func cumulativeHitRate(s *Scrape) *float64 {
	pair := prefixPair(s)
	if pair == nil {
		return nil
	}
	hits, _ := s.Sum(pair[0])
	queries, _ := s.Sum(pair[1])
	if queries <= 0 {
		return nil
	}
	return f64(hits / queries)
}

func maxOf(rs []Reading, field func(Reading) *float64) *float64 {
	var m *float64
	for _, r := range rs {
		if v := field(r); v != nil && (m == nil || *v > *m) {
			m = f64(*v)
		}
	}
	return m
}

func meanOf(rs []Reading, field func(Reading) *float64) *float64 {
	sum, n := 0.0, 0
	for _, r := range rs {
		if v := field(r); v != nil {
			sum += *v
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return f64(sum / float64(n))
}

func f64(v float64) *float64 { return &v }

func opt(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

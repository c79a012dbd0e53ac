package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/perfdag/perfdag/schema"
)

// Defaults of the latency model and the workload, applied when a SimConfig field is zero.
// A negative delay means zero (a zero field means "use the default").
const (
	DefaultTTFTMs          = 40.0
	DefaultPrefillMsPer1K  = 8.0
	DefaultTPOTMs          = 8.0
	DefaultBatchTPOTMs     = 0.05
	DefaultMaxBatch        = 256
	DefaultReasoningTokens = 64
	DefaultSpecTokens      = 3
	DefaultMaxTokens       = 256 // output budget of a request that sets neither max_tokens nor max_completion_tokens
	KVCapacityTokens       = 1 << 20
)

// Fault names, as in the campaign YAML (schema.SimFaults tags) and in Served.Fault.
const (
	FaultHTTP500   = "http_500"
	FaultHTTP429   = "http_429"
	FaultDrop      = "drop"
	FaultStall     = "stall"
	FaultMalformed = "malformed"
	FaultSSEError  = "sse_error"
	FaultInBand    = "inband_error"
)

// ExpectedClass is the error class a correct client gives a request that met fault.
func ExpectedClass(fault string) string {
	switch fault {
	case FaultHTTP500:
		return schema.ErrorHTTP
	case FaultHTTP429:
		return schema.ErrorRateLimit
	case FaultDrop:
		return schema.ErrorDropped
	case FaultStall:
		return schema.ErrorTimeout
	case FaultMalformed:
		return schema.ErrorMalformed
	case FaultSSEError:
		return schema.ErrorSSE
	case FaultInBand:
		return schema.ErrorInBand
	}
	return ""
}

// params is a SimConfig with defaults applied and delays as durations.
type params struct {
	seed            int64
	zero            bool
	ttft            time.Duration
	ttftSigma       float64 // TTFT × exp(σZ): lognormal around the nominal TTFT
	prefillPer1K    time.Duration
	tpot            time.Duration
	batchTPOT       time.Duration
	maxBatch        int
	chunkTokens     int
	reasoning       bool
	reasoningField  string // reasoning_content, reasoning or think
	reasoningTokens int
	unanswered      float64
	specRate        float64
	specTokens      int
	gpus            int
	faults          []faultShare // in a fixed order
}

type faultShare struct {
	name string
	frac float64
}

// resolve validates cfg and applies the defaults; errors name the YAML field.
func resolve(cfg schema.SimConfig) (params, error) {
	slow := cfg.Slowdown
	switch {
	case slow < 0 || math.IsNaN(slow) || math.IsInf(slow, 0):
		return params{}, fmt.Errorf("sim.slowdown = %v: want a positive factor (1 = nominal)", cfg.Slowdown)
	case slow == 0:
		slow = 1
	}
	delay := func(v, def float64) time.Duration {
		switch {
		case v == 0:
			v = def
		case v < 0:
			v = 0
		}
		return time.Duration(v * slow * float64(time.Millisecond))
	}
	p := params{
		seed:            cfg.Seed,
		zero:            cfg.ZeroDelay,
		ttft:            delay(cfg.TTFTMs, DefaultTTFTMs),
		ttftSigma:       cfg.TTFTSigma,
		prefillPer1K:    delay(cfg.PrefillMsPer1K, DefaultPrefillMsPer1K),
		tpot:            delay(cfg.TPOTMs, DefaultTPOTMs),
		batchTPOT:       delay(cfg.BatchTPOTMs, DefaultBatchTPOTMs),
		maxBatch:        orDefault(cfg.MaxBatch, DefaultMaxBatch),
		chunkTokens:     orDefault(cfg.ChunkTokens, 1),
		reasoning:       cfg.Reasoning,
		reasoningField:  cfg.ReasoningField,
		reasoningTokens: orDefault(cfg.ReasoningTokens, DefaultReasoningTokens),
		unanswered:      cfg.UnansweredFraction,
		specRate:        cfg.SpecAcceptRate,
		specTokens:      orDefault(cfg.SpecTokens, DefaultSpecTokens),
		gpus:            orDefault(cfg.GPUs, 1),
	}
	if s := cfg.TTFTSigma; s < 0 || s > 5 || math.IsNaN(s) {
		return params{}, fmt.Errorf("sim.ttft_sigma = %v: want a spread between 0 and 5", s)
	}
	if p.zero {
		p.ttft, p.prefillPer1K, p.tpot, p.batchTPOT = 0, 0, 0, 0
	}
	for _, c := range []struct {
		field string
		v     int
	}{{"max_batch", cfg.MaxBatch}, {"chunk_tokens", cfg.ChunkTokens}, {"reasoning_tokens", cfg.ReasoningTokens}, {"spec_tokens", cfg.SpecTokens}, {"gpus", cfg.GPUs}} {
		if c.v < 0 {
			return params{}, fmt.Errorf("sim.%s = %d: want a positive integer (0 = default)", c.field, c.v)
		}
	}
	switch p.reasoningField {
	case "":
		p.reasoningField = "reasoning_content"
	case "reasoning_content", "reasoning", "think":
	default:
		return params{}, fmt.Errorf("sim.reasoning_field = %q: want reasoning_content, reasoning or think", cfg.ReasoningField)
	}
	if err := fraction("sim.unanswered_fraction", cfg.UnansweredFraction); err != nil {
		return params{}, err
	}
	if err := fraction("sim.spec_accept_rate", cfg.SpecAcceptRate); err != nil {
		return params{}, err
	}
	f := cfg.Faults
	p.faults = []faultShare{
		{FaultHTTP500, f.HTTP500}, {FaultHTTP429, f.HTTP429}, {FaultDrop, f.Drop}, {FaultStall, f.Stall},
		{FaultMalformed, f.Malformed}, {FaultSSEError, f.SSEError}, {FaultInBand, f.InBand},
	}
	total := 0.0
	for _, s := range p.faults {
		if err := fraction("sim.faults."+s.name, s.frac); err != nil {
			return params{}, err
		}
		total += s.frac
	}
	if total > 1+1e-9 {
		return params{}, fmt.Errorf("sim.faults: fractions add up to %.3f: want at most 1", total)
	}
	return p, nil
}

func fraction(field string, v float64) error {
	if v < 0 || v > 1 || math.IsNaN(v) {
		return fmt.Errorf("%s = %v: want a fraction between 0 and 1", field, v)
	}
	return nil
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// ttftSpread is exp(σZ) for a standard normal Z: what a request's nominal TTFT is multiplied by.
func (p *params) ttftSpread(z float64) float64 {
	if p.ttftSigma == 0 {
		return 1
	}
	return math.Exp(p.ttftSigma * z)
}

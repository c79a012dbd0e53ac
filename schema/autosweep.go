package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// SweepAuto names sweep_probes.json's mode of a cell with sweep: auto.
const SweepAuto = "auto"

// Sweep is a cell's sweep: auto: its operating range found at run time the way GuideLLM's
// sweep profile finds it — a synchronous point (c1: one request at a time), a saturating one (a
// closed loop at ThroughputConcurrency), then Rates open-loop points evenly spaced from the
// synchronous point's request throughput to the saturating one's, the last at the saturating
// throughput itself. Written sweep: auto, or sweep: {auto: {rates: 10, throughput_concurrency: 256}}.
// The zero value is no sweep.
type Sweep struct {
	Auto *AutoSweep
}

// AutoSweep holds sweep: auto's settings; zero fields take their defaults.
type AutoSweep struct {
	Rates                 int `json:"rates,omitempty"`
	ThroughputConcurrency int `json:"throughput_concurrency,omitempty"`
}

// Defaults and bounds of sweep: auto.
const (
	AutoSweepRates       = 8   // rate points after the synchronous and saturating ones
	AutoSweepThroughputC = 128 // the saturating point's concurrency without max_in_flight
	AutoSweepMaxRates    = 100
	AutoSweepRateDigits  = 3 // significant digits of a computed rate (schema.RoundRate)
	autoSweepKeys        = "rates, throughput_concurrency"
)

// IsZero reports whether the cell has no sweep.
func (s Sweep) IsZero() bool { return s.Auto == nil }

// RatesOr is the number of rate points the sweep measures.
func (s Sweep) RatesOr() int {
	if s.Auto == nil || s.Auto.Rates == 0 {
		return AutoSweepRates
	}
	return s.Auto.Rates
}

// ThroughputConcurrency is the concurrency of the saturating point: as set, else the cell's
// max_in_flight (the most its rate points allow in flight), else AutoSweepThroughputC.
func (c *Cell) ThroughputConcurrency() int {
	switch {
	case c.Sweep.Auto != nil && c.Sweep.Auto.ThroughputConcurrency > 0:
		return c.Sweep.Auto.ThroughputConcurrency
	case c.MaxInFlight > 0:
		return c.MaxInFlight
	}
	return AutoSweepThroughputC
}

// AutoSweepResult is what sweep: auto found (sweep_probes.json's auto): its two anchors'
// request throughputs and the rates it spaced between them.
type AutoSweepResult struct {
	// SyncRequestRate is the synchronous point's (c1) request throughput, in requests/s.
	SyncRequestRate float64 `json:"sync_request_rate"`
	// ThroughputConcurrency is the saturating point's concurrency; PeakRequestRate its request throughput.
	ThroughputConcurrency int     `json:"throughput_concurrency"`
	PeakRequestRate       float64 `json:"peak_request_rate"`
	// Rates are the open-loop points it asked for, in order; MaxInFlight their cap (0: none).
	Rates       []float64 `json:"rates"`
	MaxInFlight int       `json:"max_in_flight,omitempty"`
	// Unknown says why no rate was asked: an anchor measured no request throughput.
	Unknown string `json:"unknown,omitempty"`
}

// AutoSweepRatesBetween are sweep: auto's rates between a synchronous request throughput and a
// saturating one: n evenly spaced, the last at the saturating throughput, each rounded to
// AutoSweepRateDigits significant digits (a key never carries float noise); repeats and rates
// that round to nothing are dropped. Nil when either throughput is not a positive number.
func AutoSweepRatesBetween(sync, top float64, n int) []float64 {
	if !(sync > 0) || !(top > 0) || math.IsInf(sync, 0) || math.IsInf(top, 0) || n < 1 {
		return nil
	}
	var out []float64
	for i := 1; i <= n; i++ {
		r := RoundRate(sync+(top-sync)*float64(i)/float64(n), AutoSweepRateDigits)
		if r <= 0 || r > MaxRate || slices.Contains(out, r) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// UnmarshalYAML reads auto, or {auto: {rates, throughput_concurrency}}; an error names the
// key it is about (sweep.auto.rates: ...), so validate points at it.
func (s *Sweep) UnmarshalYAML(unmarshal func(any) error) error {
	var v any
	if err := unmarshal(&v); err != nil {
		return err
	}
	return s.set(v)
}

// UnmarshalJSON reads the same forms as JSON.
func (s *Sweep) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return s.set(v)
}

func (s *Sweep) set(v any) error {
	switch x := v.(type) {
	case nil:
		*s = Sweep{}
		return nil
	case string:
		if x != SweepAuto {
			return fmt.Errorf("sweep: %q: want auto, or {auto: {%s}}", x, autoSweepKeys)
		}
		*s = Sweep{Auto: &AutoSweep{}}
		return nil
	case map[string]any:
		for k := range x {
			if k != SweepAuto {
				return fmt.Errorf("sweep.%s: unknown key: the mapping form is {auto: {%s}}", k, autoSweepKeys)
			}
		}
		a := &AutoSweep{}
		inner, ok := x[SweepAuto].(map[string]any)
		if x[SweepAuto] != nil && !ok {
			return fmt.Errorf("sweep.auto: want a mapping with %s", autoSweepKeys)
		}
		keys := make([]string, 0, len(inner))
		for k := range inner {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			n, err := wholeNumber(inner[k])
			switch k {
			case "rates":
				if err == nil && (n < 1 || n > AutoSweepMaxRates) {
					err = fmt.Errorf("%d: want 1 to %d rate points", n, AutoSweepMaxRates)
				}
				a.Rates = n
			case "throughput_concurrency":
				if err == nil && (n < 2 || n > 100000) {
					err = fmt.Errorf("%d: want 2 to 100000 (the saturating point keeps many requests in flight)", n)
				}
				a.ThroughputConcurrency = n
			default:
				err = fmt.Errorf("unknown key: valid keys are %s", autoSweepKeys)
			}
			if err != nil {
				return fmt.Errorf("sweep.auto.%s: %w", k, err)
			}
		}
		*s = Sweep{Auto: a}
		return nil
	}
	return fmt.Errorf("sweep: want auto, or {auto: {%s}}", autoSweepKeys)
}

// wholeNumber reads a YAML or JSON integer.
func wholeNumber(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case int64:
		return int(x), nil
	case uint64:
		if x <= math.MaxInt32 {
			return int(x), nil
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= math.MaxInt32 {
			return int(x), nil
		}
	}
	return 0, fmt.Errorf("want a whole number, got %v", v)
}

// MarshalJSON writes {"auto": {...}} (the fingerprint of a cell holds it), null when zero.
func (s Sweep) MarshalJSON() ([]byte, error) {
	if s.Auto == nil {
		return []byte("null"), nil
	}
	return json.Marshal(map[string]any{SweepAuto: s.Auto})
}

// String is the form a person writes.
func (s Sweep) String() string {
	switch {
	case s.Auto == nil:
		return ""
	case *s.Auto == AutoSweep{}:
		return SweepAuto
	}
	var parts []string
	if s.Auto.Rates > 0 {
		parts = append(parts, fmt.Sprintf("rates: %d", s.Auto.Rates))
	}
	if s.Auto.ThroughputConcurrency > 0 {
		parts = append(parts, fmt.Sprintf("throughput_concurrency: %d", s.Auto.ThroughputConcurrency))
	}
	return "{auto: {" + strings.Join(parts, ", ") + "}}"
}

// JSONSchema describes sweep for editors.
func (Sweep) JSONSchema() map[string]any {
	return map[string]any{"oneOf": []any{
		map[string]any{"const": SweepAuto},
		map[string]any{"type": "object", "additionalProperties": false, "required": []any{SweepAuto}, "properties": map[string]any{
			SweepAuto: map[string]any{"type": []any{"object", "null"}, "additionalProperties": false, "properties": map[string]any{
				"rates":                  map[string]any{"type": "integer", "minimum": 1, "maximum": AutoSweepMaxRates},
				"throughput_concurrency": map[string]any{"type": "integer", "minimum": 2, "maximum": 100000},
			}},
		}},
	}}
}

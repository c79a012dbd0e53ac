package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// What a search bisects over (Search.Over).
const (
	SearchOverConcurrency = "concurrency"
	SearchOverRate        = "rate"
)

// DefaultRatePct is a rate search's resolution when it sets none: 2 % of the rate.
const DefaultRatePct = 2.0

// MinRatePct is the finest relative resolution a rate search may ask: the grid's rates are
// keys of at most RateDigits significant digits, which a finer step would not tell apart.
const MinRatePct = 0.1

// Resolution is how finely a search knows its knee: a whole number of concurrencies (N), or
// for a rate search a percentage of the rate (Pct, written "2%"). Zero is the default.
type Resolution struct {
	N   int     // concurrencies (over: concurrency)
	Pct float64 // percent of the rate (over: rate)
}

// IsZero reports an unset resolution (omitempty).
func (r Resolution) IsZero() bool { return r.N == 0 && r.Pct == 0 }

// String is the resolution as written: "4", "2%", "" when unset.
func (r Resolution) String() string {
	switch {
	case r.Pct > 0:
		return strconv.FormatFloat(r.Pct, 'f', -1, 64) + "%"
	case r.N > 0:
		return strconv.Itoa(r.N)
	}
	return ""
}

// ParseResolution reads "4" (concurrencies) or "2%" (percent of the rate).
func ParseResolution(s string) (Resolution, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || v < MinRatePct || v > 100 {
			return Resolution{}, fmt.Errorf("resolution %q: a rate search's resolution is a percentage of the rate from %s%% to 100%%, e.g. 2%%", s, strconv.FormatFloat(MinRatePct, 'f', -1, 64))
		}
		return Resolution{Pct: v}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 100000 {
		return Resolution{}, fmt.Errorf("resolution %q: want a whole number of concurrencies (0..100000), or for a search over rate a percentage such as 2%%", s)
	}
	return Resolution{N: n}, nil
}

// UnmarshalYAML reads an integer or a percentage string.
func (r *Resolution) UnmarshalYAML(unmarshal func(any) error) error {
	var v any
	if err := unmarshal(&v); err != nil {
		return err
	}
	switch x := v.(type) {
	case nil:
		*r = Resolution{}
		return nil
	case float64:
		if x != math.Trunc(x) {
			return fmt.Errorf("resolution %v: want a whole number of concurrencies, or for a search over rate a percentage with its sign, e.g. 2%%", x)
		}
	}
	parsed, err := ParseResolution(fmt.Sprint(v))
	if err != nil {
		return err
	}
	*r = parsed
	return nil
}

// MarshalYAML writes the form the user wrote.
func (r Resolution) MarshalYAML() (any, error) {
	if r.Pct > 0 {
		return r.String(), nil
	}
	return r.N, nil
}

// MarshalJSON writes an integer or "2%".
func (r Resolution) MarshalJSON() ([]byte, error) {
	if r.Pct > 0 {
		return json.Marshal(r.String())
	}
	return []byte(strconv.Itoa(r.N)), nil
}

// UnmarshalJSON reads an integer or "2%".
func (r *Resolution) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v == nil {
		*r = Resolution{}
		return nil
	}
	parsed, err := ParseResolution(fmt.Sprint(v))
	if err != nil {
		return err
	}
	*r = parsed
	return nil
}

// JSONSchema describes Resolution for editors.
func (Resolution) JSONSchema() map[string]any {
	return map[string]any{"oneOf": []any{
		map[string]any{"type": "integer", "minimum": 0, "maximum": 100000, "description": "concurrencies (over: concurrency)"},
		map[string]any{"type": "string", "pattern": `^[0-9]+(\.[0-9]+)?%$`, "description": "percent of the rate (over: rate), 0.1% to 100%"},
	}}
}

// RatePct is a rate search's resolution in percent (DefaultRatePct when unset).
func (s *Search) RatePct() float64 {
	if s == nil || s.Resolution.Pct <= 0 {
		return DefaultRatePct
	}
	return s.Resolution.Pct
}

// RateGrid is the rates a rate search may probe, ascending from from to to (both exact): K
// steps of equal ratio, K = ⌈ln(to/from) / ln(1 + resolution)⌉ (the search's range over its
// resolution), each rate rounded to the fewest significant digits — from two more than the
// step needs, at most RateDigits — that keep every step above 1 and within the resolution, so
// keys stay short (r12.34); a few steps more only when no rounding can (a ratio a hair under
// the resolution, which at 0.1 % over a wide range adds about 1 %). The search bisects over the grid's positions, so its knee is a grid rate and
// the next rate up is at most the resolution above it. Nil when the bounds are not a range of
// valid rates.
func (s *Search) RateGrid() []float64 {
	if s == nil || CheckRate(s.From) != nil || CheckRate(s.To) != nil || s.To < s.From {
		return nil
	}
	if s.To == s.From {
		return []float64{s.From}
	}
	step := 1 + s.RatePct()/100
	k := max(int(math.Ceil(math.Log(s.To/s.From)/math.Log(step)-1e-9)), 1)
	var grid []float64
	for steps := k; steps <= k+3; steps++ {
		for digits := ratePlaces(s.RatePct()); digits <= RateDigits; digits++ {
			grid = geometric(s.From, s.To, steps, digits)
			if within(grid, step) {
				return grid
			}
		}
	}
	// a ratio within 1.1e-5 of the resolution (two roundings at RateDigits move it at most 1e-5): enough steps that rounding at RateDigits keeps
	// every one within it (a fine resolution over a wide range)
	safe := int(math.Ceil(math.Log(s.To/s.From) / math.Log(step/(1+1.1e-5))))
	return geometric(s.From, s.To, safe, RateDigits)
}

// geometric is steps equal-ratio steps from a to b, the rates between rounded to digits.
func geometric(a, b float64, steps, digits int) []float64 {
	g := make([]float64, steps+1)
	for i := range g {
		g[i] = RoundRate(a*math.Pow(b/a, float64(i)/float64(steps)), digits)
	}
	g[0], g[steps] = a, b
	return g
}

// within reports whether every step of grid rises, by at most the factor step.
func within(grid []float64, step float64) bool {
	for i := 1; i < len(grid); i++ {
		if grid[i] <= grid[i-1] || grid[i] > grid[i-1]*step {
			return false
		}
	}
	return true
}

// RateIndex is the position of rate in the search's grid, -1 when it is not one of its rates.
func RateIndex(grid []float64, rate float64) int {
	for i, r := range grid {
		if r == rate {
			return i
		}
	}
	return -1
}

// ratePlaces is how many significant digits a grid of this step keeps: two more than the
// step's first significant digit needs (2 % → 4: 12.34, 12.58), at least 3, at most RateDigits.
func ratePlaces(pct float64) int {
	d := int(math.Ceil(-math.Log10(pct/100))) + 2
	return min(max(d, 3), RateDigits)
}

// RateBounds checks a rate search's from, to and resolution; keys name what is wrong (from,
// to, resolution), values say what.
func (s *Search) RateBounds() map[string]string {
	out := map[string]string{}
	for key, v := range map[string]float64{"from": s.From, "to": s.To} {
		if err := CheckRate(v); err != nil && v > 0 && v <= MaxRate { // beyond, the range tag says so
			out[key] = err.Error()
		}
	}
	if s.From == 0 {
		out["from"] = "a rate search needs its lowest rate, from (requests per second)"
	}
	if s.To == 0 {
		out["to"] = "a rate search needs its highest rate, to (requests per second)"
	}
	if _, bad := out["to"]; !bad && s.From > 0 && s.To > 0 && s.To < s.From {
		out["to"] = fmt.Sprintf("search from %s to %s req/s is not a range", FormatRate(s.From), FormatRate(s.To))
	}
	if s.Resolution.N > 0 {
		out["resolution"] = fmt.Sprintf("resolution %d is a number of concurrencies; a rate search's resolution is a percentage of the rate", s.Resolution.N)
	}
	return out
}

// rateBandText is BandText for a rate search: "48.2 req/s", "48.2 req/s (47.3–49.1 req/s at
// 95 %)", "≥ 100 req/s" at the top, "none" when even from misses.
func (r *SweepResult) rateBandText() string {
	rate := func(v float64) string {
		if v == 0 {
			return "none"
		}
		return FormatRate(v) + " req/s"
	}
	knee := rate(r.KneeRate)
	if r.KneeRate > 0 && r.KneeAtTop {
		knee = "≥ " + knee
	}
	if r.KneeRateLo == r.KneeRateHi {
		return knee
	}
	lo := "none"
	if r.KneeRateLo > 0 {
		lo = FormatRate(r.KneeRateLo)
	}
	band := lo + "–" + rate(r.KneeRateHi)
	if r.KneeRateHi == r.ToRate && !r.decidedMiss() {
		band += " or beyond"
	}
	if r.BandLevel > 0 {
		band += fmt.Sprintf(" at %s %%", strconv.FormatFloat(math.Round(1000*r.BandLevel)/10, 'f', -1, 64))
	}
	return knee + " (" + band + ")"
}

// UndecidedLoads lists the points whose probes measured to their max without a verdict, in
// load order.
func (r *SweepResult) UndecidedLoads() []Load {
	var out []Load
	for _, p := range r.Probes {
		if p.Verdict == VerdictUndecided && !p.RateShort {
			out = append(out, p.PointLoad())
		}
	}
	slices.SortFunc(out, Load.Compare)
	return out
}

package schema

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Load is the load one point of a cell is measured at: a concurrency (closed loop, the next
// request leaves when one ends) or a request rate with its in-flight cap (open loop, arrivals
// scheduled against the clock). Its Key names the point everywhere — node ids, folders, atlas
// and lake rows, baselines, imports, slices — and it is comparable, so the engine carries it
// as an opaque point key. The zero Load is no point (campaign- and cell-scope nodes).
type Load struct {
	Concurrency int     // closed loop: the requests kept in flight; 0 on a rate point
	Rate        float64 // open loop: requests per second; 0 on a concurrency point
	Cap         int     // open loop: the most requests in flight; 0 means none (every arrival is sent)
}

// Key spellings: c16, r2.5, r2.5-cap64. Unexported: callers ask Key and ParseLoad.
const (
	concPrefix = "c"
	ratePrefix = "r"
	capInfix   = "-cap"
)

// Rate limits: a rate is positive, at most MaxRate, and written with at most RateDigits
// significant digits, so its key is short and round-trips exactly.
const (
	MaxRate    = 100000
	RateDigits = 6
)

// Conc is the closed-loop point at n requests in flight.
func Conc(n int) Load { return Load{Concurrency: n} }

// RateAt is the open-loop point at rate requests per second, with at most cap in flight (0: no cap).
func RateAt(rate float64, cap int) Load { return Load{Rate: rate, Cap: cap} }

// IsZero reports whether l names no point.
func (l Load) IsZero() bool { return l == Load{} }

// IsRate reports whether l is an open-loop point.
func (l Load) IsRate() bool { return l.Rate > 0 }

// InFlight is what the point keeps or allows in flight: the concurrency, or the rate's cap (0:
// none). The atlas' and the lake's concurrency column holds it.
func (l Load) InFlight() int {
	if l.IsRate() {
		return l.Cap
	}
	return l.Concurrency
}

// CountBase is what "Nx" requests a point multiplies by: the concurrency, the rate's cap, or
// for a rate without a cap the rate rounded up (N seconds of arrivals).
func (l Load) CountBase() int {
	switch {
	case !l.IsRate():
		return l.Concurrency
	case l.Cap > 0:
		return l.Cap
	}
	return int(math.Ceil(l.Rate))
}

// Key names the point: c16 (closed loop), r2.5 (open loop, no cap), r2.5-cap64. The rate is
// its shortest decimal that reads back to the same float64 (2.5, never 2.50 or float noise).
func (l Load) Key() string {
	switch {
	case l.IsZero():
		return ""
	case !l.IsRate():
		return concPrefix + strconv.Itoa(l.Concurrency)
	case l.Cap > 0:
		return ratePrefix + FormatRate(l.Rate) + capInfix + strconv.Itoa(l.Cap)
	}
	return ratePrefix + FormatRate(l.Rate)
}

// String is the key.
func (l Load) String() string { return l.Key() }

// Label is the point for a reader: "concurrency 16", "2.5 req/s (cap 64)".
func (l Load) Label() string {
	switch {
	case l.IsZero():
		return ""
	case !l.IsRate():
		return "concurrency " + strconv.Itoa(l.Concurrency)
	case l.Cap > 0:
		return FormatRate(l.Rate) + " req/s (cap " + strconv.Itoa(l.Cap) + ")"
	}
	return FormatRate(l.Rate) + " req/s"
}

// FormatRate writes a rate as its shortest decimal that parses back to the same float64.
func FormatRate(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// CheckRate says what is wrong with a rate written in a campaign or a key: not positive, too
// large, or more significant digits than RateDigits (0.30000000000000004 is float noise).
func CheckRate(r float64) error {
	switch {
	case math.IsNaN(r) || math.IsInf(r, 0) || r <= 0:
		return fmt.Errorf("request rate %v: want a positive number of requests per second", r)
	case r > MaxRate:
		return fmt.Errorf("request rate %s: at most %d requests per second", FormatRate(r), MaxRate)
	case significantDigits(r) > RateDigits:
		return fmt.Errorf("request rate %s: write it with at most %d significant digits", FormatRate(r), RateDigits)
	}
	return nil
}

// RoundRate rounds a rate computed at run time (a sweep's spacing) to digits significant
// digits, so its key stays short: 3.3333333 → 3.33 at 3 digits.
func RoundRate(r float64, digits int) float64 {
	if r <= 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		return r
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(r, 'g', digits, 64), 64)
	return v
}

func significantDigits(r float64) int {
	s := strings.TrimLeft(strings.Replace(strconv.FormatFloat(r, 'e', -1, 64), ".", "", 1), "0")
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		s = s[:i]
	}
	return len(s)
}

// ParseLoad reads a key back. Only the canonical spelling is accepted (c016, r2.50 and r1e3
// are refused), so one point never has two names.
func ParseLoad(key string) (Load, error) {
	bad := func(why string) (Load, error) {
		return Load{}, fmt.Errorf("point %q: %s (want c<concurrency>, r<rate> or r<rate>-cap<in-flight cap>, e.g. c16, r2.5, r2.5-cap64)", key, why)
	}
	var l Load
	switch {
	case strings.HasPrefix(key, concPrefix):
		n, err := strconv.Atoi(key[len(concPrefix):])
		if err != nil || n < 1 {
			return bad("the concurrency is not a positive integer")
		}
		l = Conc(n)
	case strings.HasPrefix(key, ratePrefix):
		rate, capText, capped := strings.Cut(key[len(ratePrefix):], capInfix)
		r, err := strconv.ParseFloat(rate, 64)
		if err != nil {
			return bad("the rate is not a number")
		}
		if err := CheckRate(r); err != nil {
			return bad(err.Error())
		}
		l = RateAt(r, 0)
		if capped {
			c, err := strconv.Atoi(capText)
			if err != nil || c < 1 {
				return bad("the cap is not a positive integer")
			}
			l.Cap = c
		}
	default:
		return bad("unknown kind of point")
	}
	if l.Key() != key {
		return bad("not written as " + l.Key())
	}
	return l, nil
}

// Compare orders points for charts and tables: concurrency points by concurrency, then rate
// points by rate, a capped rate before the same rate without a cap (then by cap).
func (l Load) Compare(o Load) int {
	if l.IsRate() != o.IsRate() {
		if l.IsRate() {
			return 1
		}
		return -1
	}
	if !l.IsRate() {
		return cmp.Compare(l.Concurrency, o.Concurrency)
	}
	if c := cmp.Compare(l.Rate, o.Rate); c != 0 {
		return c
	}
	switch {
	case l.Cap == o.Cap:
		return 0
	case l.Cap == 0:
		return 1
	case o.Cap == 0:
		return -1
	}
	return cmp.Compare(l.Cap, o.Cap)
}

// MarshalText writes the key, so a Load is a string in JSON (a map key too).
func (l Load) MarshalText() ([]byte, error) { return []byte(l.Key()), nil }

// UnmarshalText reads a key; a bare integer is a concurrency as perfdag wrote points before
// they were keyed by load (baseline snapshots keyed "16"). An empty text is the zero Load.
func (l *Load) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*l = Load{}
		return nil
	}
	if n, err := strconv.Atoi(string(b)); err == nil && n > 0 {
		*l = Conc(n)
		return nil
	}
	v, err := ParseLoad(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// UnmarshalJSON reads a key, or a bare number as a concurrency (records written before points
// were keyed by load).
func (l *Load) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		return l.UnmarshalText([]byte(s))
	}
	if string(b) == "null" {
		*l = Load{}
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("point %s: want a key such as \"c16\" or \"r2.5-cap64\", or a concurrency", b)
	}
	*l = Conc(n)
	return nil
}

// PointLoad is the point's load: as recorded, or for a point written before points were
// keyed by load, its concurrency, or its request rate capped by it.
func (p *Point) PointLoad() Load { return LoadOf(p.Load, p.Concurrency, p.RequestRate) }

// LoadOf is a record's load: l when recorded, else the one its concurrency and request rate
// spell as perfdag wrote them before points were keyed by load (a rate capped by the
// concurrency).
func LoadOf(l Load, concurrency int, rate float64) Load {
	switch {
	case !l.IsZero():
		return l
	case rate > 0:
		return RateAt(rate, concurrency)
	case concurrency > 0:
		return Conc(concurrency)
	}
	return Load{}
}

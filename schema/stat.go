package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// statNames are the JSON names of a Stat's statistics, in field order; bit i of the unstated
// mask stands for statNames[i].
var statNames = [...]string{"avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"}

func (s *Stat) fields() [len(statNames)]*float64 {
	return [...]*float64{&s.Avg, &s.Min, &s.Max, &s.P1, &s.P5, &s.P10, &s.P25, &s.P50, &s.P75, &s.P90, &s.P95, &s.P99, &s.Std}
}

func statIndex(name string) int {
	for i, n := range statNames {
		if n == name {
			return i
		}
	}
	return -1
}

// Unstate marks statistics (by JSON name: avg, min, max, p1 … p99, std) the source did not
// state: their value becomes 0 in the struct and null in JSON, and Stated reports false for
// them. A name that is not a statistic panics: it is a programming error.
func (s *Stat) Unstate(names ...string) {
	f := s.fields()
	for _, n := range names {
		i := statIndex(n)
		if i < 0 {
			panic(fmt.Sprintf("schema.Stat.Unstate: %q is not a statistic", n))
		}
		s.unstated |= 1 << i
		*f[i] = 0
	}
}

// Set gives the named statistic (by JSON name, as Unstate takes) the value v and marks it
// stated; a name that is not a statistic panics.
func (s *Stat) Set(name string, v float64) {
	i := statIndex(name)
	if i < 0 {
		panic(fmt.Sprintf("schema.Stat.Set: %q is not a statistic", name))
	}
	s.unstated &^= 1 << i
	*s.fields()[i] = v
}

// UnstateAll marks every statistic unstated (a reader then Sets the ones its source states).
func (s *Stat) UnstateAll() { s.Unstate(statNames[:]...) }

// Stated reports whether the named statistic was stated; every statistic perfdag computes is.
func (s *Stat) Stated(name string) bool {
	i := statIndex(name)
	return s != nil && i >= 0 && s.unstated&(1<<i) == 0
}

// Value returns the named statistic and whether it was stated (false for a nil Stat).
func (s *Stat) Value(name string) (float64, bool) {
	if !s.Stated(name) {
		return 0, false
	}
	return *s.fields()[statIndex(name)], true
}

// Unstated lists the statistics the source did not state, in field order; nil when none.
func (s *Stat) Unstated() []string {
	var out []string
	for i, n := range statNames {
		if s.unstated&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// statPlain is Stat without its JSON methods.
type statPlain Stat

// NullableStats are a Stat's statistics, nil where one is not stated (null or absent in
// JSON); exported so readers of other tools' statistic objects (benchfile's AIPerf reader)
// decode into it and keep a missing statistic unstated instead of 0.
type NullableStats struct {
	Avg *float64 `json:"avg"`
	Min *float64 `json:"min"`
	Max *float64 `json:"max"`
	P1  *float64 `json:"p1"`
	P5  *float64 `json:"p5"`
	P10 *float64 `json:"p10"`
	P25 *float64 `json:"p25"`
	P50 *float64 `json:"p50"`
	P75 *float64 `json:"p75"`
	P90 *float64 `json:"p90"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
	Std *float64 `json:"std"`
}

func (n *NullableStats) fields() [len(statNames)]**float64 {
	return [...]**float64{&n.Avg, &n.Min, &n.Max, &n.P1, &n.P5, &n.P10, &n.P25, &n.P50, &n.P75, &n.P90, &n.P95, &n.P99, &n.Std}
}

// Scale multiplies every stated statistic by f (a unit conversion).
func (n *NullableStats) Scale(f float64) {
	for _, p := range n.fields() {
		if *p != nil {
			**p *= f
		}
	}
}

// Stat is the statistics as a Stat of unit and count, each nil one unstated.
func (n *NullableStats) Stat(unit string, count int) *Stat {
	s := &Stat{Unit: unit, Count: count}
	nf, sf := n.fields(), s.fields()
	for i := range statNames {
		if *nf[i] == nil {
			s.unstated |= 1 << i
			continue
		}
		*sf[i] = **nf[i]
	}
	return s
}

// statNullable is Stat's JSON form with a null for each unstated statistic.
type statNullable struct {
	Unit  string `json:"unit"`
	Count int    `json:"count"`
	NullableStats
}

// MarshalJSON writes every statistic, an unstated one as null; a Stat with none unstated
// encodes exactly as its plain fields would.
func (s Stat) MarshalJSON() ([]byte, error) {
	if s.unstated == 0 {
		return json.Marshal(statPlain(s))
	}
	n := statNullable{Unit: s.Unit, Count: s.Count}
	nf, sf := n.fields(), s.fields()
	for i := range statNames {
		if s.unstated&(1<<i) == 0 {
			*nf[i] = sf[i]
		}
	}
	return json.Marshal(n)
}

// UnmarshalJSON reads a Stat; a statistic that is null is unstated (absent is 0, as
// encoding/json reads it, when no statistic is null).
func (s *Stat) UnmarshalJSON(b []byte) error {
	if !bytes.Contains(b, []byte("null")) { // every statistic stated: the plain decode
		*s = Stat{}
		return json.Unmarshal(b, (*statPlain)(s))
	}
	var n statNullable
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*s = *n.Stat(n.Unit, n.Count)
	return nil
}

package schema

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestLoadKeys: every point has one spelling — c16, r2.5, r2.5-cap64 — that reads back to the
// same point, and nothing else reads as a point.
func TestLoadKeys(t *testing.T) {
	for _, c := range []struct {
		l   Load
		key string
	}{
		{Conc(16), "c16"}, {Conc(1), "c1"}, {RateAt(2.5, 0), "r2.5"}, {RateAt(2.5, 64), "r2.5-cap64"},
		{RateAt(0.1, 0), "r0.1"}, {RateAt(100000, 1), "r100000-cap1"}, {RateAt(0.001, 8), "r0.001-cap8"},
		{RateAt(2, 0), "r2"}, {RateAt(12.345, 0), "r12.345"},
	} {
		if got := c.l.Key(); got != c.key {
			t.Errorf("%+v: key %q, want %q", c.l, got, c.key)
		}
		back, err := ParseLoad(c.key)
		if err != nil || back != c.l {
			t.Errorf("ParseLoad(%q) = %+v, %v; want %+v", c.key, back, err, c.l)
		}
	}
	for _, bad := range []string{"", "c", "c0", "c-1", "c016", "c1.5", "16", "r", "r0", "r-1", "r2.50", "r02", "r1e3", "r+2",
		"rNaN", "rInf", "r2.5-cap", "r2.5-cap0", "r2.5-cap064", "r2.5cap64", "r2-c4", "x16", "r200000", "r0.30000000000000004", "C16"} {
		if l, err := ParseLoad(bad); err == nil {
			t.Errorf("ParseLoad(%q) = %+v: want an error", bad, l)
		}
	}
}

// TestRateKeysRoundTrip: a rate that passes CheckRate round-trips through its key exactly (the
// same float64 bits), and a computed rate rounded by RoundRate passes CheckRate.
func TestRateKeysRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		x := RoundRate(r.Float64()*1000, 1+r.IntN(RateDigits))
		if x <= 0 {
			continue
		}
		if err := CheckRate(x); err != nil {
			t.Fatalf("RoundRate gave %v: %v", x, err)
		}
		l := RateAt(x, r.IntN(3)*32)
		back, err := ParseLoad(l.Key())
		if err != nil || back != l {
			t.Fatalf("%v: key %q reads back as %+v, %v", x, l.Key(), back, err)
		}
	}
	if got := RoundRate(10.0/3, 3); got != 3.33 {
		t.Errorf("RoundRate(10/3, 3) = %v, want 3.33", got)
	}
	a, b := 0.1, 0.2 // variables: constant arithmetic would be exact
	if err := CheckRate(a + b); err == nil || !strings.Contains(err.Error(), "significant digits") {
		t.Errorf("0.1 + 0.2 (float noise): %v, want refused for its digits", err)
	}
}

// TestLoadOrder: concurrencies ascending, then rates ascending, a capped rate before the same
// rate uncapped.
func TestLoadOrder(t *testing.T) {
	want := []Load{Conc(1), Conc(8), Conc(64), RateAt(0.5, 0), RateAt(2, 16), RateAt(2, 64), RateAt(2, 0), RateAt(10, 4)}
	got := slices.Clone(want)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
	slices.SortFunc(got, Load.Compare)
	if !slices.Equal(got, want) {
		t.Errorf("sorted %v, want %v", got, want)
	}
}

// TestLoadJSON: a load is its key in JSON, as a value and as a map key; a bare number — how
// records written before load keys name a point — reads as a concurrency.
func TestLoadJSON(t *testing.T) {
	b, err := json.Marshal(map[Load]Load{RateAt(2.5, 64): Conc(16)})
	if err != nil || string(b) != `{"r2.5-cap64":"c16"}` {
		t.Fatalf("marshal: %s, %v", b, err)
	}
	var m map[Load]Load
	if err := json.Unmarshal([]byte(`{"r2.5-cap64":"c16","8":4}`), &m); err != nil {
		t.Fatal(err)
	}
	if m[RateAt(2.5, 64)] != Conc(16) || m[Conc(8)] != Conc(4) {
		t.Errorf("unmarshal: %v", m)
	}
	var l Load
	if err := json.Unmarshal([]byte(`"r2.50"`), &l); err == nil {
		t.Errorf("a non-canonical key read as %+v", l)
	}
}

// TestCellLoads: a cell's points are its concurrencies then its rates at its cap; the older
// spelling (workload.request_rate with concurrencies) makes rate points capped at each
// concurrency, whose keys were their caps alone.
func TestCellLoads(t *testing.T) {
	c := Cell{Concurrencies: []int{1, 8}, Rates: []float64{0.5, 2}, MaxInFlight: 64}
	if got, want := c.Loads(), []Load{Conc(1), Conc(8), RateAt(0.5, 64), RateAt(2, 64)}; !slices.Equal(got, want) {
		t.Errorf("loads %v, want %v", got, want)
	}
	old := Cell{Concurrencies: []int{2, 8}, Workload: Workload{RequestRate: 20}}
	if got, want := old.Loads(), []Load{RateAt(20, 2), RateAt(20, 8)}; !slices.Equal(got, want) {
		t.Errorf("older spelling: loads %v, want %v", got, want)
	}
	if got := old.LegacyKey(RateAt(20, 8)); got != "c8" {
		t.Errorf("older spelling: legacy key %q, want c8", got)
	}
	if got := c.LegacyKey(RateAt(2, 64)); got != "" {
		t.Errorf("rates: legacy key %q, want none", got)
	}
	// the two spellings of one point are one measurement: the same cell as a point sees it
	spelled := Cell{Rates: []float64{20}, MaxInFlight: 8}
	a, b := old.PointCell(RateAt(20, 8)), spelled.PointCell(RateAt(20, 8))
	if !reflect.DeepEqual(a.Workload, b.Workload) || len(a.Concurrencies)+len(b.Concurrencies)+len(a.Rates)+len(b.Rates) != 0 || a.MaxInFlight != b.MaxInFlight {
		t.Errorf("point cells differ: %+v vs %+v", a, b)
	}
}

// TestCellLoadProblems names each wrong point list at its key.
func TestCellLoadProblems(t *testing.T) {
	for _, c := range []struct {
		cell Cell
		path string
		want string
	}{
		{Cell{ID: "a", Rates: []float64{1, 2, 1}}, "rates[2]", "rate 1 appears twice"},
		{Cell{ID: "a", Rates: []float64{0.30000000000000004}}, "rates[0]", "significant digits"},
		{Cell{ID: "a", Rates: []float64{-1}}, "rates[0]", "positive"},
		{Cell{ID: "a", Rates: []float64{1}, Workload: Workload{RequestRate: 2}}, "workload.request_rate", "both workload.request_rate"},
		{Cell{ID: "a", Concurrencies: []int{4}, MaxInFlight: 8, Workload: Workload{RequestRate: 2}}, "max_in_flight", "capped by each concurrency"},
		{Cell{ID: "a", Concurrencies: []int{4}, MaxInFlight: 8}, "max_in_flight", "has no rates"},
		{Cell{ID: "a", Rates: []float64{1}, Workload: Workload{Arrival: ArrivalGamma}}, "workload.arrival", "needs its shape"},
		{Cell{ID: "a", Rates: []float64{1}, Workload: Workload{Burstiness: 0.5}}, "workload.burstiness", "the arrival is poisson"},
		{Cell{ID: "a", Concurrencies: []int{4, 4}}, "concurrencies[1]", "appears twice"},
	} {
		p, _ := c.cell.LoadProblems()
		if got := p[c.path]; !strings.Contains(got, c.want) {
			t.Errorf("%+v: %s: %q, want %q (all: %v)", c.cell, c.path, got, c.want, p)
		}
	}
	ok := Cell{ID: "a", Concurrencies: []int{1}, Rates: []float64{0.5, 12.5}, MaxInFlight: 64, Workload: Workload{Arrival: ArrivalGamma, Burstiness: 0.5}}
	if p, _ := ok.LoadProblems(); len(p) > 0 {
		t.Errorf("a valid cell: %v", p)
	}
}

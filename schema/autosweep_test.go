package schema

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// sweep: auto reads as auto or {auto: {rates, throughput_concurrency}}; every other form is
// refused naming the key it is about, and what it reads writes back the same.
func TestRateSweepForms(t *testing.T) {
	for _, tt := range []struct {
		in, want, err string
	}{
		{in: `"auto"`, want: "auto"},
		{in: `{"auto": null}`, want: "auto"},
		{in: `{"auto": {"rates": 4}}`, want: "{auto: {rates: 4}}"},
		{in: `{"auto": {"rates": 10, "throughput_concurrency": 256}}`, want: "{auto: {rates: 10, throughput_concurrency: 256}}"},
		{in: `null`, want: ""},
		{in: `"automatic"`, err: `sweep: "automatic": want auto`},
		{in: `{"auto": {"rates": 0}}`, err: "sweep.auto.rates: 0: want 1 to 100"},
		{in: `{"auto": {"rates": 101}}`, err: "sweep.auto.rates: 101: want 1 to 100"},
		{in: `{"auto": {"rates": 2.5}}`, err: "sweep.auto.rates: want a whole number"},
		{in: `{"auto": {"throughput_concurrency": 1}}`, err: "sweep.auto.throughput_concurrency: 1: want 2 to 100000"},
		{in: `{"auto": {"rate": 4}}`, err: "sweep.auto.rate: unknown key: valid keys are rates, throughput_concurrency"},
		{in: `{"auto": 4}`, err: "sweep.auto: want a mapping"},
		{in: `{"list": {}}`, err: "sweep.list: unknown key"},
		{in: `true`, err: "sweep: want auto"},
	} {
		var s Sweep
		err := json.Unmarshal([]byte(tt.in), &s)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if got := s.String(); got != tt.want {
			t.Errorf("%s reads as %q, want %q", tt.in, got, tt.want)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back Sweep
		if err := json.Unmarshal(b, &back); err != nil || back.String() != tt.want {
			t.Errorf("%s written as %s reads back as %q (%v)", tt.in, b, back.String(), err)
		}
	}
}

// A cell without sweep: writes no sweep key, so the fingerprints of cells written before it stay.
func TestRateSweepOmittedWhenZero(t *testing.T) {
	b, err := json.Marshal(Cell{ID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "sweep") {
		t.Fatalf("a cell without sweep encodes as %s", b)
	}
}

// The rates are evenly spaced from the synchronous throughput to the saturating one (the last
// at it), rounded to three significant digits; repeats are dropped; no rates without two
// positive throughputs.
func TestAutoSweepRatesBetween(t *testing.T) {
	for _, tt := range []struct {
		sync, top float64
		n         int
		want      []float64
	}{
		{2, 10, 4, []float64{4, 6, 8, 10}},
		{12.243185637234888, 65.2784338774148, 3, []float64{29.9, 47.6, 65.3}},
		{0.31, 1.234567, 2, []float64{0.772, 1.23}},
		{1000.4, 3333.3, 1, []float64{3330}},
		{5, 5.001, 3, []float64{5}}, // every rate rounds to 5: one point
		{10, 4, 2, []float64{7, 4}}, // a server slower concurrently than alone: the rates still lie between
		{0, 10, 4, nil},
		{2, 0, 4, nil},
		{2, 10, 0, nil},
		{99000, 400000, 2, nil}, // beyond the largest rate a key holds
	} {
		got := AutoSweepRatesBetween(tt.sync, tt.top, tt.n)
		if !slices.Equal(got, tt.want) {
			t.Errorf("rates between %v and %v (%d): %v, want %v", tt.sync, tt.top, tt.n, got, tt.want)
		}
		for _, r := range got {
			if err := CheckRate(r); err != nil {
				t.Errorf("rate %v: %v", r, err)
			}
		}
	}
}

// The saturating point runs at throughput_concurrency when set, else at max_in_flight, else 128.
func TestThroughputConcurrency(t *testing.T) {
	for _, tt := range []struct {
		cell Cell
		want int
	}{
		{Cell{Sweep: Sweep{Auto: &AutoSweep{}}}, AutoSweepThroughputC},
		{Cell{Sweep: Sweep{Auto: &AutoSweep{}}, MaxInFlight: 32}, 32},
		{Cell{Sweep: Sweep{Auto: &AutoSweep{ThroughputConcurrency: 8}}, MaxInFlight: 32}, 8},
	} {
		if got := tt.cell.ThroughputConcurrency(); got != tt.want {
			t.Errorf("%+v: %d, want %d", tt.cell, got, tt.want)
		}
	}
}

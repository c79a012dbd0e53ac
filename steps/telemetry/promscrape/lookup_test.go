package promscrape

import (
	"testing"
	"time"
)

func mustParse(t *testing.T, text string, at time.Time) *Scrape {
	t.Helper()
	s, err := Parse([]byte(text), at)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	return s
}

func TestDelta(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name          string
		before, after string
		alias         string
		want          float64
		ok            bool
	}{
		{
			name:   "two engines, each diffed",
			before: "c_total{engine=\"0\"} 10\nc_total{engine=\"1\"} 20\n",
			after:  "c_total{engine=\"0\"} 15\nc_total{engine=\"1\"} 27\n",
			alias:  "c", want: 12, ok: true, // (15-10) + (27-20)
		},
		{
			name:   "reset on one engine counts its after value",
			before: "c_total{engine=\"0\"} 10\nc_total{engine=\"1\"} 20\n",
			after:  "c_total{engine=\"0\"} 15\nc_total{engine=\"1\"} 4\n",
			alias:  "c", want: 9, ok: true, // (15-10) + 4
		},
		{
			name:   "label order does not split a series",
			before: "c_total{a=\"1\",b=\"2\"} 1\n",
			after:  "c_total{b=\"2\",a=\"1\"} 3\n",
			alias:  "c_total", want: 2, ok: true,
		},
		{
			name:   "series born in the window starts at zero",
			before: "c_total{reason=\"stop\"} 5\n",
			after:  "c_total{reason=\"stop\"} 6\nc_total{reason=\"length\"} 3\n",
			alias:  "c", want: 4, ok: true, // 1 + 3
		},
		{
			name:   "family absent before the window starts at zero",
			before: "other 1\n",
			after:  "c_total 8\n",
			alias:  "c", want: 8, ok: true,
		},
		{
			name:   "absent after is not zero",
			before: "c_total 8\n",
			after:  "other 1\n",
			alias:  "c", want: 0, ok: false,
		},
		{
			name:   "_created companion is ignored",
			before: "# TYPE c_total counter\nc_total 1\n# TYPE c_created gauge\nc_created 1.7e9\n",
			after:  "# TYPE c_total counter\nc_total 2\n# TYPE c_created gauge\nc_created 1.8e9\n",
			alias:  "c", want: 1, ok: true,
		},
		{
			name:   "counter exposed without _total",
			before: "# TYPE c counter\nc 1\n",
			after:  "# TYPE c counter\nc 4.5\n",
			alias:  "c_total", want: 3.5, ok: true,
		},
		{
			name:   "declared family with no samples is skipped for the next name",
			before: "# TYPE c counter\nc_total 2\n",
			after:  "# TYPE c counter\nc_total 5\n",
			alias:  "c", want: 3, ok: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mustParse(t, tc.before, t0)
			a := mustParse(t, tc.after, t0.Add(time.Minute))
			got, ok := Delta(b, a, tc.alias)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("Delta = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	if _, ok := Delta(nil, mustParse(t, "c 1\n", t0), "c"); ok {
		t.Fatal("a missing before scrape must give no delta")
	}
}

func TestGaugeReductions(t *testing.T) {
	s := mustParse(t, `g{engine="0"} 0.25
g{engine="1"} 0.75
g{engine="2"} NaN
`, time.Unix(0, 0))
	// NaN is not a value: max 0.75, sum 0.25+0.75 = 1, mean 1/2 = 0.5
	if v, ok := s.Max("g"); !ok || v != 0.75 {
		t.Errorf("Max = %v, %v", v, ok)
	}
	if v, ok := s.Sum("g"); !ok || v != 1 {
		t.Errorf("Sum = %v, %v", v, ok)
	}
	if v, ok := s.Mean("g"); !ok || v != 0.5 {
		t.Errorf("Mean = %v, %v", v, ok)
	}
	if _, ok := s.Max("missing"); ok {
		t.Error("Max of an absent family must not be ok")
	}
	var nilScrape *Scrape
	if _, ok := nilScrape.Sum("g"); ok {
		t.Error("a nil scrape exports nothing")
	}
}

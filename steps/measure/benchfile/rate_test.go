package benchfile

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// withLoad rewrites a reference run's request_rate, max_concurrency and burstiness as a file
// of that run would hold them (vLLM's "inf" string or SGLang's bare Infinity are kept when
// rate is "").
func withLoad(t *testing.T, src, rate, conc, burst string) string {
	t.Helper()
	s := read(t, src)
	for _, old := range []string{`"request_rate": "inf"`, `"request_rate": Infinity`} {
		if rate != "" {
			s = strings.Replace(s, old, `"request_rate": `+rate, 1)
		}
	}
	s = strings.Replace(s, `"max_concurrency": 4`, `"max_concurrency": `+conc, 1)
	if burst != "" {
		s = strings.Replace(s, `"burstiness": 1.0`, `"burstiness": `+burst, 1)
	}
	return s
}

// A vLLM or SGLang run with a request rate is a rate point keyed as a measured one is: r<rate>
// capped by its max concurrency (r2.5-cap16), or r<rate> without one; an infinite rate with a
// max concurrency is the closed loop at it (c4); an infinite rate without one is a burst and
// refused, saying so. The point states its rate, cap and arrival process.
func TestRateRuns(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []struct {
		name, src string
		read      func(string, Expect, stats.Options) (*Result, error)
	}{
		{"vllm", "testdata/vllm-result-c4.json", ReadVLLM},
		{"sglang", "testdata/sglang-bench_serving.jsonl", ReadSGLang},
	} {
		for _, tc := range []struct {
			rate, conc, burst string
			want              schema.Load
			arrival           string
		}{
			{"2.5", "16", "", schema.RateAt(2.5, 16), schema.ArrivalPoisson},
			{"2.5", "null", "", schema.RateAt(2.5, 0), schema.ArrivalPoisson},
			{`"inf"`, "4", "", schema.Conc(4), ""},
			{"", "4", "", schema.Conc(4), ""},
			{"12", "8", "0.5", schema.RateAt(12, 8), schema.ArrivalGamma},
		} {
			if f.name == "sglang" && tc.burst != "" {
				continue // SGLang states no burstiness
			}
			name := f.name + " rate " + tc.rate + " cap " + tc.conc
			file := filepath.Join(dir, strings.NewReplacer(" ", "_", `"`, "").Replace(name))
			writeFile(t, file, withLoad(t, f.src, tc.rate, tc.conc, tc.burst))
			r, err := f.read(file, Expect{}, opts)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			p := r.Point
			if r.Load != tc.want || p.PointLoad() != tc.want || p.Load.Key() != tc.want.Key() || p.Concurrency != tc.want.InFlight() || p.RequestRate != tc.want.Rate {
				t.Errorf("%s: load %s, point load %q concurrency %d request_rate %v; want %s", name, r.Load, p.Load.Key(), p.Concurrency, p.RequestRate, tc.want)
			}
			if r.Arrival != tc.arrival || p.Arrival != tc.arrival {
				t.Errorf("%s: arrival %q (point %q), want %q", name, r.Arrival, p.Arrival, tc.arrival)
			}
			if tc.arrival == schema.ArrivalGamma && r.Burstiness != 0.5 {
				t.Errorf("%s: burstiness %v, want 0.5", name, r.Burstiness)
			}
			if p.OpenLoop != nil {
				t.Errorf("%s: an open_loop block %+v: the file records no scheduled sends to compute one from", name, p.OpenLoop)
			}
			e := Expect{Load: tc.want}
			if tc.arrival == schema.ArrivalGamma {
				e.Arrival, e.Burstiness = schema.ArrivalGamma, 0.5
			}
			if _, err := f.read(file, e, opts); err != nil {
				t.Errorf("%s read as %s: %v", name, tc.want, err)
			}
		}

		// The cell naming another point than the run's is refused at the field that differs.
		file := filepath.Join(dir, f.name+"-r2.5-cap16")
		writeFile(t, file, withLoad(t, f.src, "2.5", "16", ""))
		for _, tc := range []struct {
			want  Expect
			field string
			msg   string
		}{
			{Expect{Concurrency: 16}, "request_rate", "file measured request rate 2.5/s capped at 16 in flight (r2.5-cap16), the cell names concurrency 16 (c16)"},
			{Expect{Load: schema.RateAt(5, 16)}, "request_rate", "the cell names request rate 5/s capped at 16 in flight (r5-cap16)"},
			{Expect{Load: schema.RateAt(2.5, 8)}, "max_concurrency", "the cell names request rate 2.5/s capped at 8 in flight (r2.5-cap8)"},
			{Expect{Load: schema.RateAt(2.5, 16), Arrival: schema.ArrivalGamma, Burstiness: 0.5}, "burstiness", "file's arrivals were poisson, the cell's workload names gamma with burstiness 0.5"},
		} {
			_, err := f.read(file, tc.want, opts)
			var be *Error
			if !errors.As(err, &be) || be.Field != tc.field || !strings.Contains(be.Msg, tc.msg) {
				t.Errorf("%s read as %s: %v; want %s: ...%s", f.name, tc.want.Want(), err, tc.field, tc.msg)
			}
		}

		// A burst (infinite rate, no max concurrency) and a rate perfdag cannot key are refused.
		for _, tc := range []struct{ rate, conc, field, msg string }{
			{`"inf"`, "null", "max_concurrency", "a burst with no steady load"},
			{"0", "4", "request_rate", "want a positive number"},
			{"3.3333333", "4", "request_rate", "at most 6 significant digits"},
			{`"fast"`, "4", "request_rate", `holds "fast": want a number of requests per second or inf`},
			{`10, "ramp_up_strategy": "linear", "ramp_up_start_rps": 1, "ramp_up_end_rps": 10`, "4", "ramp_up_strategy", `holds "linear": a ramp-up run's rate moved`},
		} {
			file := filepath.Join(dir, f.name+"-bad")
			writeFile(t, file, withLoad(t, f.src, tc.rate, tc.conc, ""))
			_, err := f.read(file, Expect{}, opts)
			var be *Error
			if !errors.As(err, &be) || be.Field != tc.field || !strings.Contains(be.Msg, tc.msg) {
				t.Errorf("%s request_rate %s max_concurrency %s: %v; want %s: ...%s", f.name, tc.rate, tc.conc, err, tc.field, tc.msg)
			}
		}
	}
}

// A file of several runs (SGLang appends one a line) lists each run's load, and each is read
// by it: the closed loop at 8 and the rates capped at 8 are four points.
func TestRateRunsOfOneFile(t *testing.T) {
	src := "testdata/sglang-bench_serving.jsonl"
	var all string
	for _, l := range []struct{ rate, conc string }{{"", "8"}, {"1", "8"}, {"2", "8"}, {"4", "8"}} {
		all += withLoad(t, src, l.rate, l.conc, "")
	}
	f := filepath.Join(t.TempDir(), "rates.jsonl")
	writeFile(t, f, all)
	runs, err := Runs(SourceSGLang, f)
	want := []schema.Load{schema.Conc(8), schema.RateAt(1, 8), schema.RateAt(2, 8), schema.RateAt(4, 8)}
	if err != nil || len(runs) != len(want) {
		t.Fatalf("Runs = %v, %v; want %v", runs, err, want)
	}
	for i, l := range want {
		if runs[i] != l {
			t.Errorf("run %d: %s, want %s", i, runs[i], l)
		}
		r, err := ReadSGLang(f, Expect{Load: l}, opts)
		if err != nil || r.Load != l {
			t.Errorf("read %s: %v, %v", l, r.Load, err)
		}
	}
}

// An AIPerf run with --request-rate is a rate point, its --concurrency the cap (none without
// one); its request_rate_mode constant is the constant arrival process.
func TestAIPerfRateRun(t *testing.T) {
	for _, tc := range []struct {
		loadgen string
		want    schema.Load
		arrival string
	}{
		{`"concurrency": 4, "request_rate": 10,`, schema.RateAt(10, 4), schema.ArrivalPoisson},
		{`"request_rate": 2.5, "request_rate_mode": "constant",`, schema.RateAt(2.5, 0), schema.ArrivalConstant},
		{`"concurrency": 4,`, schema.Conc(4), ""},
	} {
		dir := t.TempDir()
		for _, f := range []string{AIPerfAggregate, AIPerfRecords} {
			writeFile(t, filepath.Join(dir, f), read(t, filepath.Join("testdata/aiperf", f)))
		}
		agg := filepath.Join(dir, AIPerfAggregate)
		writeFile(t, agg, strings.Replace(read(t, agg), `"concurrency": 4,`, tc.loadgen, 1))
		r, err := ReadAIPerf(dir, Expect{}, opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.loadgen, err)
		}
		if r.Load != tc.want || r.Point.PointLoad() != tc.want || r.Arrival != tc.arrival {
			t.Errorf("%s: load %s (point %s) arrival %q; want %s %q", tc.loadgen, r.Load, r.Point.PointLoad(), r.Arrival, tc.want, tc.arrival)
		}
	}
}

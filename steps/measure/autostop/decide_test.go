package autostop

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/sim"
)

// An SLO is decidable clause by clause: metrics with a per-request interval compared with a
// number, counts below a number; anything else is refused naming the clause.
func TestClauses(t *testing.T) {
	cs, err := Clauses("itl_avg_ms <= 50 && error_count == 0 && 1000 <= output_tok_s", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || cs[0].count || !cs[1].count || cs[2].Name != "output_tok_s" || cs[2].Op != ">=" {
		t.Fatalf("clauses %+v", cs)
	}
	for rule, want := range map[string]string{
		"itl_avg_ms <= 50 || ttft_p50_ms < 9": "is not a comparison of a metric with a number",
		"ttft_p50_ms < itl_avg_ms":            "is not a comparison of a metric with a number",
		"ttft_p99_ms <= 300":                  "ttft_p99_ms has no per-request interval",
		"mean_isl >= 100":                     "mean_isl has no per-request interval",
		"itl_avg_ms == 50":                    "cannot be known to equal a number",
		"error_count > 0":                     "a count is decided only below a number",
		"error_count == 3":                    "a count is decided only below a number",
		"itl_avg_ms <=":                       "parse rule",
	} {
		if _, err := Clauses(rule, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Clauses(%q) = %v, want an error saying %q", rule, err, want)
		}
	}
}

// The looks are fixed before the point starts: whole turns, the first at 4 turns, each later
// one 1.5 × the one before, max last; alpha is spent over them in proportion to their
// requests, half a side, and the shares of one side sum to 2.5 %.
func TestDecideSchedule(t *testing.T) {
	d, err := NewDecider(schema.AutoCount{Decide: "ttft_p50_ms <= 100 && itl_avg_ms <= 20"}, "ttft_p50_ms <= 100 && itl_avg_ms <= 20", 16, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{64, 96, 144, 224, 336, 512, 768, 1152, 1728, 2000}
	if got := d.Looks(); !slices.Equal(got, want) {
		t.Errorf("looks %v, want %v", got, want)
	}
	total := 0.0
	for j := range want {
		pass, fail := d.levels(j)
		total += 1 - pass
		if (1-fail)*2 < (1-pass)*0.999 || (1-fail)*2 > (1-pass)*1.001 {
			t.Errorf("look %d: failing side %v, want half of the passing side's %v (two clauses)", j, 1-fail, 1-pass)
		}
	}
	if total < 0.02499 || total > 0.02501 {
		t.Errorf("passing-side alpha over the looks sums to %v, want 0.025", total)
	}
	if a := d.Adaptive(); a.Ahead != 16 || a.Next(0) != 64 || a.Next(64) != 96 {
		t.Errorf("adaptive: ahead %d, first look %d, second %d", a.Ahead, a.Next(0), a.Next(64))
	}
	withMin, _ := NewDecider(schema.AutoCount{Decide: "x", Min: 100, Max: 300}, "itl_avg_ms <= 20", 16, nil)
	if got := withMin.Looks(); !slices.Equal(got, []int{112, 176, 272, 300}) {
		t.Errorf("min 100 max 300 at c16: looks %v", got)
	}
}

// virtualPoint runs a decide point against the deterministic simulator (every request the
// same: ITL tpot + batch_tpot × (c − 1)) and returns the decision and the requests it sent.
func virtualPoint(t *testing.T, rule string, c int, cfg schema.SimConfig, spec schema.AutoCount) (schema.Decision, int) {
	t.Helper()
	v, err := sim.NewVirtual(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDecider(spec, rule, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := d.Adaptive()
	a.Ahead = -1
	recs, err := loadgen.Run(context.Background(), loadgen.Config{Requests: d.Max, Concurrency: c, Adaptive: a},
		func(_ context.Context, i int) schema.RequestRecord {
			return v.Record("c", phaseProfiling, c, i, 100, 12)
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d.Stop(recs), len(recs)
}

// A server without variance is decided at the first look, 4 turns, on either side of the
// threshold however near, and the decision says so: the bounds are the value itself.
func TestDecideDeterministicAtFirstLook(t *testing.T) {
	cfg := schema.SimConfig{Seed: 3, TTFTMs: 20, TPOTMs: 10, BatchTPOTMs: 1.1}
	for _, c := range []int{1, 7, 37, 64} {
		itl := 10 + 1.1*float64(c-1)
		for _, tc := range []struct {
			limit   float64
			verdict string
		}{{itl + 0.01, schema.VerdictMeets}, {itl - 0.01, schema.VerdictMisses}} {
			rule := "itl_avg_ms <= " + strconv.FormatFloat(tc.limit, 'f', -1, 64) + " && error_count == 0"
			dec, sent := virtualPoint(t, rule, c, cfg, schema.AutoCount{Decide: rule})
			cl := dec.Clauses[0]
			if dec.Verdict != tc.verdict || dec.Looks != 1 || sent != 4*c || dec.Requests != 4*c || cl.Lo == nil || *cl.Lo != *cl.Hi {
				t.Errorf("c%d %s: %+v after %d requests (clause %+v), want %s at the first look (4 turns)", c, rule, dec, sent, cl, tc.verdict)
			}
			if dec.Clauses[1].Verdict != schema.ClauseHolds || dec.Clauses[1].Value != 0 {
				t.Errorf("c%d: error_count clause %+v", c, dec.Clauses[1])
			}
		}
	}
}

// A point measuring a value right at its threshold never decides: it runs to max and says
// undecided, every look made; the same noise far from the threshold decides early.
func TestDecideUndecidedAtMax(t *testing.T) {
	cfg := schema.SimConfig{Seed: 5, TTFTMs: 40, PrefillMsPer1K: 8, TPOTMs: 2, TTFTSigma: 0.5}
	near, sent := virtualPoint(t, "ttft_p50_ms <= 40.8", 4, cfg, schema.AutoCount{Decide: "x", Max: 1200})
	if near.Verdict != schema.VerdictUndecided || sent != 1200 || near.Looks != near.MaxLooks || near.Clauses[0].Verdict != schema.ClauseUnknown {
		t.Errorf("at the threshold: %+v after %d requests, want undecided at max with every look made", near, sent)
	}
	far, sent := virtualPoint(t, "ttft_p50_ms <= 60", 4, cfg, schema.AutoCount{Decide: "x", Max: 1200})
	if far.Verdict != schema.VerdictMeets || sent >= 1200 {
		t.Errorf("50 %% below the threshold: %+v after %d requests, want meets before max", far, sent)
	}
	t.Logf("at the threshold: undecided after %d looks; 50 %% off: %s after %d requests", near.Looks, far.Verdict, far.Requests)
}

// error_count == 0 is decided by the count: an error at a look misses at once; an error among
// the requests still in flight when the point stopped turns its meets into a miss (the count is
// the point's, exactly); a point without any valid request stops at its first look.
func TestDecideCounts(t *testing.T) {
	d, err := NewDecider(schema.AutoCount{Decide: "x"}, "itl_avg_ms <= 50 && error_count == 0", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	ok := func(i int) schema.RequestRecord {
		st := int64(1e12) + int64(i)*1e8
		return schema.RequestRecord{Index: i, Phase: phaseProfiling, StartNs: st, FirstTokenNs: st + 1e7, LastContentNs: st + 1e7 + 11*1e7,
			EndNs: st + 2e8, Status: 200, OutputTokens: 12}
	}
	bad := func(i int) schema.RequestRecord {
		return schema.RequestRecord{Index: i, Phase: phaseProfiling, StartNs: int64(1e12) + int64(i)*1e8, Status: 500, ErrorClass: schema.ErrorHTTP}
	}
	var recs []schema.RequestRecord
	for i := range 10 {
		recs = append(recs, ok(i))
	}
	if !d.Enough(recs[:8]) {
		t.Fatal("8 identical requests (ITL 10 ms) did not decide itl_avg_ms <= 50")
	}
	recs[9] = bad(9) // in flight at the look
	if got := d.Stop(recs); got.Verdict != schema.VerdictMisses || got.Clauses[1].Value != 1 || got.Requests != 10 {
		t.Errorf("an error after the deciding look: %+v, want misses on error_count = 1", got)
	}
	d2, _ := NewDecider(schema.AutoCount{Decide: "x"}, "itl_avg_ms <= 50 && error_count == 0", 2, nil)
	recs[3] = bad(3)
	if !d2.Enough(recs[:8]) || d2.Stop(recs[:8]).Verdict != schema.VerdictMisses {
		t.Error("an error before the look: want misses at the first look")
	}
	d3, _ := NewDecider(schema.AutoCount{Decide: "x"}, "itl_avg_ms <= 50", 2, nil)
	dead := []schema.RequestRecord{bad(0), bad(1), bad(2), bad(3), bad(4), bad(5), bad(6), bad(7)}
	if !d3.Enough(dead) || d3.Stop(dead).Verdict != schema.VerdictUndecided {
		t.Error("no valid request: want the point to stop at its first look, undecided")
	}
}

// Both sides of a two-clause SLO: a miss on one clause decides misses even while the other is
// unknown; meets needs both.
func TestDecideTwoClauses(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	recs := lognormalAR1(0, 4).gen(r, 2000)
	d, _ := NewDecider(schema.AutoCount{Decide: "x"}, "ttft_p50_ms <= 200 && ttft_avg_ms <= 114", 4, nil)
	dec := d.look(recs[:1000], 5)
	if dec.Verdict != schema.VerdictUndecided || dec.Clauses[0].Verdict != schema.ClauseHolds || dec.Clauses[1].Verdict != schema.ClauseUnknown {
		t.Errorf("p50 far below, mean at its limit: %+v, want undecided (holds, unknown)", dec)
	}
	d, _ = NewDecider(schema.AutoCount{Decide: "x"}, "ttft_p50_ms <= 50 && ttft_avg_ms <= 114", 4, nil)
	if dec := d.look(recs[:1000], 5); dec.Verdict != schema.VerdictMisses || dec.Clauses[0].Verdict != schema.ClauseFails {
		t.Errorf("p50 far above its limit: %+v, want misses", dec)
	}
}

// slo_attainment and goodput_req_s are decided against the cell's per-request slo: with one
// they are clauses like any metric's, without one the clause is refused, saying why.
func TestClausesOnSLO(t *testing.T) {
	ttft := 200.0
	slo := &schema.SLO{TTFTMs: &ttft}
	cs, err := Clauses("slo_attainment >= 0.99 && goodput_req_s > 5 && error_count == 0", slo)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || cs[0].s == nil || cs[0].s.key != "slo_attainment" || cs[1].s == nil || cs[1].s.key != "goodput_req_s" || !cs[2].count {
		t.Fatalf("clauses %+v", cs)
	}
	if _, err := Clauses("slo_attainment >= 0.99", nil); err == nil || !strings.Contains(err.Error(), "the cell declares none") {
		t.Errorf("slo_attainment without slo: %v, want it refused", err)
	}
	if _, err := Clauses("slo_attainment == 1", slo); err == nil || !strings.Contains(err.Error(), "cannot be known to equal") {
		t.Errorf("slo_attainment == 1: %v, want it refused", err)
	}
}

// An attainment is exact only on a server without variance (every request judged on the same
// values): all good on a noisy server is a sample, and bounds it by the Wilson bound — at 4
// turns of 4 slots nothing above 0.99 is known; the same requests all identical are.
func TestDecideAttainmentExactOnlyWithoutVariance(t *testing.T) {
	target := 1000.0
	slo := &schema.SLO{TTFTMs: &target}
	noisy := lognormalAR1(0, 4).gen(rand.New(rand.NewPCG(7, 7)), 16) // TTFTs around 100 ms, all far below 1000
	same := slices.Clone(noisy)
	for i := range same {
		d := same[i].StartNs - same[0].StartNs
		same[i].FirstTokenNs, same[i].FirstOutputNs = noisy[0].FirstTokenNs+d, noisy[0].FirstOutputNs+d
		same[i].LastContentNs, same[i].EndNs = noisy[0].LastContentNs+d, noisy[0].EndNs+d
	}
	for _, tc := range []struct {
		name string
		recs []schema.RequestRecord
		want string
	}{{"noisy", noisy, schema.VerdictUndecided}, {"without variance", same, schema.VerdictMeets}} {
		d, err := NewDecider(schema.AutoCount{Decide: "x"}, "slo_attainment >= 0.99", 4, slo)
		if err != nil {
			t.Fatal(err)
		}
		if dec := d.look(tc.recs, 0); dec.Verdict != tc.want || dec.Clauses[0].Value != 1 {
			t.Errorf("%s, all 16 good: %+v, want %s", tc.name, dec, tc.want)
		}
	}
}

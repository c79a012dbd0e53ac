package champion

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
)

// Result ranks the arms seen so far and writes the recommendation. No arm at all, or more than
// one arm marked baseline, is an error.
func (s *Selector) Result() (schema.Champion, error) {
	if len(s.arms) == 0 {
		return schema.Champion{}, fmt.Errorf("champion: no plot-ready atlas row carries an arm: tag cells with arm: (and engine:, and baseline: true on one arm)")
	}
	out := schema.Champion{Schema: schema.SchemaChampion, Campaign: s.campaign, FocusMetric: s.opt.FocusMetric,
		TPOTSLOMs: s.opt.TPOTSLOMs, TopX: s.opt.TopX, ArmsConsidered: len(s.arms)}
	if Goodput(s.opt.FocusMetric) {
		out.SLO = s.opt.SLO
	}
	names := slices.Sorted(maps.Keys(s.arms))
	var baselines []string
	for _, n := range names {
		if s.arms[n].baseline {
			baselines = append(baselines, n)
		}
	}
	if len(baselines) > 1 {
		return schema.Champion{}, fmt.Errorf("champion: arms %s are all marked baseline: true; mark exactly one", strings.Join(baselines, ", "))
	}
	if len(baselines) == 0 {
		out.Warnings = append(out.Warnings, "no arm is marked baseline: true: deltas vs baseline are not computed")
	} else {
		out.Baseline = baselines[0]
	}

	arms := make([]schema.ChampionArm, 0, len(names))
	for _, n := range names {
		arm, warn := summarize(s.arms[n], Goodput(s.opt.FocusMetric))
		arms = append(arms, arm)
		out.Warnings = append(out.Warnings, warn...)
	}
	slices.SortStableFunc(arms, func(a, b schema.ChampionArm) int {
		switch {
		case a.FocusValue != nil && b.FocusValue != nil:
			return cmp.Or(cmp.Compare(*b.FocusValue, *a.FocusValue), cmp.Compare(a.Arm, b.Arm))
		case a.FocusValue != nil:
			return -1
		case b.FocusValue != nil:
			return 1
		}
		return cmp.Compare(a.Arm, b.Arm)
	})
	var base *schema.ChampionArm
	for i := range arms {
		if arms[i].FocusValue != nil {
			arms[i].Rank = i + 1
		}
		if arms[i].Arm == out.Baseline {
			base = &arms[i]
		}
	}
	if base != nil && base.FocusValue != nil && *base.FocusValue > 0 {
		for i := range arms {
			if arms[i].FocusValue != nil {
				d := (*arms[i].FocusValue - *base.FocusValue) / *base.FocusValue * 100
				arms[i].DeltaVsBaseline = &d
			}
		}
	}
	if base != nil {
		out.Arms = append(out.Arms, *base)
	}
	for _, a := range arms {
		if !a.Baseline && len(out.Arms) < s.opt.TopX+btoi(base != nil) {
			out.Arms = append(out.Arms, a)
		}
	}
	if arms[0].FocusValue != nil {
		out.Champion, out.Delivery = arms[0].Arm, arms[0].Delivery
	}
	out.Recommendation = recommend(out, arms, base)
	var second *schema.ChampionArm
	if len(arms) > 1 {
		second = &arms[1]
	}
	out.Separated, out.SeparationNote = separation(out.FocusMetric, &arms[0], second)
	switch {
	case out.Separated != nil && !*out.Separated:
		out.Recommendation += " Caution: " + out.SeparationNote + "."
		out.Warnings = append(out.Warnings, out.SeparationNote)
	case out.Separated == nil && second != nil && second.FocusValue != nil:
		out.Warnings = append(out.Warnings, out.SeparationNote) // two ranked arms, no interval to test them
	}
	if base != nil && out.Champion != "" && out.Champion != base.Arm && base.Delivery != out.Delivery {
		out.Warnings = append(out.Warnings, fmt.Sprintf("baseline %s was measured on another delivery (%s): the comparison crosses deliveries", base.Arm, orUnrecorded(base.Delivery)))
	}
	return out, nil
}

// summarize turns an arm's running state into its champion_v1 entry; goodput says the arms
// were ranked by goodput (a point meets the SLO when some request did).
func summarize(a *armAcc, goodput bool) (schema.ChampionArm, []string) {
	arm := schema.ChampionArm{
		Arm: a.name, Baseline: a.baseline, Cells: slices.Sorted(maps.Keys(a.cells)),
		Engine: joinKeys(a.engines), EngineVersion: joinKeys(a.versions), Delivery: joinKeys(a.deliveries),
		Points: a.points, PointsMeetSLO: a.meet, SolRigor: schema.RigorL1,
	}
	var warnings []string
	if len(a.engines) > 1 {
		warnings = append(warnings, fmt.Sprintf("arm %s spans engines %s", a.name, arm.Engine))
	}
	if len(a.deliveries) > 1 {
		warnings = append(warnings, fmt.Sprintf("arm %s spans deliveries %s: its numbers are cited for its best point's delivery only", a.name, arm.Delivery))
	}
	b := a.best
	if b == nil && goodput {
		arm.RigorNote = fmt.Sprintf("no point has a request meeting the per-request SLO (%s)", plural.N(a.points, "plot-ready point"))
		return arm, warnings
	}
	if b == nil {
		arm.RigorNote = fmt.Sprintf("no point meets the TPOT SLO (%s, %d with TPOT measured at or under it)", plural.N(a.points, "plot-ready point"), a.meet)
		return arm, warnings
	}
	arm.FocusValue, arm.CellID, arm.Concurrency = &b.value, b.cell, b.conc
	arm.GoodputReqS, arm.SLOAttainment = b.goodput, b.attainment
	arm.TPOTMs, arm.TTFTAvgMs, arm.OutputTokPerGPU = b.tpot, b.ttft, b.outPerGPU
	arm.FocusInterval = b.focusIv
	arm.Delivery, arm.Engine, arm.EngineVersion = b.delivery, b.engine, b.version
	arm.SolRigor = cmp.Or(b.rigor, schema.RigorL1)
	if b.grounded && b.kernelProfile {
		arm.SolRigor = schema.RigorL4
	}
	arm.RigorNote = fmt.Sprintf("%s (%s) at the best point; %d of %s DCGM-grounded",
		arm.SolRigor, RigorMeaning(arm.SolRigor), a.grounded, plural.N(a.points, "plot-ready point"))
	if arm.SolRigor == schema.RigorL1 {
		warnings = append(warnings, fmt.Sprintf("arm %s's best point rests on throughput only (L1): capture DCGM with the bench window to ground it", a.name))
	}
	return arm, warnings
}

// RigorMeaning says in words what a sol_rigor level stands on.
func RigorMeaning(level string) string {
	switch level {
	case schema.RigorL2:
		return "DCGM duty-cycle proxy"
	case schema.RigorL3:
		return "byte-grounded DCGM"
	case schema.RigorL4:
		return "kernel-level profile"
	}
	return "throughput only"
}

// recommend writes the plain-words pick; it names the champion's delivery and no other.
func recommend(c schema.Champion, ranked []schema.ChampionArm, base *schema.ChampionArm) string {
	slo := "TPOT <= " + strconv.FormatFloat(c.TPOTSLOMs, 'g', -1, 64) + " ms"
	goodput := Goodput(c.FocusMetric)
	if goodput {
		slo = "the per-request SLO"
		if c.SLO != nil {
			slo += " (" + c.SLO.String() + ")"
		}
	}
	if c.Champion == "" && goodput {
		return fmt.Sprintf("No production pick: no arm has a point with a request meeting %s.", slo)
	}
	if c.Champion == "" {
		return fmt.Sprintf("No production pick: no arm has a point meeting %s.", slo)
	}
	w := ranked[0]
	point := fmt.Sprintf("%s %s at c%d (cell %s, TPOT %s ms)", num(*w.FocusValue), c.FocusMetric, w.Concurrency, w.CellID, num(deref(w.TPOTMs)))
	if goodput {
		point = fmt.Sprintf("%s %s at c%d (cell %s, SLO attainment %s %%)", strconv.FormatFloat(*w.FocusValue, 'g', 4, 64), c.FocusMetric,
			w.Concurrency, w.CellID, strconv.FormatFloat(100*deref(w.SLOAttainment), 'f', 1, 64))
	}
	var b strings.Builder
	switch {
	case base != nil && w.Arm == base.Arm:
		fmt.Fprintf(&b, "Keep the baseline arm %s (%s): %s is the best point meeting %s", w.Arm, engine(w), point, slo)
		if len(ranked) > 1 && ranked[1].FocusValue != nil && ranked[1].DeltaVsBaseline != nil {
			fmt.Fprintf(&b, "; the best variant, %s, is %s%% against it", ranked[1].Arm, signed(*ranked[1].DeltaVsBaseline))
		}
		b.WriteString(".")
	case base != nil && base.FocusValue != nil:
		fmt.Fprintf(&b, "Ship arm %s (%s): %s meets %s and is %s%% against the baseline arm %s (%s).",
			w.Arm, engine(w), point, slo, signed(*w.DeltaVsBaseline), base.Arm, num(*base.FocusValue))
	case base != nil:
		fmt.Fprintf(&b, "Ship arm %s (%s): %s meets %s; the baseline arm %s has no point meeting it.", w.Arm, engine(w), point, slo, base.Arm)
	default:
		fmt.Fprintf(&b, "Best arm %s (%s): %s meets %s; no baseline was marked to compare against.", w.Arm, engine(w), point, slo)
	}
	fmt.Fprintf(&b, " Rigor %s (%s).", w.SolRigor, RigorMeaning(w.SolRigor))
	if c.Delivery == "" {
		b.WriteString(" The delivery was not recorded: this is evidence for no named delivery until delivery: is set on the cells.")
	} else {
		fmt.Fprintf(&b, " Evidence for delivery %s only.", c.Delivery)
	}
	return b.String()
}

// SelectAtlas streams a recorded atlas through a selector.
func SelectAtlas(ctx context.Context, r campaigndir.Reader, rel, campaign string, opt Options) (schema.Champion, error) {
	s, err := NewSelector(campaign, opt)
	if err != nil {
		return schema.Champion{}, err
	}
	if err := atlas.Scan(ctx, r, rel, s.Add); err != nil {
		return schema.Champion{}, fmt.Errorf("champion: %w", err)
	}
	return s.Result()
}

// Write writes the decision into the campaign directory atomically and returns its path.
func Write(dir string, c schema.Champion) (string, error) {
	return campaigndir.WriteJSON(dir, campaigndir.Champion(), c)
}

func engine(a schema.ChampionArm) string {
	return strings.TrimSpace(cmp.Or(a.Engine, "engine not recorded") + " " + a.EngineVersion)
}

func joinKeys(m map[string]bool) string {
	var ks []string
	for k := range m {
		if k != "" {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return strings.Join(ks, ",")
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func signed(v float64) string {
	if v >= 0 {
		return "+" + num(v)
	}
	return num(v)
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func orUnrecorded(s string) string { return cmp.Or(s, "not recorded") }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

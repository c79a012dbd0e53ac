package report

import (
	"context"
	"slices"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
)

// Read loads what a campaign's evidence names — the atlas, TPM summary, champion, DCGM
// correlations, spec windows and roofline sweeps — through r, which checks every file against
// the digest its step recorded. Nothing is found by listing the directory: a page whose file no
// result names says it has no data. A file that is named but malformed is an error naming it.
func Read(ctx context.Context, r campaigndir.Reader, ev campaigndir.Evidence) (Input, error) {
	in := Input{Dir: r.Dir}
	if ev.Atlas != "" {
		rows, err := atlas.ReadAll(ctx, r, ev.Atlas)
		if err != nil {
			return in, err
		}
		in.Atlas = rows
	}
	if ev.TPM != "" {
		in.TPM = new(schema.TPMSummary)
		if err := r.JSON(ev.TPM, in.TPM); err != nil {
			return in, err
		}
	}
	if ev.Champion != "" {
		in.Champion = new(schema.Champion)
		if err := r.JSON(ev.Champion, in.Champion); err != nil {
			return in, err
		}
	}
	dcgm := slices.Clone(ev.DCGM)
	slices.SortFunc(dcgm, func(a, b campaigndir.DCGMFiles) int { return compare(a.Correlation, b.Correlation) })
	for _, f := range dcgm {
		var d schema.DCGMCorrelation
		if err := r.JSON(f.Correlation, &d); err != nil {
			return in, err
		}
		in.DCGM = append(in.DCGM, d)
	}
	spec := slices.Clone(ev.Spec)
	slices.SortFunc(spec, func(a, b campaigndir.SpecFiles) int { return compare(a.Window, b.Window) })
	for _, f := range spec {
		var w schema.SpecWindow
		if err := r.JSON(f.Window, &w); err != nil {
			return in, err
		}
		in.Spec = append(in.Spec, w)
	}
	for _, c := range ev.Cells {
		if c.Sweep == "" {
			continue
		}
		var s schema.RooflineSweep
		if err := r.JSON(c.Sweep, &s); err != nil {
			return in, err
		}
		in.Roofline = append(in.Roofline, s)
	}
	sweeps := slices.Clone(ev.Sweeps)
	slices.Sort(sweeps)
	for _, rel := range sweeps {
		var s schema.SweepResult
		if err := r.JSON(rel, &s); err != nil {
			return in, err
		}
		in.Sweeps = append(in.Sweeps, s)
	}
	return in, nil
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"

	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/schema"
)

// costPart is the cover's "What it cost": the campaign's requests and GPU-hours (the sum over
// its measured points, as aggregate recorded it in tpm_summary.json), and per search what a
// fixed sweep of its range would have cost, so a reader sees what the search saved. Nothing
// when the campaign recorded no cost (an imported atlas, or one measured before cost was).
func costPart(d sink, v *view) {
	lines := costLines(v.in)
	if len(lines) == 0 {
		return
	}
	d.heading("What it cost")
	for _, l := range lines {
		d.para("- "+l, bodySize, fontstyle.Normal, nil)
	}
	d.space(2)
}

// costLines words the campaign's measurement cost and each search's saving.
func costLines(in Input) []string {
	if in.TPM == nil || in.TPM.MeasurementCost == nil {
		return nil
	}
	mc := in.TPM.MeasurementCost
	t := mc.Total
	line := fmt.Sprintf("Measuring took %s (%s valid) over %s and %s of endpoint time",
		count(t.RequestsSent, "request"), group(strconv.Itoa(t.RequestsValid)), plural.N(t.Points, "point"), duration(t.EndpointS))
	switch h := t.GPUHours(); {
	case h != nil:
		line += ": " + hoursText(h) + "."
	case t.Unrecorded > 0:
		line += fmt.Sprintf("; GPU-hours unknown: %s recorded before cost accounting.", plural.Of(t.Unrecorded, "point was", "points were"))
	default:
		line += "; GPU-hours unknown: the campaign declares no GPU count (gpus or tensor_parallel) for " + plural.N(t.GPUsUnknown, "point") +
			", and endpoint seconds are not multiplied by an assumed 1."
		var known []string
		for _, c := range mc.Cells {
			if h := c.GPUHours(); h != nil {
				known = append(known, c.Cell+" "+hoursText(h))
			}
		}
		if len(known) > 0 {
			line += " Cells that declare theirs: " + strings.Join(known, ", ") + "."
		}
	}
	out := []string{line + " Prewarm and burn-in requests are not counted, nor work lost to an interruption; a reused point counts what it cost when it was measured."}
	for _, s := range in.Sweeps {
		if l := searchSaving(s); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// searchSaving compares one search's cost with what a fixed sweep of its range would have
// cost (an estimate: the assumption is stated), "" when the search recorded neither.
func searchSaving(s schema.SweepResult) string {
	c, f := s.MeasurementCost, s.FixedSweep
	if s.Mode != schema.SweepSearch || c == nil || f == nil || c.Points == 0 {
		return ""
	}
	spent, fixed := count(c.RequestsSent, "request"), "about "+count(f.Requests, "request")
	if h := c.GPUHours(); h != nil && f.GPUSeconds != nil {
		spent += " and " + hoursText(h)
		fixed += " and " + hoursText(hours(f.GPUSeconds))
	}
	what := "concurrencies"
	if f.ToRate > 0 {
		what = "rates"
	}
	line := fmt.Sprintf("%s: the search measured %s of the %d %s a fixed sweep would, with %s; the fixed sweep would have taken %s",
		s.Cell, plural.N(c.Points, "probe"), f.Points, what, spent, fixed)
	if f.Requests > 0 {
		line += fmt.Sprintf(": the search sent %s of its requests", pct(ratio(c.RequestsSent, f.Requests)))
	}
	return line + ". Estimate: " + f.Basis + "."
}

// count writes n things with thousands separators: "3,528 requests", "1 request".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return group(strconv.Itoa(n)) + " " + thing + "s"
}

func ratio(a, b int) *float64 {
	r := float64(a) / float64(b)
	return &r
}

func hours(secs *float64) *float64 {
	if secs == nil {
		return nil
	}
	h := *secs / 3600
	return &h
}

// hoursText words GPU-hours to three significant digits ("0.0244 GPU-hours").
func hoursText(h *float64) string {
	return strconv.FormatFloat(*h, 'g', 3, 64) + " GPU-hours"
}

// duration words seconds as "3.0 s", "12 min", "2.5 h".
func duration(s float64) string {
	switch {
	case s >= 3600:
		return strconv.FormatFloat(s/3600, 'f', 1, 64) + " h"
	case s >= 120:
		return strconv.FormatFloat(s/60, 'f', 0, 64) + " min"
	}
	return strconv.FormatFloat(s, 'f', 1, 64) + " s"
}

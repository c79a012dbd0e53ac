package webui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// searchRow is one searched cell on the campaign page: its knee with its band, its probes, and
// what it cost beside what a fixed sweep of its range would have.
type searchRow struct {
	S      schema.SweepResult
	Knee   string // "c9 (c8–c10 at 95 %)"
	Probes string // "c1+ c16- c8+ c10~"
	Cost   string // "414 requests, 0.00120 GPU-h"
	Fixed  string // "≈ 1,584 requests, ≈ 0.00500 GPU-h (c1..c32)"
	Basis  string // the fixed sweep's assumption (its tooltip)
}

// recorded reads one recorded output of the campaign into v, checked against its digest.
func (v *view) recorded(rel string, into any) error {
	d, ok := v.Files.Digest(rel)
	if !ok {
		return fmt.Errorf("read %s: %w", rel, campaigndir.ErrNotRecorded)
	}
	b, err := readServed(v.Dir, rel, d)
	if err != nil {
		return err
	}
	return campaigndir.DecodeStrict(rel, b, into)
}

// searches are the campaign's searched cells as their sweep nodes recorded them, in node
// order, and the campaign's measurement cost as aggregate recorded it (nil when none is).
func (v *view) searches() ([]searchRow, *schema.CampaignCost, error) {
	var rows []searchRow
	var cost *schema.CampaignCost
	for _, n := range v.Nodes {
		res, err := v.Inspection.State.Result(n.Node)
		if err != nil || res == nil {
			continue
		}
		if so, ok := res.(campaigndir.SweepOutput); ok && so.SweepFile() != "" {
			var s schema.SweepResult
			if err := v.recorded(so.SweepFile(), &s); err != nil {
				return nil, nil, err
			}
			if s.Mode == schema.SweepSearch {
				rows = append(rows, searchRowOf(s))
			}
		}
		if eo, ok := res.(campaigndir.EvidenceOutput); ok && eo.Evidence().TPM != "" && cost == nil {
			var tpm schema.TPMSummary
			if err := v.recorded(eo.Evidence().TPM, &tpm); err != nil {
				return nil, nil, err
			}
			cost = tpm.MeasurementCost
		}
	}
	return rows, cost, nil
}

func searchRowOf(s schema.SweepResult) searchRow {
	r := searchRow{S: s, Knee: s.BandText()}
	var probes []string
	for _, p := range s.Probes {
		mark := "-"
		switch {
		case p.NoEvidence:
			mark = "?"
		case p.Verdict == schema.VerdictUndecided:
			mark = "~"
		case p.Met:
			mark = "+"
		}
		probes = append(probes, p.PointLoad().Key()+mark)
	}
	r.Probes = strings.Join(probes, " ")
	if c := s.MeasurementCost; c != nil {
		r.Cost = spent(c.RequestsSent, c.GPUHours())
	}
	if f := s.FixedSweep; f != nil {
		var h *float64
		if f.GPUSeconds != nil {
			x := *f.GPUSeconds / 3600
			h = &x
		}
		r.Fixed = fmt.Sprintf("≈ %s (%s)", spent(f.Requests, h), f.Range())
		r.Basis = f.Basis
	}
	return r
}

// spent words requests and GPU-hours: "1,584 requests, 0.005 GPU-h" ("GPU-h unknown" without a
// declared GPU count).
func spent(requests int, gpuHours *float64) string {
	s := thousands(requests) + " requests"
	if requests == 1 {
		s = "1 request"
	}
	if gpuHours == nil {
		return s + ", GPU-h unknown"
	}
	return s + ", " + strconv.FormatFloat(*gpuHours, 'g', 3, 64) + " GPU-h"
}

// costLine is the campaign page's one line on what measuring took.
func costLine(c *schema.CampaignCost) string {
	if c == nil {
		return ""
	}
	t := c.Total
	s := fmt.Sprintf("measuring took %s over %s (%s valid)", spent(t.RequestsSent, t.GPUHours()), plural.N(t.Points, "point"), thousands(t.RequestsValid))
	if t.GPUsUnknown > 0 {
		s += ": no GPU count declared for " + plural.N(t.GPUsUnknown, "point")
	}
	return s
}

// thousands writes n with thousands separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

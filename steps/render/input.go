package render

import (
	"context"
	"fmt"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/report"
)

// Input assembles what the report shows of a campaign: the files its evidence names (read
// through r, checked against their recorded digests), the campaign with its defaults merged,
// the run's record and the gate verdicts. The step and `perfdag report DIR` both build the PDF
// from it, so the two never disagree.
func Input(ctx context.Context, r campaigndir.Reader, ev campaigndir.Evidence, c *schema.Campaign, verdicts []schema.GateVerdict) (report.Input, error) {
	in, err := report.Read(ctx, r, ev)
	if err != nil {
		return in, err
	}
	in.Campaign, in.Gates = c, verdicts
	if info, err := campaigndir.ReadInfo(r.Dir); err == nil {
		in.Run = &info
	}
	if c != nil {
		in.Calibration, in.CalibrationErr = readCalibration(r.Dir, c.Campaign)
	}
	return in, nil
}

// readCalibration reads the client's calibration as it is (perfdag calibrate wrote it, no
// step: there is no digest to check). A file that cannot be used is a note on the cover, never
// a failed report.
func readCalibration(dir, slug string) (*schema.Calibration, string) {
	var c schema.Calibration
	found, err := campaigndir.ReadJSON(dir, campaigndir.Calibration(), &c)
	switch {
	case err != nil:
		return nil, err.Error()
	case !found:
		return nil, ""
	case c.Schema != schema.SchemaCalibration:
		return nil, fmt.Sprintf("%s: schema %q, want %s", campaigndir.Calibration(), c.Schema, schema.SchemaCalibration)
	case c.Campaign != slug:
		return nil, fmt.Sprintf("%s calibrates campaign %s, not %s (other prompts and concurrencies): run perfdag calibrate on this campaign's file", campaigndir.Calibration(), c.Campaign, slug)
	}
	return &c, ""
}

package report_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report"
)

// The cover says what measuring took — requests, endpoint time, GPU-hours — and, per search,
// what a fixed sweep of its range would have taken, with the estimate's assumption.
func TestCoverCost(t *testing.T) {
	in := bandedInput()
	gs := func(x float64) *float64 { return &x }
	in.TPM = &schema.TPMSummary{Schema: schema.SchemaTPMSummary, Campaign: "aa-partial", Groups: []schema.TPMGroup{},
		MeasurementCost: &schema.CampaignCost{
			Total: schema.CostTotal{Points: 7, RequestsSent: 1234, RequestsValid: 1230, EndpointS: 5400, GPUSeconds: gs(8 * 5400)},
			Cells: []schema.CellCost{{Cell: "chat", CostTotal: schema.CostTotal{Points: 7, RequestsSent: 1234, RequestsValid: 1230, EndpointS: 5400, GPUSeconds: gs(8 * 5400)}}}}}
	s := &in.Sweeps[0]
	s.MeasurementCost = &in.TPM.MeasurementCost.Cells[0].CostTotal
	s.FixedSweep = &schema.FixedSweepCost{From: 1, To: 16, Step: 1, Points: 16, Requests: 4321, EndpointS: 19000, GPUSeconds: gs(8 * 19000),
		Basis: "every concurrency c1..c16 (16 points) at 3 × C requests each"}
	out := filepath.Join(t.TempDir(), "r.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	mustContain(t, pdfText(t, out), "What it cost",
		"Measuring took 1,234 requests (1,230 valid) over 7 points and 1.5 h of endpoint time: 12 GPU-hours.",
		"chat: the search measured 7 probes of the 16 concurrencies a fixed sweep would, with 1,234 requests and 12 GPU-hours; "+
			"the fixed sweep would have taken about 4,321 requests and 42.2 GPU-hours: the search sent 28.6 % of its requests. "+
			"Estimate: every concurrency c1..c16 (16 points) at 3 × C requests each.")
}

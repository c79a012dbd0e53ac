package strictpublish

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
)

// Facts is the flat campaign environment the strict gates are expr rules over (besides the
// campaign context: campaign, kind, cells, ...). Every list is non-nil, so rules like
// `"steady_window_undercount" in acknowledged` compile and run on any campaign.
type Facts struct {
	AtlasRows          int      `json:"atlas_rows"`           // rows of atlas.jsonl
	AtlasCells         int      `json:"atlas_cells"`          // distinct atlas cells (incl. roofline-import cells)
	FullCells          int      `json:"full_cells"`           // cells with status full
	PartialCells       int      `json:"partial_cells"`        // cells with status partial
	FailedCells        int      `json:"failed_cells"`         // cells with status failed
	MissingCells       int      `json:"missing_cells"`        // cells of the campaign file with no atlas row at all
	PlotReadyPoints    int      `json:"plot_ready_points"`    // rows with plot_ready
	DCGMGroundedPoints int      `json:"dcgm_grounded_points"` // plot-ready rows that are DCGM byte-grounded
	DCGMGrounded       bool     `json:"dcgm_grounded"`        // some plot-ready points, every one byte-grounded
	SolRigor           string   `json:"sol_rigor"`            // L1..L4: the weakest plot-ready point (L1 when none)
	RooflinePresent    bool     `json:"roofline_present"`     // a roofline sweep with rows was imported (report page 7)
	RooflineRows       int      `json:"roofline_rows"`        // roofline_v1 rows
	UndercountCells    int      `json:"steady_window_undercount_cells"`
	Flags              []string `json:"flags"`        // distinct atlas row flags present, sorted
	Acknowledged       []string `json:"acknowledged"` // publish.acknowledge
	TPMRows            int      `json:"tpm_rows"`
	CostRows           int      `json:"cost_rows"`
	ChampionPresent    bool     `json:"champion_present"` // champion-select decided
	Champion           string   `json:"champion"`         // the champion arm, "" when none
	GateFailures       int      `json:"gate_failures"`    // fail verdicts standing on the campaign's steps
	GateWarnings       int      `json:"gate_warnings"`    // warn verdicts standing on the campaign's steps
}

// Evidence is what Collect read besides the facts: the rows to publish (the atlas streams
// from its file) and the details gate messages name.
type Evidence struct {
	Facts
	Files        campaigndir.Reader
	AtlasPath    string
	TPM          []schema.TPMRow
	Cost         []schema.CostRow
	Roofline     []schema.RooflineRow
	FlaggedCells map[string][]string // flag → cells carrying it, sorted
	MissingIDs   []string            // campaign cells without atlas rows
	Engines      []string            // distinct (engine, version, delivery) of the atlas
	Versions     []string
	Deliveries   []string
	Failing      []schema.GateVerdict // fail verdicts standing, for the gate's message
	kind         string               // the campaign's kind, for messages
}

// rigorRank orders the sol_rigor ladder; anything unknown ranks as L1.
func rigorRank(level string) int {
	switch level {
	case schema.RigorL4:
		return 4
	case schema.RigorL3:
		return 3
	case schema.RigorL2:
		return 2
	}
	return 1
}

// Collect reads a finished campaign's evidence through r: the atlas (streamed, required),
// the TPM summary, the roofline sweeps and the champion its steps name, and the gate verdicts
// standing on its steps.
func Collect(ctx context.Context, r campaigndir.Reader, files campaigndir.Evidence, c *schema.Campaign, verdicts []schema.GateVerdict) (*Evidence, error) {
	ev := &Evidence{Files: r, AtlasPath: files.Atlas, FlaggedCells: map[string][]string{}, kind: kindOf(c)}
	ev.Flags, ev.Acknowledged = []string{}, []string{}
	if c.Publish != nil {
		ev.Acknowledged = append(ev.Acknowledged, c.Publish.Acknowledge...)
	}
	if files.Atlas == "" {
		return nil, fmt.Errorf("strict publish needs the campaign's atlas, and no step it reads names one (needs: [aggregate] or a step that needs it)")
	}
	for _, v := range verdicts {
		switch {
		case v.Failing():
			ev.GateFailures++
			ev.Failing = append(ev.Failing, v)
		case !v.Passed:
			ev.GateWarnings++
		}
	}
	seen := map[string]bool{}
	flagged := map[string]map[string]bool{}
	engines, versions, deliveries := map[string]bool{}, map[string]bool{}, map[string]bool{}
	weakest, last := 5, ""
	err := atlas.Scan(ctx, r, files.Atlas, func(r *schema.AtlasRow) error {
		ev.AtlasRows++
		if r.CellID != last {
			if seen[r.CellID] {
				return fmt.Errorf("cell %s: rows are not grouped by cell (atlas.jsonl is out of order)", r.CellID)
			}
			seen[r.CellID], last = true, r.CellID
			ev.AtlasCells++
			switch r.CellStatus {
			case schema.CellFull:
				ev.FullCells++
			case schema.CellPartial:
				ev.PartialCells++
			case schema.CellFailed:
				ev.FailedCells++
			}
		}
		if r.PlotReady {
			ev.PlotReadyPoints++
			if r.DCGMGrounded {
				ev.DCGMGroundedPoints++
			}
			weakest = min(weakest, rigorRank(r.SolRigor))
		}
		for _, f := range r.Flags {
			if flagged[f] == nil {
				flagged[f] = map[string]bool{}
			}
			flagged[f][r.CellID] = true
		}
		engines[r.Engine], versions[r.EngineVersion], deliveries[r.Delivery] = true, true, true
		return nil
	})
	if err != nil {
		return nil, err
	}
	ev.SolRigor = schema.RigorL1
	if weakest <= 4 {
		ev.SolRigor = fmt.Sprintf("L%d", weakest)
	}
	ev.DCGMGrounded = ev.PlotReadyPoints > 0 && ev.DCGMGroundedPoints == ev.PlotReadyPoints
	for f, cells := range flagged {
		ev.Flags = append(ev.Flags, f)
		ev.FlaggedCells[f] = sortedKeys(cells)
	}
	sort.Strings(ev.Flags)
	ev.UndercountCells = len(ev.FlaggedCells[schema.FlagSteadyWindowUndercount])
	for _, cell := range c.Cells {
		if !seen[cell.ID] {
			ev.MissingIDs = append(ev.MissingIDs, cell.ID)
		}
	}
	ev.MissingCells = len(ev.MissingIDs)
	ev.Engines, ev.Versions, ev.Deliveries = sortedKeys(engines), sortedKeys(versions), sortedKeys(deliveries)

	if files.TPM != "" {
		var sum schema.TPMSummary
		if err := r.JSON(files.TPM, &sum); err != nil {
			return nil, err
		}
		ev.TPM, ev.Cost = sum.TPMRows(), sum.CostRows()
	}
	ev.TPMRows, ev.CostRows = len(ev.TPM), len(ev.Cost)
	for _, cell := range files.Cells {
		if cell.Sweep == "" {
			continue
		}
		var sw schema.RooflineSweep
		if err := r.JSON(cell.Sweep, &sw); err != nil {
			return nil, err
		}
		ev.Roofline = append(ev.Roofline, sw.Rows...)
	}
	ev.RooflineRows = len(ev.Roofline)
	ev.RooflinePresent = ev.RooflineRows > 0
	if files.Champion != "" {
		var ch schema.Champion
		if err := r.JSON(files.Champion, &ch); err != nil {
			return nil, err
		}
		ev.ChampionPresent, ev.Champion = true, ch.Champion
	}
	return ev, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// campaignRow is the campaign_v1 row of a publish.
func campaignRow(c *schema.Campaign, ev *Evidence, created string, strict bool, gaps []string) schema.CampaignRow {
	row := schema.CampaignRow{
		Schema: schema.SchemaCampaignRow, Campaign: c.Campaign, Kind: kindOf(c), Created: created,
		Cells: ev.AtlasCells, FullCells: ev.FullCells, PartialCells: ev.PartialCells, FailedCells: ev.FailedCells,
		PlotReadyPoints: ev.PlotReadyPoints, DCGMGrounded: ev.DCGMGrounded, SolRigor: ev.SolRigor,
		RooflinePresent: ev.RooflinePresent, Strict: strict, Gaps: gaps,
		Engine: strings.Join(ev.Engines, ","), EngineVersion: strings.Join(ev.Versions, ","),
		Delivery: strings.Join(ev.Deliveries, ","),
	}
	if s := c.Source; s != nil {
		row.Engine = or(s.Engine, row.Engine)
		row.EngineVersion = or(s.EngineVersion, row.EngineVersion)
		row.Delivery = or(s.Delivery, row.Delivery)
		row.Commit, row.Patch, row.SourceURL = s.Commit, s.Patch, redact.URL(s.URL)
	}
	return row
}

func kindOf(c *schema.Campaign) string { return or(c.Kind, "throughput") }

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

package atlas

import "github.com/perfdag/perfdag/schema"

// Measured reports whether perfdag measured the row's point against the endpoint: a point this
// campaign ran (not an imported or fixture row, not a concurrency without a point), so what it
// took counts toward the campaign's measurement cost.
func Measured(r *schema.AtlasRow) bool {
	if r.Backend != BackendPerfdag {
		return false
	}
	status, _ := r.Extra["point_status"].(string)
	return status != PointMissing
}

// CostTally sums the measurement cost of atlas rows per cell (in the order cells first appear)
// and for the whole campaign.
type CostTally struct {
	total schema.CostTotal
	cells []schema.CellCost
	at    map[string]int
}

// Add counts a row when perfdag measured it (a row without a recorded cost is counted as
// unrecorded, never as free).
func (c *CostTally) Add(r *schema.AtlasRow) {
	if !Measured(r) {
		return
	}
	if c.at == nil {
		c.at = map[string]int{}
	}
	i, ok := c.at[r.CellID]
	if !ok {
		i = len(c.cells)
		c.at[r.CellID] = i
		c.cells = append(c.cells, schema.CellCost{Cell: r.CellID})
	}
	c.cells[i].Add(r.MeasurementCost)
	c.total.Add(r.MeasurementCost)
}

// Cost is the campaign's measurement cost, nil when no row was measured by perfdag.
func (c *CostTally) Cost() *schema.CampaignCost {
	if len(c.cells) == 0 {
		return nil
	}
	return &schema.CampaignCost{Total: c.total, Cells: c.cells}
}

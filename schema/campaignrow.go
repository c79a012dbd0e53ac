package schema

// SchemaCampaignRow names the campaign_v1 lake row.
const SchemaCampaignRow = "campaign_v1"

// CampaignRow is one published campaign (schema campaign_v1; a row of the lake table): what it
// covered, how well grounded it is, and which gates it was published past (gaps).
type CampaignRow struct {
	Schema   string `json:"schema"` // campaign_v1
	Campaign string `json:"campaign"`
	Kind     string `json:"kind"`    // throughput, latency, mixed
	Created  string `json:"created"` // RFC 3339, UTC

	Cells           int `json:"cells"`             // distinct atlas cells
	FullCells       int `json:"full_cells"`        // every requested concurrency produced an ok point
	PartialCells    int `json:"partial_cells"`     // some points missing, failed or partial
	FailedCells     int `json:"failed_cells"`      // no usable point
	PlotReadyPoints int `json:"plot_ready_points"` // atlas rows with plot_ready

	DCGMGrounded    bool     `json:"dcgm_grounded"`    // every plot-ready cell is byte-grounded
	SolRigor        string   `json:"sol_rigor"`        // L1..L4, the campaign's weakest plot-ready cell
	RooflinePresent bool     `json:"roofline_present"` // a roofline sweep was imported (report page 7)
	Strict          bool     `json:"strict"`           // published under strict gates
	Gaps            []string `json:"gaps,omitempty"`   // gates passed knowingly (--no-strict or acknowledged), in words

	Engine        string `json:"engine,omitempty"` // source under test
	EngineVersion string `json:"engine_version,omitempty"`
	Commit        string `json:"commit,omitempty"`
	Delivery      string `json:"delivery,omitempty"` // results are evidence for this delivery only
	Patch         string `json:"patch,omitempty"`
	SourceURL     string `json:"source_url,omitempty"`
}

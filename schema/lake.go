package schema

// SchemaPublishReceipt names publish.json.
const SchemaPublishReceipt = "publish_receipt_v1"

// PublishReceipt is publish.json in a campaign directory: where a publish wrote, how many rows
// each lake table received, which strict gates passed, and every gap published knowingly.
// It never holds a password: Lake is the URL without it.
type PublishReceipt struct {
	Schema       string        `json:"schema"` // publish_receipt_v1
	Campaign     string        `json:"campaign"`
	CampaignID   string        `json:"campaign_id"` // the campaign directory name every lake row carries
	Lake         string        `json:"lake"`        // lake URL without a password
	Driver       string        `json:"driver"`      // sqlite, postgres
	Strict       bool          `json:"strict"`      // false: published with --no-strict
	PublishedAt  string        `json:"published_at"`
	Seconds      float64       `json:"seconds"`
	Tables       []LakeTable   `json:"tables"`
	DCGMGrounded bool          `json:"dcgm_grounded"`
	SolRigor     string        `json:"sol_rigor"`
	Gates        []PublishGate `json:"gates"`          // every strict gate and its verdict
	Gaps         []string      `json:"gaps,omitempty"` // as on the campaign_v1 row
}

// LakeTable is what one publish did to one lake table.
type LakeTable struct {
	Table    string `json:"table"`
	Rows     int    `json:"rows"`     // rows inserted
	Replaced int    `json:"replaced"` // rows of an earlier publish of the same campaign, deleted first
}

// PublishGate is one strict gate's verdict on a campaign.
type PublishGate struct {
	ID       string `json:"id"`
	Severity string `json:"severity"` // fail, warn
	Rule     string `json:"rule"`
	Passed   bool   `json:"passed"`
	Message  string `json:"message,omitempty"` // why it failed, in words
}

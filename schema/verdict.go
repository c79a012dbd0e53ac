package schema

// Gate severities.
const (
	SeverityFail = "fail" // marks the campaign failed and stops what acts on a pass
	SeverityWarn = "warn" // recorded beside the evidence, stops nothing
)

// GateVerdict is one gate evaluated on one node's result: evidence attached to the node and,
// for point-scope nodes, to its point. It travels with the point into the atlas, the report
// and the lake, so a failing point is shown as failing, never dropped.
type GateVerdict struct {
	Gate        string `json:"gate"`
	Node        string `json:"node"`
	Cell        string `json:"cell,omitempty"`
	Concurrency int    `json:"concurrency,omitempty"`
	Severity    string `json:"severity"`
	Passed      bool   `json:"passed"`
	Rule        string `json:"rule"`
	Message     string `json:"message,omitempty"`
	Value       string `json:"value,omitempty"` // the values the rule read, e.g. "ttft_p50_ms=189.2"
	Error       string `json:"error,omitempty"` // the rule could not be evaluated (counts as not passed)
}

// Failing reports whether the verdict is a fail-severity gate that did not pass.
func (v GateVerdict) Failing() bool { return !v.Passed && v.Severity == SeverityFail }

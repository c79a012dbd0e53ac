package schema

import "strings"

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
	Concurrency int    `json:"concurrency,omitempty"` // the point's in-flight count: a concurrency, or a rate's cap
	// Load is a rate point's key (r2.5-cap64); empty on a closed-loop point, whose verdicts keep
	// the form they had before points were keyed by load (Concurrency says which point).
	Load     string `json:"load,omitempty"`
	Severity string `json:"severity"`
	Passed   bool   `json:"passed"`
	Rule     string `json:"rule"`
	Message  string `json:"message,omitempty"`
	Value    string `json:"value,omitempty"` // the values the rule read, e.g. "ttft_p50_ms = 189.2"
	Error    string `json:"error,omitempty"` // the rule could not be evaluated (counts as not passed)
	// Unstated names the values the rule needed that the result does not state (an imported
	// point without a TTFT p50): the rule was not evaluated, which counts as not passed —
	// a warn gate warns, a fail gate fails. A missing value is never read as 0.
	Unstated []string `json:"unstated,omitempty"`
}

// Point is the key of the point the verdict is about ("" for a cell- or campaign-scope node).
func (v GateVerdict) Point() string {
	switch {
	case v.Load != "":
		return v.Load
	case v.Concurrency > 0:
		return Conc(v.Concurrency).Key()
	}
	return ""
}

// Failing reports whether the verdict is a fail-severity gate that did not pass.
func (v GateVerdict) Failing() bool { return !v.Passed && v.Severity == SeverityFail }

// Outcome words the verdict: "passed", "warned" (a warn gate did not pass), "failed" (a fail
// gate did not pass). Every reader — progress, status, summary, events, report — uses it.
func (v GateVerdict) Outcome() string {
	switch {
	case v.Passed:
		return "passed"
	case v.Severity == SeverityWarn:
		return "warned"
	}
	return "failed"
}

// Why says what did not pass and with which values: the gate's message (when it has one),
// the rule with its outcome, and the values the rule read, e.g. "ttft too high: ttft_p50_ms <
// 100 failed: ttft_p50_ms = 187.3". A rule that could not be evaluated says so with its error,
// one that needed an unstated value names it ("ttft_p50_ms < 100 not evaluated: ttft_p50_ms
// unstated").
func (v GateVerdict) Why() string {
	s := v.Rule + " " + v.Outcome()
	switch {
	case len(v.Unstated) > 0:
		s = v.Rule + " not evaluated: " + strings.Join(v.Unstated, ", ") + " unstated"
	case v.Error != "":
		s = v.Rule + " could not be evaluated (" + v.Error + ")"
	}
	if v.Value != "" {
		s += ": " + v.Value
	}
	if v.Message != "" {
		s = v.Message + " — " + s
	}
	return s
}

// Line is the verdict as one log line: "gate ID (severity) warned on NODE: why".
func (v GateVerdict) Line() string {
	return "gate " + v.Gate + " (" + v.Severity + ") " + v.Outcome() + " on " + v.Node + ": " + v.Why()
}

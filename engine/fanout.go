package engine

import "github.com/perfdag/perfdag/schema"

// Fanout is a node that expands at run time into point groups of its cell, one round at a
// time, chosen from the results of the groups already made (an SLO search, a sweep that stops
// early). Each group is the pipeline's point-scope steps at one load: ordinary nodes
// with their own fingerprints and checkpoints, so a killed search resumes by reusing them and
// an edited rule re-uses every group whose fingerprint still matches.
type Fanout interface {
	// Next returns the points to measure next (in order), none when the answer is known.
	// probes are the groups made so far, in order; free lists the points whose groups an
	// earlier run measured and a reuse would give at no cost (or that --force asks to measure
	// again), in key order, so a search can narrow its bracket with them first. Next must be a
	// pure function of its arguments: a resume replays it over the reused groups and must
	// reach the same decisions.
	Next(probes []Probe, free []schema.Load) ([]schema.Load, error)
}

// Probe is one point group a fan-out made: its load and the results of its nodes.
type Probe struct {
	Load     schema.Load
	Upstream []Upstream // the group's nodes that finished with a result, or failed (Result nil), in plan order
	Reused   bool       // every node of the group was reused
	Failed   string     // the first failure in the group, "" when none
}

// FanoutSpec makes a kind's nodes expand at run time (Kind.Fanout).
type FanoutSpec struct {
	// Start returns the node's fan-out for its task (its cell, the campaign, its static upstreams).
	Start func(t *Task) (Fanout, error)
	// Bound is the most groups a node for the cell can make, for plan and dry runs.
	Bound func(cell *schema.Cell) int
	// Decides clears, on a copy of a cell, the fields only the fan-out decides with (an SLO, a
	// stopping rule): no other node's fingerprint holds them, so editing them re-uses every
	// point already measured. Nil means none.
	Decides func(cell *schema.Cell)
}

package campaign

import (
	"fmt"
	"strings"
	"time"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/engine/workspace"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// NodeStatus is one node as `perfdag status` and `perfdag serve` show it.
type NodeStatus struct {
	Node      string         `json:"node"`
	Kind      string         `json:"kind"`
	State     string         `json:"state"`              // succeeded, failed, interrupted, running, crashed, pending, skipped, stale
	LastRun   string         `json:"last_run,omitempty"` // ran, reused, skipped, blocked in the latest run
	Why       string         `json:"why,omitempty"`
	StartedAt *time.Time     `json:"started_at,omitempty"`
	Seconds   float64        `json:"seconds,omitempty"`
	Attempt   int            `json:"attempt,omitempty"`
	Summary   string         `json:"summary,omitempty"`
	Error     string         `json:"error,omitempty"`
	Gates     []gate.Verdict `json:"gates,omitempty"`
	// RecordedAs is the id the node's record was written under by a perfdag that keyed points
	// by concurrency alone (run-shape[c/c8] for run-shape[c/r20-cap8]); "" when the same.
	RecordedAs string `json:"recorded_as,omitempty"`
}

// Status is a campaign directory's every node with its state, read from the directory alone
// (frozen config, journal, events.jsonl), writing nothing: what status and serve show.
type Status struct {
	Campaign string         `json:"campaign"`
	Dir      string         `json:"dir"`
	Run      string         `json:"run"`
	Running  bool           `json:"running"`
	Counts   map[string]int `json:"counts"`
	Nodes    []NodeStatus   `json:"nodes"`
	// Outcome is how the run that left the directory so ended (run.State.Outcome), Deciding
	// the nodes that decided it.
	Outcome  string   `json:"-"`
	Deciding []string `json:"-"`
	// Started and Ended bound the latest run (Ended zero while it runs or when it crashed);
	// EventsSize is how many bytes of events.jsonl the status read, where a live reader goes on.
	Started, Ended time.Time `json:"-"`
	EventsSize     int64     `json:"-"`
	// Inspection is the directory read against its frozen file (its results and files).
	Inspection *Inspection `json:"-"`
}

// Status reads dir's state: every node of its plan, its latest record and its latest event.
func (s *Service) Status(dir string) (*Status, error) {
	info, err := campaigndir.ReadInfo(dir)
	if err != nil {
		return nil, err
	}
	evs, size, err := events.ReadSize(campaigndir.Events(dir))
	if err != nil {
		return nil, err
	}
	st := &Status{Campaign: info.Campaign, Dir: dir, Running: workspace.Locked(dir), Counts: map[string]int{}, EventsSize: size}
	last := map[string]events.Event{}
	for _, e := range evs {
		switch e.Type {
		case events.RunStart:
			st.Run, st.Started, st.Ended = e.Run, e.Time, time.Time{}
			last = map[string]events.Event{}
		case events.RunEnd:
			st.Ended = e.Time
		case events.NodeEnd, events.NodeReused, events.NodeSkipped, events.NodeStart:
			last[e.Node] = e
		}
	}
	in, err := s.Inspect(dir)
	if err != nil {
		return nil, fmt.Errorf("read %s against its campaign file: %w", dir, err)
	}
	st.Inspection = in
	st.Outcome, st.Deciding = in.State.Outcome()
	for _, n := range in.State.Nodes {
		ns := NodeStatus{Node: n.Node, Kind: n.Kind, State: n.State, Gates: n.Verdicts, RecordedAs: n.Legacy}
		if n.State == run.StateNeverRan {
			ns.State = "pending"
		}
		if r := n.Record; r != nil {
			ns.Attempt, ns.Summary, ns.Error = r.Attempt, r.Summary, r.Error
			t := r.StartedAt
			ns.StartedAt = &t
			if !r.EndedAt.IsZero() {
				ns.Seconds = r.EndedAt.Sub(r.StartedAt).Seconds()
			}
			if r.Status == checkpoint.Running && !st.Running {
				ns.State = "crashed"
				ns.Why = "its run ended without recording an outcome; resume re-runs it"
			}
		}
		if len(n.Stale) > 0 {
			ns.State, ns.Why = "stale", strings.Join(n.Stale, "; ")+" (resume brings it up to date)"
		}
		e, ok := last[n.Node]
		if !ok && n.Legacy != "" {
			e, ok = last[n.Legacy] // the events of an older perfdag's run name the node as it was
		}
		if ok {
			ns.LastRun = LastRun(e)
			if ns.Why == "" {
				ns.Why = e.Reason
			}
		}
		st.Counts[ns.State]++
		st.Nodes = append(st.Nodes, ns)
	}
	return st, nil
}

// LastRun names what the latest run did with a node, from its latest event.
func LastRun(e events.Event) string {
	switch e.Type {
	case events.NodeReused:
		return "reused"
	case events.NodeStart:
		return "started"
	case events.NodeSkipped:
		if e.Status != "" {
			return e.Status
		}
		return "skipped"
	}
	return "ran"
}

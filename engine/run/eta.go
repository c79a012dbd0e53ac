package run

import (
	"time"

	"github.com/perfdag/perfdag/engine/events"
)

// ETA estimates, from a run's events, what its nodes not finished yet would take: each at
// the mean duration of its kind's executed nodes. Reused and skipped nodes take no time and
// are no basis; neither is an interrupted one. It is not safe for concurrent use.
type ETA struct {
	kindOf  map[string]string // node id → kind name
	left    map[string]bool   // nodes not finished yet
	secs    map[string][]float64
	allSecs float64
	ran     int
}

// NewETA follows a run of the nodes in kindOf (node id → kind name).
func NewETA(kindOf map[string]string) *ETA {
	e := &ETA{kindOf: kindOf, left: map[string]bool{}, secs: map[string][]float64{}}
	for n := range kindOf {
		e.left[n] = true
	}
	return e
}

// Observe takes a node's end (NodeEnd, NodeReused, NodeSkipped) into account; other events
// change nothing.
func (e *ETA) Observe(ev events.Event) {
	switch ev.Type {
	case events.NodeEnd, events.NodeReused, events.NodeSkipped:
	default:
		return
	}
	delete(e.left, ev.Node)
	if ev.Type == events.NodeEnd && ev.Seconds > 0 && ev.Status != OutInterrupted {
		k := e.kindOf[ev.Node]
		e.secs[k] = append(e.secs[k], ev.Seconds)
		e.allSecs += ev.Seconds
		e.ran++
	}
}

// Estimate is what the nodes not finished yet would take, one after another: each at the
// mean duration of its kind's executed nodes (a kind none of whose nodes ran yet at the mean
// of all). It is known only once two nodes executed and at least half of the nodes left are
// of a kind seen running, so one fast scrape does not promise a campaign of minutes in a
// second.
func (e *ETA) Estimate() (time.Duration, bool) {
	if e.ran < 2 || len(e.left) == 0 {
		return 0, false
	}
	total, known := 0.0, 0
	for n := range e.left {
		if d := e.secs[e.kindOf[n]]; len(d) > 0 {
			total += mean(d)
			known++
		} else {
			total += e.allSecs / float64(e.ran)
		}
	}
	if 2*known < len(e.left) {
		return 0, false
	}
	return time.Duration(total * float64(time.Second)), true
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

package run

import (
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/events"
)

// TestETA: an estimate only once two nodes executed and at least half of the nodes left are
// of a kind seen running; each left node counts at its kind's mean (an unseen kind at the
// mean of all); reused, skipped and interrupted nodes are no basis.
func TestETA(t *testing.T) {
	kinds := map[string]string{"r1": "run-shape", "a": "run-shape", "b": "run-shape", "s0": "scrape-spec", "s1": "scrape-spec",
		"c": "run-shape", "d": "run-shape", "e": "run-shape", "agg": "aggregate", "render": "render"}
	end := func(n, status string, s float64) events.Event {
		return events.Event{Type: events.NodeEnd, Node: n, Status: status, Seconds: s}
	}
	base := []events.Event{{Type: events.NodeReused, Node: "r1"}, end("s0", OutRan, 0.01), end("s1", OutRan, 0.01)}
	cases := []struct {
		name   string
		events []events.Event
		want   time.Duration
		known  bool
	}{
		{name: "nothing ran", events: nil},
		{name: "one node ran", events: []events.Event{end("a", OutRan, 20)}},
		{name: "only fast scrapes ran: no node left of a kind seen", events: base},
		{name: "two run-shapes ran: c,d,e at 30 s, agg and render at the mean of all (15.005 s)",
			events: append(append([]events.Event{}, base...), end("a", OutGateFailed, 20), end("b", OutRan, 40)),
			want:   120010 * time.Millisecond, known: true},
		{name: "an interrupted node is no basis",
			events: append(append([]events.Event{}, base...), end("a", OutInterrupted, 1000), end("b", OutRan, 40)),
			want:   time.Duration((3*40 + 2*40.02/3) * float64(time.Second)), known: true},
		{name: "a start or progress event changes nothing",
			events: []events.Event{{Type: events.NodeStart, Node: "a"}, {Type: events.Progress, Node: "a", Message: "3/8"}}},
		{name: "nothing left", events: func() []events.Event {
			var es []events.Event
			for n := range kinds {
				es = append(es, end(n, OutRan, 5))
			}
			return es
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := NewETA(kinds)
			for _, ev := range tc.events {
				e.Observe(ev)
			}
			got, known := e.Estimate()
			if known != tc.known || (known && (got-tc.want).Abs() > time.Millisecond) {
				t.Errorf("Estimate() = %v, %v; want %v, %v", got, known, tc.want, tc.known)
			}
		})
	}
}

package run

import "github.com/perfdag/perfdag/engine/checkpoint"

// Outcome is how a run that left the directory in this state ended, by the rules of a
// Summary's exit: OutPending when a node never finished (never ran, still or crashed running,
// interrupted), else OutFailed when a step failed, else OutGateFailed when a fail-severity
// verdict stands or a step refused, else OutRan. It returns the nodes that decided it. The
// final task of an exported workflow reports the campaign's outcome this way, since its
// slices (each exiting 0 once it finished) ran in separate processes.
func (s *State) Outcome() (string, []string) {
	var pending, failed, refusedBy []string
	for _, n := range s.Nodes {
		switch n.State {
		case StateNeverRan, StateRunning, StateInterrupted:
			pending = append(pending, n.Node)
		case checkpoint.Failed:
			if n.Record != nil && n.Record.Refused {
				refusedBy = append(refusedBy, n.Node)
			} else {
				failed = append(failed, n.Node)
			}
		case StateSucceeded:
			if refused(n.Verdicts) {
				refusedBy = append(refusedBy, n.Node)
			}
		}
	}
	switch {
	case len(pending) > 0:
		return OutPending, pending
	case len(failed) > 0:
		return OutFailed, failed
	case len(refusedBy) > 0:
		return OutGateFailed, refusedBy
	}
	return OutRan, nil
}

package schedule

import (
	"fmt"
	"time"
)

// Event actions.
const (
	EventStart   = "start"   // a slot's run started
	EventEnd     = "end"     // a run ended (Run is set), or a run lost with a killed scheduler was recorded
	EventSkip    = "skip"    // a due slot was dropped: the previous run was still going
	EventQueue   = "queue"   // a due slot waits for the current run (overlap queue)
	EventReplace = "replace" // the current run is cancelled for a due slot
	EventMissed  = "missed"  // missed slots not caught up (outside the window or over the cap)
	EventBlocked = "blocked" // a slot waits for a resource another campaign's run holds
	EventWait    = "wait"    // the scheduler sleeps until Slot.Time
	EventReset   = "reset"   // no usable watermark (first run here, or the schedule changed)
)

// Event is one decision of the scheduler.
type Event struct {
	Action   string
	Campaign string
	Slot     Slot
	Count    int    // missed: how many
	Detail   string // human words
	Run      *Run   // end only
}

func (s *Scheduler) emit(e Event) {
	if s.opts.Observe != nil {
		s.opts.Observe(e)
	}
	if s.opts.Log == nil || e.Action == EventWait {
		return
	}
	line := e.Action
	if !e.Slot.Time.IsZero() {
		line += " slot " + e.Slot.Time.Format(time.RFC3339)
	}
	if e.Detail != "" {
		line += ": " + e.Detail
	}
	if e.Run != nil && e.Run.Dir != "" {
		line += " (" + e.Run.Dir + ")"
	}
	s.logf("%s: %s", e.Campaign, line)
}

func (s *Scheduler) logf(format string, args ...any) {
	if s.opts.Log != nil {
		fmt.Fprintf(s.opts.Log, "%s schedule %s\n", s.opts.Clock.Now().Format(time.RFC3339), fmt.Sprintf(format, args...))
	}
}

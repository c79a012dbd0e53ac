package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// ParseCron reads a schedule: its cron expression (five fields or a descriptor such as
// @daily, optionally prefixed TZ=Zone or CRON_TZ=Zone) and its timezone: key. The zone may be
// given one way only: robfig/cron lets an embedded zone silently win over the configured one,
// so both together are refused unless they name the same zone. An expression that never fires
// (0 0 30 2 *) is refused too, rather than scheduling nothing forever. now anchors that check.
func ParseCron(expr, timezone string, now time.Time) (cron.Schedule, *time.Location, error) {
	embedded := ""
	if f := strings.Fields(expr); len(f) > 0 {
		for _, prefix := range []string{"TZ=", "CRON_TZ="} {
			if z, ok := strings.CutPrefix(f[0], prefix); ok {
				embedded = z
			}
		}
	}
	if embedded != "" && timezone != "" && embedded != timezone {
		return nil, nil, fmt.Errorf("the expression names zone %s and timezone: names %s: keep one (write the zone in timezone: and drop the TZ= prefix)", embedded, timezone)
	}
	spec, err := cron.ParseStandard(expr)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (five fields: minute hour day-of-month month day-of-week)", err)
	}
	loc := time.UTC
	switch {
	case embedded != "":
		if s, ok := spec.(*cron.SpecSchedule); ok {
			loc = s.Location
		}
	case timezone != "":
		if loc, err = time.LoadLocation(timezone); err != nil {
			return nil, nil, fmt.Errorf("timezone %q is not an IANA zone (e.g. Europe/Berlin): %w", timezone, err)
		}
	}
	if spec.Next(now.In(loc)).IsZero() {
		return nil, nil, fmt.Errorf("%q never fires (no date matches it in the next five years, e.g. 30 February)", expr)
	}
	return spec, loc, nil
}

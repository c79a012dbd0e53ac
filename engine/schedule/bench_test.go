package schedule

import (
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
)

// BenchmarkDueAfterYearsDown: a scheduler restarted after three years down with an hourly
// schedule and a one-day window decides its slots without enumerating all 26,000 of them
// (the stale count stops at maxScan). Target: under 10 ms per evaluation.
func BenchmarkDueAfterYearsDown(b *testing.B) {
	c, err := compile(Job{Name: "x", File: "x.yaml", Schedule: schema.Schedule{Cron: "0 * * * *",
		CatchupWindow: schema.Duration{Duration: 24 * time.Hour}, CatchupMax: 3}})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 1, 5, 10, 30, 0, 0, time.UTC)
	w := now.AddDate(-3, 0, 0)
	for b.Loop() {
		ds := c.due(w, now, time.Minute, nil)
		if len(ds.accepted) != 3 {
			b.Fatalf("accepted %d", len(ds.accepted))
		}
	}
}

// BenchmarkUpcoming: --list computing five fire times of a zoned weekly schedule.
func BenchmarkUpcoming(b *testing.B) {
	j := Job{Name: "w", File: "w.yaml", Schedule: schema.Schedule{Cron: "0 3 * * 1", Timezone: "Europe/Berlin"}}
	from := time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		if _, err := Upcoming(j, from, 5); err != nil {
			b.Fatal(err)
		}
	}
}

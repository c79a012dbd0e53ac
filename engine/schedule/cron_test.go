package schedule

import (
	"strings"
	"testing"
	"time"
)

func TestParseCron(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		expr, tz, zone, err string
	}{
		{"0 3 * * 1", "", "UTC", ""},
		{"0 3 * * 1", "America/New_York", "America/New_York", ""},
		{"TZ=Asia/Tokyo 0 3 * * 1", "", "Asia/Tokyo", ""},
		{"CRON_TZ=Asia/Tokyo 0 3 * * 1", "", "Asia/Tokyo", ""},
		{"TZ=Asia/Tokyo 0 3 * * 1", "Asia/Tokyo", "Asia/Tokyo", ""},
		{"TZ=Asia/Tokyo 0 3 * * 1", "America/New_York", "", "names zone Asia/Tokyo and timezone: names America/New_York: keep one"},
		{"CRON_TZ=Asia/Tokyo 0 3 * * 1", "America/New_York", "", "keep one"},
		{"0 0 30 2 *", "", "", `"0 0 30 2 *" never fires`},
		{"0 0 31 4 *", "Europe/Berlin", "", "never fires"},
		{"0 0 29 2 *", "", "UTC", ""}, // leap days fire within five years
		{"61 * * * *", "", "", "end of range (61) above maximum (59)"},
		{"0 3 * * 1", "Mars/Base", "", "not an IANA zone"},
	}
	for _, tt := range tests {
		_, loc, err := ParseCron(tt.expr, tt.tz, now)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseCron(%q, %q) error %v, want %q", tt.expr, tt.tz, err, tt.err)
			}
			continue
		}
		if err != nil || loc.String() != tt.zone {
			t.Errorf("ParseCron(%q, %q) = %v, %v; want zone %s", tt.expr, tt.tz, loc, err, tt.zone)
		}
	}
}

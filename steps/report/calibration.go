package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/perfdag/perfdag/schema"
)

// calibrationGap is how far from the run a calibration may have been made before the cover
// says so: a day later the machine's load, kernel or neighbours may well differ.
const calibrationGap = 24 * time.Hour

// clientError is the calibration point for a TTFT measured at concurrency c: the calibrated
// concurrency nearest c on a log scale (c12 takes c16 over c8), nil without a calibration.
func clientError(cal *schema.Calibration, c int) *schema.CalibrationPoint {
	if cal == nil || c <= 0 {
		return nil
	}
	var best *schema.CalibrationPoint
	bestD := math.Inf(1)
	for i := range cal.Points {
		p := &cal.Points[i]
		if p.TTFTErrorMs == nil || p.Concurrency <= 0 {
			continue
		}
		if d := math.Abs(math.Log2(float64(p.Concurrency) / float64(c))); d < bestD {
			best, bestD = p, d
		}
	}
	return best
}

// errorBar is the "±0.18" written beside a TTFT: the client's own TTFT error at p99, in ms.
func errorBar(p *schema.CalibrationPoint) string {
	return "±" + msShort(p.TTFTErrorMs.P99)
}

// msShort writes a small millisecond figure with two significant digits (0.18, 1.9, 24).
func msShort(ms float64) string {
	switch a := math.Abs(ms); {
	case a >= 10:
		return strconv.FormatFloat(ms, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(ms, 'f', 1, 64)
	case a >= 0.01:
		return strconv.FormatFloat(ms, 'f', 2, 64)
	default:
		return strconv.FormatFloat(ms, 'f', 3, 64)
	}
}

// calibrationNote explains the ± of the headline: what it is, where and when it was measured,
// and — as warn — whether it does not fit this run (another machine, long before or after).
// used lists the calibrated concurrencies the headline showed; both are "" when the headline
// shows no error bar.
func calibrationNote(in Input, used []int) (note, warn string) {
	cal := in.Calibration
	if cal == nil || len(used) == 0 {
		return "", ""
	}
	cs := make([]string, len(used))
	for i, c := range used {
		cs[i] = "c" + strconv.Itoa(c)
	}
	m := cal.Machine
	s := fmt.Sprintf("± is this client's own TTFT error, p99 ms, at the calibrated concurrency nearest each row's (%s; perfdag calibrate, %s on %s",
		strings.Join(cs, ", "), cal.Created.UTC().Format("2006-01-02 15:04 UTC"), orUnknown(m.Host))
	if !m.LoadAvgUnknown {
		s += fmt.Sprintf(", load %.1f", m.LoadAvg[0])
	}
	s += ")."
	var w []string
	if r := in.Run; r != nil {
		if r.Host != "" && m.Host != "" && r.Host != m.Host {
			w = append(w, fmt.Sprintf("Calibrated on another machine (%s) than the run's (%s): the error bar is that machine's.", m.Host, r.Host))
		}
		switch {
		case !r.Created.IsZero() && cal.Created.Before(r.Created.Add(-calibrationGap)):
			w = append(w, "Calibrated "+span(r.Created.Sub(cal.Created))+" before the run started.")
		case !r.Updated.IsZero() && cal.Created.After(r.Updated.Add(calibrationGap)):
			w = append(w, "Calibrated "+span(cal.Created.Sub(r.Updated))+" after the run.")
		}
	}
	return s, strings.Join(w, " ")
}

// span words a duration of a day or more in days, else in hours.
func span(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	}
	return fmt.Sprintf("%d hours", int(d/time.Hour))
}

func orUnknown(s string) string {
	if s == "" {
		return "an unnamed host"
	}
	return s
}

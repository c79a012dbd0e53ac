package calibrate

import (
	"fmt"
	"strconv"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/workload"
)

// Warnings name every point of the campaign whose asked load exceeds what the calibration's
// ceilings say one client holds, each with the ceiling and what to do. A closed-loop point asks
// its concurrency in streams (a searched cell: its upper bound); an open-loop point asks its
// rate in requests per second, its rate × answer length in tokens per second, and, by Little's
// law, rate × the answer's time at the calibration's pace in streams (at most its in-flight
// cap); a point split over clients (clients: N) asks each client its share. host is this machine's name: a calibration made on another says so. None without
// ceilings (a calibration made before they were measured).
func Warnings(c *schema.Campaign, cal *schema.Calibration, host string) []string {
	ce := cal.Ceilings
	if ce == nil {
		return nil
	}
	from := fmt.Sprintf("calibrated %s", cal.Created.UTC().Format("2006-01-02 15:04Z"))
	if h := cal.Machine.Host; h != "" && h != host {
		from += " on " + h + ", not this machine"
	}
	held := func(what string) string {
		return fmt.Sprintf("more than one client held on this machine (%s; %s)", what, from)
	}
	const todo = ": it would measure its client as much as the server; lower the load or split it over more clients (clients: on the cell)"
	var out []string
	for _, cell := range c.Cells {
		if cell.Import != nil {
			continue // another tool's client measured it
		}
		answer := 1000
		if b, err := workload.Resolve(cell.Workload); err == nil {
			answer = b.OutputTokens
		}
		// a point split over clients asks each its share: the largest part of the streams
		// (or the cap), the rate over N
		n := max(cell.Clients, 1)
		for _, l := range askedLoads(cell) {
			rate, conc := l.Rate/float64(n), (l.InFlight()+n-1)/n
			point := fmt.Sprintf("cell %s at %s", cell.ID, l.Key())
			if n > 1 {
				point += fmt.Sprintf(" (each of its %d clients)", n)
			}
			if rate <= 0 {
				if conc > ce.Streams {
					out = append(out, fmt.Sprintf("%s asks %d streams, %s%s", point, conc,
						held(fmt.Sprintf("%d streams at %g tokens/s each", ce.Streams, ce.StreamTokensPerS)), todo))
				}
				continue
			}
			if ce.RequestsPerS > 0 && rate > ce.RequestsPerS {
				out = append(out, fmt.Sprintf("%s asks %s requests/s, %s%s", point, perS(rate),
					held(fmt.Sprintf("%.0f requests/s", ce.RequestsPerS)), todo))
			}
			if tok := rate * float64(answer); ce.TokensPerS > 0 && tok > ce.TokensPerS {
				out = append(out, fmt.Sprintf("%s asks %.0f tokens/s (%d-token answers), %s%s", point, tok, answer,
					held(fmt.Sprintf("%.0f tokens/s", ce.TokensPerS)), todo))
			}
			if ce.StreamTokensPerS <= 0 {
				continue
			}
			streams := rate * float64(answer) / ce.StreamTokensPerS // Little's law at the ladder's pace
			if conc > 0 {
				streams = min(streams, float64(conc))
			}
			if int(streams) > ce.Streams {
				out = append(out, fmt.Sprintf("%s asks about %.0f streams (%d-token answers at %g tokens/s each), %s%s", point, streams, answer,
					ce.StreamTokensPerS, held(fmt.Sprintf("%d streams", ce.Streams)), todo))
			}
		}
	}
	return out
}

// askedLoads are the points a cell may run at: its concurrencies and rates, or a searched
// cell's upper bound (the most its probes ask).
func askedLoads(cell schema.Cell) []schema.Load {
	if s := cell.Search; s != nil && s.OverRate() && schema.CheckRate(s.To) == nil {
		return append(cell.Loads(), schema.RateAt(s.To, cell.MaxInFlight))
	}
	if s := cell.Search; s != nil && s.To >= 1 {
		return append(cell.Loads(), cell.LegacyLoad(int(s.To)))
	}
	return cell.Loads()
}

// perS words a rate: four significant digits, never an exponent (16000, not 1.6e+04).
func perS(rate float64) string {
	if rate >= 1000 {
		return strconv.FormatFloat(rate, 'f', 0, 64)
	}
	return strconv.FormatFloat(rate, 'g', 4, 64)
}

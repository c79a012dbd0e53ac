package benchfile

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/perfdag/perfdag/schema"
)

// A vLLM or SGLang run's load is read from two keys: request_rate (requests per second, or
// infinite: vLLM writes the string "inf", SGLang Python's bare Infinity) and max_concurrency
// (the client's semaphore, absent or null for none). An infinite rate sends every request at
// once and the semaphore holds all but max_concurrency back, each sent when one ends: a closed
// loop at max_concurrency (c<N>). A finite rate schedules arrivals against the clock, the
// semaphore capping them: an open-loop point at that rate with that cap (r<R>-cap<N>), or
// without one (r<R>). An infinite rate without a max concurrency is a burst of every request
// at once, no steady load: no point (runLoad's problem names it).
const (
	rateKey = "request_rate"
	concKey = "max_concurrency"
)

// runLoad reads a run's load from its raw request_rate and max_concurrency (nil: absent). The
// zero Load with an empty problem is the burst (an infinite rate without a cap); a problem
// names the field holding a value that is neither.
func runLoad(rateRaw, concRaw json.RawMessage) (l schema.Load, field, problem string) {
	conc := 0
	if concRaw != nil && string(concRaw) != "null" {
		c, p := number(concRaw, ruleConcurrency)
		if p != "" {
			return schema.Load{}, concKey, p
		}
		conc = int(c)
	}
	rate, p := requestRate(rateRaw)
	if p != "" {
		return schema.Load{}, rateKey, p
	}
	switch {
	case math.IsInf(rate, 1) && conc > 0:
		return schema.Conc(conc), "", ""
	case math.IsInf(rate, 1):
		return schema.Load{}, "", ""
	}
	return schema.RateAt(rate, conc), "", ""
}

// requestRate reads request_rate: +Inf for "inf", Infinity or none stated (the tools'
// default), else a rate perfdag can key a point by.
func requestRate(raw json.RawMessage) (float64, string) {
	if raw == nil || string(raw) == "null" {
		return math.Inf(1), ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch strings.ToLower(s) {
		case "inf", "infinity", "+inf":
			return math.Inf(1), ""
		}
		return 0, fmt.Sprintf("holds %s: want a number of requests per second or inf", shown(raw))
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Sprintf("holds %s: want a number of requests per second or inf", shown(raw))
	}
	if err := schema.CheckRate(v); err != nil {
		return 0, fmt.Sprintf("holds %s: %v", shown(raw), err)
	}
	return v, ""
}

// arrival reads how a rate run's arrivals were drawn: vLLM's burstiness is the shape of its
// gamma-distributed gaps, 1 (or none stated, as SGLang writes) being poisson.
func (d *serveDoc) arrival(r *Result) error {
	r.Arrival, r.Burstiness = schema.ArrivalPoisson, 0
	b, ok, err := d.num("burstiness", ruleRate, false)
	if err != nil || !ok || b == 1 {
		return err
	}
	if b <= 0 || b > 1000 {
		return d.pos("burstiness", fmt.Sprintf("holds %s: want a gamma shape above 0 and at most 1000", shown(d.keys["burstiness"])))
	}
	r.Arrival, r.Burstiness = schema.ArrivalGamma, b
	return nil
}

// burstProblem is why a run with an infinite rate and no max concurrency is not a point.
func burstProblem(d *serveDoc) string {
	n := "every request"
	if raw, ok := d.keys["completed"]; ok {
		n = "all " + string(raw) + " requests"
	}
	return fmt.Sprintf("missing or null with request_rate inf: an import needs a fixed-concurrency run or a finite request rate; "+
		"this run sent %s at once, a burst with no steady load to key a point by (run with --max-concurrency N for a closed loop at N, or a finite --request-rate)", n)
}

// ArrivalWords names an arrival process: "poisson", "gamma with burstiness 0.5".
func ArrivalWords(arrival string, burstiness float64) string {
	if arrival == schema.ArrivalGamma {
		return fmt.Sprintf("gamma with burstiness %g", burstiness)
	}
	return arrival
}

// loadWords names a load as a mismatch message does: "concurrency 4", "request rate 2.5/s
// capped at 16 in flight", "request rate 2.5/s without a cap".
func loadWords(l schema.Load) string {
	switch {
	case !l.IsRate():
		return fmt.Sprintf("concurrency %d (%s)", l.Concurrency, l.Key())
	case l.Cap > 0:
		return fmt.Sprintf("request rate %s/s capped at %d in flight (%s)", schema.FormatRate(l.Rate), l.Cap, l.Key())
	}
	return fmt.Sprintf("request rate %s/s with no max concurrency (%s)", schema.FormatRate(l.Rate), l.Key())
}

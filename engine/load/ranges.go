package load

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/schema"
)

// tags checks the `enum` and `range` struct tags against the decoded values — the same tags
// the JSON Schema is generated from — and refuses NaN and ±Inf in every number, so a value an
// editor would flag is a positioned `validate` error too, never an out-of-memory or a
// "json: unsupported value" in the middle of a run.
func (v *validator) tags(val reflect.Value, path string) {
	switch val.Kind() {
	case reflect.Pointer:
		if !val.IsNil() {
			v.tags(val.Elem(), path)
		}
	case reflect.Slice:
		for i := range val.Len() {
			v.tags(val.Index(i), indexPath(path, i))
		}
	case reflect.Map:
		if val.Type().Key().Kind() != reflect.String {
			return
		}
		for _, k := range val.MapKeys() {
			v.tags(val.MapIndex(k), join(path, k.String()))
		}
	case reflect.Float64, reflect.Float32:
		if f := val.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			v.at(path, false, "write a finite number", "%s must be a finite number, got %v", path, f)
		}
	case reflect.Struct:
		t := val.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if strings.Contains(opts, "inline") {
				v.tags(val.Field(i), path)
				continue
			}
			child := join(path, name)
			if e := f.Tag.Get("enum"); e != "" && f.Type.Kind() == reflect.String {
				v.enum(val.Field(i).String(), strings.Split(e, ","), child)
				continue
			}
			if lo, hi, ok := schema.Range(f.Tag); ok {
				v.within(val.Field(i), lo, hi, child, f.Tag.Get("doc"))
				continue
			}
			v.tags(val.Field(i), child)
		}
	}
}

func (v *validator) enum(got string, allowed []string, path string) {
	if got == "" || slices.Contains(allowed, got) {
		return
	}
	hint := diag.DidYouMean(got, allowed)
	if hint == "" {
		hint = "one of: " + strings.Join(allowed, ", ")
	}
	v.at(path, false, hint, "%s: %q is not one of %s", path, got, strings.Join(allowed, ", "))
}

// within checks a number, or every number of a list or map, against [lo, hi].
func (v *validator) within(val reflect.Value, lo, hi float64, path, doc string) {
	var x float64
	switch val.Kind() {
	case reflect.Pointer:
		if !val.IsNil() { // an optional number: bounded when it is written
			v.within(val.Elem(), lo, hi, path, doc)
		}
		return
	case reflect.Slice:
		for i := range val.Len() {
			v.within(val.Index(i), lo, hi, indexPath(path, i), doc)
		}
		return
	case reflect.Map:
		for _, k := range val.MapKeys() {
			v.within(val.MapIndex(k), lo, hi, join(path, k.String()), doc)
		}
		return
	case reflect.Int, reflect.Int64, reflect.Int32:
		x = float64(val.Int())
	case reflect.Float64, reflect.Float32:
		x = val.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			v.at(path, false, "write a finite number", "%s must be a finite number, got %v", path, x)
			return
		}
	default:
		panic(fmt.Sprintf("load: range tag on %s, a %s", path, val.Kind())) // a programming error in the types
	}
	if x < lo || x > hi {
		v.at(path, false, doc, "%s must be between %s and %s, got %v", path, schema.FormatBound(lo), schema.FormatBound(hi), val.Interface())
	}
}

// maxConcurrency is the upper bound of cells[].concurrencies, read from its range tag.
var maxConcurrency = func() float64 {
	f, _ := reflect.TypeFor[schema.Cell]().FieldByName("Concurrencies")
	_, hi, _ := schema.Range(f.Tag)
	return hi
}()

// requests bounds the requests a cell's points send: requests_per_point resolved at the
// cell's largest point (the default is 3 × the concurrency, a rate's cap, or a rate without a
// cap rounded up: schema.Load.CountBase), plus warm-up.
func (v *validator) requests(cell *schema.Cell, p string) {
	if a := cell.RequestsPerPoint.Auto; a != nil {
		v.auto(cell, *a, p+".requests_per_point.auto")
		return
	}
	var top schema.Load
	for _, l := range cell.Loads() {
		if l.IsRate() && l.Cap == 0 && schema.CheckRate(l.Rate) != nil {
			continue // an uncapped rate out of its range counts nothing (reported there)
		}
		if l.CountBase() > top.CountBase() {
			top = l
		}
	}
	if top.IsZero() || float64(top.CountBase()) > maxConcurrency {
		return // no points, or the point itself is out of range (reported there)
	}
	if n := cell.RequestsPerPoint.For(top.CountBase()); n > schema.MaxRequestsPerPoint {
		form := cell.RequestsPerPoint.String()
		if form == "" {
			form = "the default 3x"
		}
		v.at(p+".requests_per_point", true, "lower requests_per_point or the concurrency: a point's requests are held in memory",
			"cell %s sends %d requests at %s (%s); a point sends at most %d", cell.ID, n, top.Label(), form, schema.MaxRequestsPerPoint)
	}
}

// autoHints says how to fix each field of an auto spec.
var autoHints = map[string]string{
	"rel_ci": "rel_ci: 0.02 asks for a 95 % interval within ±2 % of the estimate",
	"min":    "min is the fewest requests a point sends, at most max",
	"max":    "max caps the requests of a point (default max(2000, 100 × concurrency))",
}

// auto checks requests_per_point: {auto: {...}}, each problem at its key.
func (v *validator) auto(cell *schema.Cell, a schema.AutoCount, p string) {
	problems := a.Problems()
	for _, field := range []string{"metric", "rel_ci", "min", "max"} {
		msg, ok := problems[field]
		if !ok {
			continue
		}
		hint := autoHints[field]
		switch {
		case a.Decide != "" && (field == "metric" || field == "rel_ci"):
			hint = "drop metric and rel_ci to stop when the SLO's verdict is known, or drop decide to stop at a precision"
		case field == "metric":
			hint = diag.DidYouMean(a.Metric, schema.AutoMetrics)
			if hint == "" {
				hint = "one of " + strings.Join(schema.AutoMetrics, ", ")
			}
		}
		path, keyPos := p+"."+field, true
		if _, present := v.d.keys[path]; !present {
			path = p // a missing key: point at auto itself
		}
		v.at(path, keyPos, hint, "cell %s: %s", cell.ID, msg)
	}
}

// slo places what is wrong with a cell's slo: at the target that is not positive, or at slo
// itself when it sets none.
func (v *validator) slo(cell *schema.Cell, p string) {
	if cell.SLO == nil || v.bad(p+".slo") {
		return
	}
	problems := cell.SLO.Problems()
	for _, t := range cell.SLO.Targets() {
		if t.Ms < 0 {
			delete(problems, t.Key) // its range tag said so already
		}
	}
	if v.d.unknown[p+".slo"] {
		delete(problems, "") // a misspelt target is the one mistake, already reported
	}
	for _, key := range []string{schema.SLOTTFT, schema.SLOTPOT, schema.SLOLatency, ""} {
		msg, ok := problems[key]
		if !ok {
			continue
		}
		path, keyPos := p+".slo", key == ""
		if key != "" {
			path += "." + key
		}
		v.at(path, keyPos, "slo: {ttft_ms: 2000, tpot_ms: 50, latency_ms: 30000} (any of them, each in milliseconds above 0)", "cell %s: %s", cell.ID, msg)
	}
}

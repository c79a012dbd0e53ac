package report

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// FormatNumber formats a nullable value exactly as the report prints it, so other outputs
// (summaries, tests) can quote the same figures.
func FormatNumber(v *float64) string { return num(v) }

// num formats a nullable value with a precision that suits its size; nil is "n/a".
func num(v *float64) string {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return "n/a"
	}
	return fnum(*v)
}

// fnum formats a value: no decimals from 100 up, one from 10, two below; thousands separated.
func fnum(x float64) string {
	a := math.Abs(x)
	switch {
	case a >= 100:
		return group(strconv.FormatFloat(x, 'f', 0, 64))
	case a >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
}

// stated formats a value the campaign or an input file states (an SLO, a pause, bytes per
// parameter): its shortest decimal when that is short (12.5, 0.5625), otherwise as the tables
// print figures, so floating-point noise (41.115097500000005) never reaches a page.
func stated(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if sig := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(s), "0"); len(sig) <= 6 {
		return s
	}
	return fnum(x)
}

// big formats large counts compactly: 12.35M, 456.7k.
func big(v *float64) string {
	if v == nil {
		return "n/a"
	}
	a := math.Abs(*v)
	switch {
	case a >= 1e9:
		return strconv.FormatFloat(*v/1e9, 'f', 2, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(*v/1e6, 'f', 2, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(*v/1e3, 'f', 1, 64) + "k"
	}
	return fnum(*v)
}

// pct formats a 0–1 ratio as a percentage.
func pct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v*100, 'f', 1, 64) + " %"
}

// attainment formats an SLO attainment as a percentage with as many decimals as it takes not to
// round a miss away: 0.9996 is "99.96 %", never "100.0 %".
func attainment(v *float64) string {
	if v == nil {
		return "n/a"
	}
	for prec := 1; prec < 4; prec++ {
		s := strconv.FormatFloat(*v*100, 'f', prec, 64)
		if *v >= 1 || s != strconv.FormatFloat(100, 'f', prec, 64) {
			return s + " %"
		}
	}
	return strconv.FormatFloat(*v*100, 'f', 4, 64) + " %"
}

// pctOf formats a value that is already a percentage.
func pctOf(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v, 'f', 1, 64) + " %"
}

func usd(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return "$" + strconv.FormatFloat(*v, 'f', 2, 64)
}

// group inserts thousands separators into an integer string.
func group(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if len(s) <= 3 {
		if neg {
			return "-" + s
		}
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// ints joins integers: "1, 8, 32".
func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// distinct returns the sorted distinct non-empty strings.
func distinct(xs []string) []string {
	var out []string
	for _, x := range xs {
		if x != "" && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// verb is the verb form that agrees with a count: verb(1, "is", "are") = "is".
func verb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// mean averages the non-nil values; nil when there are none.
func mean(vs []*float64) *float64 {
	s, n := 0.0, 0
	for _, v := range vs {
		if v != nil && !math.IsNaN(*v) {
			s += *v
			n++
		}
	}
	if n == 0 {
		return nil
	}
	m := s / float64(n)
	return &m
}

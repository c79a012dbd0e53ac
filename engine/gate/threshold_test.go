package gate

import (
	"reflect"
	"testing"
)

// Thresholds splits a rule's top-level conjunction into the clauses a chart can draw (a
// variable against a number, read with the variable on the left) and the rest, in order.
func TestThresholds(t *testing.T) {
	for _, tc := range []struct {
		rule string
		want []Threshold
		rest []string
	}{
		{"ttft_p50_ms <= 250 && itl_avg_ms < 6.5 and error_count == 0", []Threshold{
			{Clause: "ttft_p50_ms <= 250", Name: "ttft_p50_ms", Op: "<=", Limit: 250},
			{Clause: "itl_avg_ms < 6.5", Name: "itl_avg_ms", Op: "<", Limit: 6.5},
			{Clause: "error_count == 0", Name: "error_count", Op: "==", Limit: 0}}, nil},
		// a constant on the left is read from the variable's side
		{"250 >= ttft_p50_ms", []Threshold{{Clause: "250 >= ttft_p50_ms", Name: "ttft_p50_ms", Op: "<=", Limit: 250}}, nil},
		{"delta > -1.5", []Threshold{{Clause: "delta > -1.5", Name: "delta", Op: ">", Limit: -1.5}}, nil},
		// a chained comparison is two clauses
		{"1 < itl_avg_ms < 5", []Threshold{
			{Clause: "1 < itl_avg_ms", Name: "itl_avg_ms", Op: ">", Limit: 1},
			{Clause: "itl_avg_ms < 5", Name: "itl_avg_ms", Op: "<", Limit: 5}}, nil},
		// what is not a variable against a number is left for the reader, in order
		{"(ttft_p50_ms < 100 || itl_avg_ms < 5) && ttft_p50_ms < 2 * itl_avg_ms && status == \"ok\" && error_count != 0",
			nil, []string{"ttft_p50_ms < 100 || itl_avg_ms < 5", "ttft_p50_ms < 2 * itl_avg_ms", `status == "ok"`, "error_count != 0"}},
	} {
		got, rest, err := Thresholds(tc.rule)
		if err != nil {
			t.Fatalf("%s: %v", tc.rule, err)
		}
		if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(rest, tc.rest) {
			t.Errorf("Thresholds(%q) =\n %#v, %q\nwant\n %#v, %q", tc.rule, got, rest, tc.want, tc.rest)
		}
	}
	if _, _, err := Thresholds("((("); err == nil {
		t.Error("an unparsable rule gave no error")
	}
}

func TestThresholdHolds(t *testing.T) {
	for _, tc := range []struct {
		op   string
		v    float64
		want bool
	}{{"<", 5, false}, {"<", 4.9, true}, {"<=", 5, true}, {">", 5, false}, {">=", 5, true}, {"==", 5, true}, {"==", 5.1, false}, {"!=", 1, false}} {
		if got := (Threshold{Op: tc.op, Limit: 5}).Holds(tc.v); got != tc.want {
			t.Errorf("%g %s 5 = %v, want %v", tc.v, tc.op, got, tc.want)
		}
	}
}

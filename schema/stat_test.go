package schema

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// An unstated statistic is written as null and read back as unstated; a Stat with every
// statistic stated encodes as its plain fields always did.
func TestStatUnstatedJSON(t *testing.T) {
	s := Stat{Unit: "ms", Count: 8, Avg: 50.29, P50: 47.5, P90: 68, P99: 70.28, Std: 14.78, Min: 3}
	plain, err := json.Marshal(statPlain(s))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(plain) {
		t.Errorf("a fully stated Stat encodes as %s, want its plain fields %s", b, plain)
	}

	s.Unstate("p90", "min", "max")
	if s.P90 != 0 || s.Min != 0 || s.Stated("p90") || !s.Stated("p99") || !slices.Equal(s.Unstated(), []string{"min", "max", "p90"}) {
		t.Errorf("after Unstate: %+v, unstated %v", s, s.Unstated())
	}
	if v, ok := s.Value("p99"); !ok || v != 70.28 {
		t.Errorf("Value(p99) = %v, %v", v, ok)
	}
	if _, ok := s.Value("p90"); ok {
		t.Error("Value(p90) stated")
	}
	b, err = json.Marshal(&Point{TTFT: &s})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"p90":null`, `"min":null`, `"max":null`, `"p99":70.28`, `"p50":47.5`, `"p1":0`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("point JSON lacks %s: %s", want, b)
		}
	}
	var back Point
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*back.TTFT, s) {
		t.Errorf("read back %+v (unstated %v), want %+v (unstated %v)", *back.TTFT, back.TTFT.Unstated(), s, s.Unstated())
	}
	var nilStat *Stat
	if nilStat.Stated("avg") {
		t.Error("a nil Stat states its avg")
	}
}

// Set states a statistic again (value and mark); UnstateAll leaves none stated; a name that
// is not a statistic panics.
func TestStatSet(t *testing.T) {
	s := Stat{Unit: "ms", Count: 3, Avg: 2, P90: 9}
	s.UnstateAll()
	if got := s.Unstated(); len(got) != len(statNames) || s.Avg != 0 || s.P90 != 0 {
		t.Fatalf("after UnstateAll: %+v, unstated %v", s, got)
	}
	s.Set("p90", 68)
	s.Set("std", 0)
	if v, ok := s.Value("p90"); !ok || v != 68 || s.P90 != 68 {
		t.Errorf("Value(p90) after Set = %v, %v (field %v)", v, ok, s.P90)
	}
	if !s.Stated("std") || s.Stated("avg") || len(s.Unstated()) != len(statNames)-2 {
		t.Errorf("after Set(p90), Set(std): unstated %v", s.Unstated())
	}
	defer func() {
		if recover() == nil {
			t.Error("Set(p42) did not panic")
		}
	}()
	s.Set("p42", 1)
}

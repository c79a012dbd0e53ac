package load

import (
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

// A cell's rates are open-loop points: a valid list compiles to rate loads capped by
// max_in_flight beside the concurrencies; every mistake in the list is one problem at its
// key's line:col with a hint.
func TestRatesValidate(t *testing.T) {
	src := func(cell string) string {
		return "version: 1\ncampaign: c\nendpoints:\n  main: {url: \"sim://\", model: m}\ncells:\n  - id: a\n" + cell
	}
	tests := []struct {
		name, cell string
		line, col  int
		msg, hint  string
		want       []schema.Load
	}{
		{name: "rates with a cap", cell: "    workload: {shape: aa-1k}\n    concurrencies: [1]\n    rates: [0.5, 2, 12.5]\n    max_in_flight: 64\n",
			want: []schema.Load{schema.Conc(1), schema.RateAt(0.5, 64), schema.RateAt(2, 64), schema.RateAt(12.5, 64)}},
		{name: "rates without a cap", cell: "    workload: {shape: aa-1k, arrival: gamma, burstiness: 0.5}\n    rates: [4]\n",
			want: []schema.Load{schema.RateAt(4, 0)}},
		{name: "older spelling", cell: "    workload: {shape: aa-1k, request_rate: 20}\n    concurrencies: [2, 8]\n",
			want: []schema.Load{schema.RateAt(20, 2), schema.RateAt(20, 8)}},
		{name: "repeated rate", cell: "    workload: {shape: aa-1k}\n    rates: [1, 2, 1]\n", line: 8, col: 19,
			msg: "rate 1 appears twice", hint: "list it once"},
		{name: "float noise", cell: "    workload: {shape: aa-1k}\n    rates: [0.30000000000000004]\n", line: 8, col: 13,
			msg: "at most 6 significant digits", hint: "requests per second"},
		{name: "negative rate", cell: "    workload: {shape: aa-1k}\n    rates: [-2]\n", line: 8, col: 13,
			msg: "must be between 0 and 100000"},
		{name: "zero rate", cell: "    workload: {shape: aa-1k}\n    rates: [0]\n", line: 8, col: 13,
			msg: "want a positive number of requests per second"},
		{name: "cap without rates", cell: "    workload: {shape: aa-1k}\n    concurrencies: [4]\n    max_in_flight: 8\n", line: 9, col: 20,
			msg: "max_in_flight caps rate points and the cell has no rates", hint: "rates: [1, 2, 4]"},
		{name: "both spellings", cell: "    workload: {shape: aa-1k, request_rate: 2}\n    rates: [1]\n", line: 7, col: 44,
			msg: "has both workload.request_rate", hint: "move the rate into rates:"},
		{name: "gamma without its shape", cell: "    workload: {shape: aa-1k, arrival: gamma}\n    rates: [1]\n", line: 7, col: 39,
			msg: "arrival gamma needs its shape", hint: "burstiness: 1 is poisson"},
		{name: "burstiness without gamma", cell: "    workload: {shape: aa-1k, burstiness: 2}\n    rates: [1]\n", line: 7, col: 42,
			msg: "burstiness shapes gamma arrivals", hint: "arrival: gamma"},
		{name: "no points", cell: "    workload: {shape: aa-1k}\n", line: 6, col: 7,
			msg: "has no concurrencies and no rates", hint: "rates: [0.5, 1, 2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, l := loadSrc(t, "rates.yaml", src(tt.cell), nil)
			if tt.want != nil {
				if l != nil {
					t.Fatalf("want valid, got %v", l)
				}
				if got := c.Spec.Cells[0].Loads(); !slices.Equal(got, tt.want) {
					t.Fatalf("loads %v, want %v", got, tt.want)
				}
				return
			}
			if len(l) != 1 {
				t.Fatalf("want one problem, got %v", l)
			}
			d := l[0]
			if d.Line != tt.line || d.Col != tt.col || !strings.Contains(d.Message, tt.msg) || !strings.Contains(d.Hint, tt.hint) {
				t.Errorf("got %d:%d %q (hint %q), want %d:%d %q (hint %q)", d.Line, d.Col, d.Message, d.Hint, tt.line, tt.col, tt.msg, tt.hint)
			}
		})
	}
}

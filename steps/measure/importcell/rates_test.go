package importcell

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/benchfile"
)

// rateRuns writes an SGLang JSONL of the sample run at each (request_rate, max_concurrency):
// "" keeps the sample's Infinity.
func rateRuns(t *testing.T, loads [][2]string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(samples, "sglang-c4.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var all string
	for _, l := range loads {
		s := string(b)
		if l[0] != "" {
			s = strings.Replace(s, `"request_rate": Infinity`, `"request_rate": `+l[0], 1)
		}
		all += strings.Replace(s, `"max_concurrency": 4`, `"max_concurrency": `+l[1], 1)
	}
	f := filepath.Join(t.TempDir(), "rates.jsonl")
	if err := os.WriteFile(f, []byte(all), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// SGLang runs with a request rate become the cell's rates, their shared max concurrency its
// max_in_flight, beside the closed-loop run's concurrency; the YAML names each point by what
// it measured, and the import step's check accepts the cell.
func TestBuildRates(t *testing.T) {
	f := rateRuns(t, [][2]string{{"4", "8"}, {"", "8"}, {"1", "8"}, {"2.5", "8"}})
	c, pts, err := Build([]string{f}, Options{Cell: "sg-rates", BaseDir: filepath.Dir(f)})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Concurrencies) != 1 || c.Concurrencies[0] != 8 || len(c.Rates) != 3 || c.Rates[0] != 1 || c.Rates[1] != 2.5 || c.Rates[2] != 4 || c.MaxInFlight != 8 {
		t.Errorf("concurrencies %v rates %v max_in_flight %d; want [8], [1 2.5 4], 8", c.Concurrencies, c.Rates, c.MaxInFlight)
	}
	var keys []string
	for _, l := range c.Loads() {
		keys = append(keys, l.Key()+"="+c.ImportPath(l))
	}
	if got, want := strings.Join(keys, " "), "c8=rates.jsonl r1-cap8=rates.jsonl r2.5-cap8=rates.jsonl r4-cap8=rates.jsonl"; got != want {
		t.Errorf("points %s, want %s", got, want)
	}
	if len(pts) != 4 || pts[1].Result.Load != schema.RateAt(1, 8) {
		t.Errorf("points %+v", pts)
	}
	y, err := Snippet([]schema.Cell{c}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"concurrencies: [8]", "rates: [1, 2.5, 4]", "max_in_flight: 8", "- concurrency: 8\n", "- rate: 2.5\n"} {
		if !strings.Contains(string(y), want) {
			t.Errorf("YAML lacks %q:\n%s", want, y)
		}
	}
	if n := StatsNotes(pts); len(n) != 1 || !strings.HasPrefix(n[0], "c8, r1-cap8, r2.5-cap8, r4-cap8: aggregate stats") {
		t.Errorf("stats notes %q", n)
	}
}

// A cell's rates share one cap: runs at two max concurrencies are refused at the later one,
// saying to import them as two cells.
func TestBuildRatesOneCap(t *testing.T) {
	f := rateRuns(t, [][2]string{{"1", "8"}, {"2", "16"}})
	_, _, err := Build([]string{f}, Options{Cell: "x"})
	var be *benchfile.Error
	if !errors.As(err, &be) || be.Line != 2 || be.Field != "max_concurrency" || !strings.Contains(be.Msg, "a cell's rates share one max_in_flight") {
		t.Errorf("err %v, want line 2 max_concurrency: a cell's rates share one max_in_flight", err)
	}
}

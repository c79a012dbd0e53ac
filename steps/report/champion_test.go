package report_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/report/smoke"
)

// TestChampionSeparation reads the champion page back: focus values print ± their interval's
// half-width, and the top two arms' separation is said under the table once (not again among
// the warnings).
func TestChampionSeparation(t *testing.T) {
	in, err := smoke.Input()
	if err != nil {
		t.Fatal(err)
	}
	c := *in.Champion
	c.Arms = append([]schema.ChampionArm(nil), c.Arms...)
	if len(c.Arms) < 2 {
		t.Fatalf("smoke champion has %d arms, want ≥ 2", len(c.Arms))
	}
	for i, hw := range []float64{60, 70} {
		v := *c.Arms[i].FocusValue
		c.Arms[i].FocusInterval = &schema.Interval{Lo: v - hw, Hi: v + hw, Method: "batch-means", N: 10}
	}
	no := false
	c.Separated, c.SeparationNote = &no, "top two not separated: a 990.0 ±60.0 vs b 900.0 ±70.0: difference +90.0 ±92.2 includes 0"
	c.Warnings = append(c.Warnings, c.SeparationNote)
	in.Champion = &c
	out := filepath.Join(t.TempDir(), "champion.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	mustContain(t, text, report.FormatNumber(c.Arms[0].FocusValue)+" ±60.0", "Separation: top two not separated: a 990.0 ±60.0 vs b 900.0 ±70.0")
	if n := strings.Count(text, "top two not separated"); n != 1 {
		t.Errorf("separation note printed %d times, want once", n)
	}
}

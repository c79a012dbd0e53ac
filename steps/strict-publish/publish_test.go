package strictpublish_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/lake"
	strictpublish "github.com/perfdag/perfdag/steps/strict-publish"
	"github.com/perfdag/perfdag/steps/testkit/campaigntest"
	"github.com/perfdag/perfdag/steps/testkit/fixture"
	"github.com/perfdag/perfdag/steps/testkit/laketest"
)

func registry(t testing.TB) *engine.Registry {
	t.Helper()
	r, err := engine.NewRegistry(strictpublish.Kind, fixture.Kind)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func noEnv(string) (string, bool) { return "", false }

// fixture is a written campaign directory and its loaded campaign file.
type campaignFixture struct {
	dir, base string
	spec      *schema.Campaign
	finished  campaigndir.Finished
}

func newFixture(t *testing.T, c campaigntest.Campaign) campaignFixture {
	t.Helper()
	base := t.TempDir()
	f := campaigntest.Write(t, t.TempDir(), base, c)
	loaded, err := load.Bytes("campaign.yaml", base, []byte(c.YAML()), registry(t), load.Options{Lookup: noEnv})
	if err != nil {
		t.Fatalf("load:\n%s\n%v", c.YAML(), err)
	}
	return campaignFixture{dir: f.Dir, base: base, spec: loaded.Spec, finished: f}
}

func (f campaignFixture) publish(t *testing.T, strict *bool) (*strictpublish.Outcome, error) {
	t.Helper()
	return strictpublish.Publish(context.Background(), strictpublish.Request{Dir: f.dir, Files: f.finished.Files,
		Evidence: f.finished.Evidence, BaseDir: f.base, Campaign: f.spec, Strict: strict})
}

// campaignRow reads the campaign_v1 row back from the lake.
func campaignRow(t *testing.T, url, base, id string) (strict bool, rigor string, gaps []string) {
	t.Helper()
	l, err := lake.Open(context.Background(), url, base)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	rows, err := l.Read(context.Background(), lake.CampaignTable, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("campaign_v1 holds %d rows for %s, want 1", len(rows), id)
	}
	tb, _ := lake.TableNamed(lake.CampaignTable)
	for i, c := range tb.Columns {
		switch c.Name {
		case "strict":
			strict = rows[0][i].(bool)
		case "sol_rigor":
			rigor = rows[0][i].(string)
		case "gaps":
			if rows[0][i] != nil {
				if err := json.Unmarshal([]byte(rows[0][i].(string)), &gaps); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return strict, rigor, gaps
}

func gateIDs(gaps []string) []string {
	var out []string
	for _, g := range gaps {
		id, _, _ := strings.Cut(g, ": ")
		out = append(out, id)
	}
	return out
}

var (
	good     = laketest.Spec{Campaign: "kimi", Cells: 3, Concs: 3, Grounded: true, Roofline: true}
	noStrict = false
)

func TestStrictGates(t *testing.T) {
	tests := []struct {
		name    string
		c       campaigntest.Campaign
		strict  *bool
		refused []string // failed gate ids when refused
		gaps    []string // gap ids (text before ": ") when published
	}{
		{name: "grounded throughput campaign with a roofline page publishes", c: campaigntest.Campaign{Spec: good}},
		{name: "ungrounded campaign is refused", refused: []string{"dcgm-grounded"},
			c: campaigntest.Campaign{Spec: laketest.Spec{Campaign: "kimi", Cells: 3, Concs: 3, Roofline: true}}},
		{name: "throughput campaign without roofline rows is refused", refused: []string{"roofline-page"},
			c: campaigntest.Campaign{Spec: laketest.Spec{Campaign: "kimi", Cells: 3, Concs: 3, Grounded: true}}},
		{name: "mixed campaign without roofline rows is refused", refused: []string{"roofline-page"},
			c: campaigntest.Campaign{Kind: "mixed", Spec: laketest.Spec{Campaign: "kimi", Cells: 2, Concs: 2, Grounded: true}}},
		{name: "latency campaign needs no roofline page",
			c: campaigntest.Campaign{Kind: "latency", Spec: laketest.Spec{Campaign: "kimi", Cells: 2, Concs: 2, Grounded: true}}},
		{name: "both gaps refuse together", refused: []string{"dcgm-grounded", "roofline-page"},
			c: campaigntest.Campaign{Spec: laketest.Spec{Campaign: "kimi", Cells: 2, Concs: 2}}},
		{name: "no-strict publishes and records both gaps", strict: &noStrict, gaps: []string{"dcgm-grounded", "roofline-page"},
			c: campaigntest.Campaign{Spec: laketest.Spec{Campaign: "kimi", Cells: 2, Concs: 2}}},
		{name: "publish.strict false does the same", gaps: []string{"dcgm-grounded", "roofline-page"},
			c: campaigntest.Campaign{Publish: "  strict: false\n", Spec: laketest.Spec{Campaign: "kimi", Cells: 2, Concs: 2}}},
		{name: "steady-window undercount is refused", refused: []string{"steady-window"},
			c: campaigntest.Campaign{Spec: laketest.Spec{Campaign: "kimi", Cells: 3, Concs: 3, Grounded: true, Roofline: true, Undercount: true}}},
		{name: "acknowledged undercount publishes and is recorded", gaps: []string{"acknowledged steady_window_undercount"},
			c: campaigntest.Campaign{Publish: "  acknowledge: [steady_window_undercount]\n",
				Spec: laketest.Spec{Campaign: "kimi", Cells: 3, Concs: 3, Grounded: true, Roofline: true, Undercount: true}}},
		{name: "a default gate downgraded to warn is a gap, not a refusal", gaps: []string{"roofline-page"},
			c: campaigntest.Campaign{Publish: "  gates:\n    - {id: roofline-page, severity: warn}\n",
				Spec: laketest.Spec{Campaign: "kimi", Cells: 2, Concs: 2, Grounded: true}}},
		{name: "a default gate's rule replaced", c: campaigntest.Campaign{
			Publish: "  gates:\n    - {id: dcgm-grounded, rule: 'sol_rigor in [\"L1\", \"L2\", \"L3\", \"L4\"]'}\n",
			Spec:    laketest.Spec{Campaign: "kimi", Cells: 2, Concs: 2, Roofline: true}}},
		{name: "an added gate refuses", refused: []string{"no-failed-cells"}, c: campaigntest.Campaign{
			Publish: "  gates:\n    - {id: no-failed-cells, rule: failed_cells == 0, message: a cell failed}\n",
			Spec:    laketest.Spec{Campaign: "kimi", Cells: 2, Concs: 2, Grounded: true, Roofline: true, FailedCell: true}}},
		{name: "a campaign without plot-ready points is not grounded", refused: []string{"dcgm-grounded"},
			c: campaigntest.Campaign{Spec: laketest.Spec{Campaign: "kimi", Concs: 2, FailedCell: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.c)
			out, err := f.publish(t, tt.strict)
			lakeFile := filepath.Join(f.base, "lake.db")
			if tt.refused != nil {
				var ref *engine.Refusal
				if !errors.As(err, &ref) {
					t.Fatalf("Publish = %v, want a refusal of %v", err, tt.refused)
				}
				if !reflect.DeepEqual(out.Result.FailedGates, tt.refused) || !out.Result.Refused || out.Result.Published {
					t.Errorf("failed gates %v (refused %t), want %v", out.Result.FailedGates, out.Result.Refused, tt.refused)
				}
				for _, id := range tt.refused {
					if !strings.Contains(err.Error(), id+": ") {
						t.Errorf("refusal %q does not name gate %s", err, id)
					}
				}
				if !strings.Contains(err.Error(), "--no-strict") {
					t.Errorf("refusal %q does not say how to publish anyway", err)
				}
				for _, p := range []string{campaigndir.Abs(f.dir, campaigndir.Receipt()), lakeFile} {
					if _, err := os.Stat(p); err == nil {
						t.Errorf("a refused publish wrote %s", p)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Publish: %v", err)
			}
			if !out.Result.Published || out.Receipt == nil {
				t.Fatalf("not published: %+v", out.Result)
			}
			strict, _, gaps := campaignRow(t, "sqlite://lake.db", f.base, campaigntest.Campaign(tt.c).ID())
			if got := gateIDs(gaps); !reflect.DeepEqual(got, tt.gaps) {
				t.Errorf("campaign_v1.gaps = %q, want gates %v", gaps, tt.gaps)
			}
			if !reflect.DeepEqual(gaps, out.Receipt.Gaps) {
				t.Errorf("receipt gaps %q differ from the campaign_v1 row's %q", out.Receipt.Gaps, gaps)
			}
			if want := tt.strict == nil && !strings.Contains(tt.c.Publish, "strict: false"); strict != want {
				t.Errorf("campaign_v1.strict = %t, want %t", strict, want)
			}
		})
	}
}

// TestNoStrictRecordsGapsAndRigor: an ungrounded throughput campaign without roofline rows,
// published with --no-strict, lands with both gaps in words and its sol_rigor (L1).
func TestNoStrictRecordsGapsAndRigor(t *testing.T) {
	f := newFixture(t, campaigntest.Campaign{Spec: laketest.Spec{Campaign: "kimi", Cells: 4, Concs: 3}})
	out, err := f.publish(t, &noStrict)
	if err != nil {
		t.Fatal(err)
	}
	strict, rigor, gaps := campaignRow(t, "sqlite://lake.db", f.base, "20261202T130455Z-kimi")
	if strict || rigor != "L1" {
		t.Errorf("campaign_v1 strict %t sol_rigor %q, want false and L1", strict, rigor)
	}
	// 4 cells × 3 concurrencies = 12 plot-ready points, none grounded.
	want := []string{
		"dcgm-grounded: not DCGM-grounded: 0 of 12 plot-ready points are byte-grounded (sol_rigor L1); run dcgm-correlate for every cell (or import a roofline sweep with in-pod DCGM)",
		"roofline-page: a throughput campaign with 12 plot-ready points has no roofline page: import a prefill/decode sweep with roofline-import",
	}
	if !reflect.DeepEqual(gaps, want) {
		t.Errorf("gaps:\n%q\nwant\n%q", gaps, want)
	}
	rec := readReceipt(t, f.dir)
	if rec.Strict || rec.SolRigor != "L1" || rec.DCGMGrounded || !reflect.DeepEqual(rec.Gaps, want) {
		t.Errorf("receipt %+v", rec)
	}
	if len(rec.Gates) != 4 || rec.Gates[0].Passed || rec.Gates[1].Passed || !rec.Gates[2].Passed || !rec.Gates[3].Passed {
		t.Errorf("receipt gates %+v, want dcgm-grounded and roofline-page failed, steady-window and quality-gates passed", rec.Gates)
	}
	if out.Result.Strict || out.Result.RowsPublished == 0 {
		t.Errorf("result %+v", out.Result)
	}
}

func readReceipt(t *testing.T, dir string) schema.PublishReceipt {
	t.Helper()
	b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Receipt()))
	if err != nil {
		t.Fatal(err)
	}
	var rec schema.PublishReceipt
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestPublishTwiceThroughTheStep: the second publish replaces the first row for row; the
// receipt says how many rows each table got and how many it replaced.
func TestPublishTwiceThroughTheStep(t *testing.T) {
	spec := good
	spec.FailedCell, spec.Undercount = true, true
	f := newFixture(t, campaigntest.Campaign{Spec: spec, Champion: "arm-b", Publish: "  lake: sqlite://lakes/team.db\n  acknowledge: [steady_window_undercount]\n"})
	if _, err := f.publish(t, nil); err != nil {
		t.Fatal(err)
	}
	first := readReceipt(t, f.dir)
	if _, err := f.publish(t, nil); err != nil {
		t.Fatal(err)
	}
	second := readReceipt(t, f.dir)
	want := map[string]int{
		lake.AtlasTable: len(laketest.Atlas(spec)), lake.CampaignTable: 1, lake.TPMTable: len(laketest.TPM(spec).TPMRows()),
		lake.CostTable: len(laketest.TPM(spec).CostRows()), lake.RooflineTable: len(laketest.Roofline(spec)),
	}
	// 3 cells × 3 + failed cell × 3 + 8 roofline rows = 20 atlas rows.
	if want[lake.AtlasTable] != 20 {
		t.Fatalf("fixture changed: %v", want)
	}
	for i, tb := range second.Tables {
		if tb.Rows != want[tb.Table] || tb.Replaced != want[tb.Table] || first.Tables[i].Replaced != 0 {
			t.Errorf("%s: second publish %d rows replacing %d (first replaced %d), want %d", tb.Table, tb.Rows, tb.Replaced, first.Tables[i].Replaced, want[tb.Table])
		}
	}
	if second.Lake != "sqlite://"+filepath.Join(f.base, "lakes", "team.db") || second.Driver != "sqlite" {
		t.Errorf("receipt lake %q driver %q", second.Lake, second.Driver)
	}
	l, err := lake.Open(context.Background(), second.Lake, "")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	counts, err := l.Count(context.Background(), second.CampaignID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range counts {
		if c.Rows != want[c.Table] {
			t.Errorf("lake %s holds %d rows, want one copy: %d", c.Table, c.Rows, want[c.Table])
		}
	}
	rows, err := l.Read(context.Background(), lake.CampaignTable, second.CampaignID)
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := lake.TableNamed(lake.CampaignTable)
	for i, c := range tb.Columns {
		if c.Name == lake.ColChampion && rows[0][i] != "arm-b" {
			t.Errorf("campaign_v1.champion = %v, want arm-b from champion.json", rows[0][i])
		}
		if c.Name == "created" && rows[0][i] != "2026-12-02T13:04:55Z" {
			t.Errorf("campaign_v1.created = %v, want run.json's creation time", rows[0][i])
		}
	}
}

func TestCollect(t *testing.T) {
	spec := laketest.Spec{Campaign: "kimi", Cells: 4, Concs: 3, Roofline: true, Undercount: true, FailedCell: true}
	c := campaigntest.Campaign{Spec: spec, Champion: "arm-a", Publish: "  acknowledge: [steady_window_undercount]\n"}
	f := newFixture(t, c)
	f.spec.Cells = append(f.spec.Cells, schema.Cell{ID: "never-ran"})
	ev, err := strictpublish.Collect(context.Background(), f.finished.Files, f.finished.Evidence, f.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := laketest.TPM(spec)
	want := strictpublish.Facts{
		AtlasRows:  4*3 + 3 + 8, // measured + failed cell + 4 decode and 4 prefill roofline rows
		AtlasCells: 4 + 1 + 2, FullCells: 6, FailedCells: 1, MissingCells: 1,
		PlotReadyPoints:    4*3 + 4, // measured points and the decode sweep (prefill rows have no throughput)
		DCGMGroundedPoints: 4,       // only the roofline decode points carry DCGM
		DCGMGrounded:       false, SolRigor: "L1", RooflinePresent: true, RooflineRows: 8,
		UndercountCells: 1, Flags: []string{"steady_window_undercount"}, Acknowledged: []string{"steady_window_undercount"},
		TPMRows: len(sum.TPMRows()), CostRows: len(sum.CostRows()), ChampionPresent: true, Champion: "arm-a",
	}
	if !reflect.DeepEqual(ev.Facts, want) {
		t.Errorf("facts\n%+v\nwant\n%+v", ev.Facts, want)
	}
	if !slices.Equal(ev.MissingIDs, []string{"never-ran"}) || !slices.Equal(ev.FlaggedCells["steady_window_undercount"], []string{"cell-000"}) {
		t.Errorf("missing %v flagged %v", ev.MissingIDs, ev.FlaggedCells)
	}
	if _, err := strictpublish.Collect(context.Background(), campaigndir.Unrecorded(t.TempDir()), campaigndir.Evidence{}, f.spec, nil); err == nil || !strings.Contains(err.Error(), "aggregate") {
		t.Errorf("Collect without an atlas: %v, want an error saying to aggregate first", err)
	}
}

func TestCampaignID(t *testing.T) {
	named := campaigntest.Write(t, t.TempDir(), t.TempDir(), campaigntest.Campaign{Spec: laketest.Spec{Campaign: "kimi", Cells: 1, Concs: 1}}).Dir
	renamed := filepath.Join(t.TempDir(), "weekly")
	if err := os.Rename(named, renamed); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ dir, slug, want string }{
		{"/c/20261202T130455Z-kimi", "kimi", "20261202T130455Z-kimi"},
		{"/c/20261202T130455Z-kimi-2/", "kimi", "20261202T130455Z-kimi-2"},
		{renamed, "kimi", "20261202T130455Z-kimi"}, // --out weekly: run.json's creation time + slug
		{"/nowhere/weekly", "kimi", "weekly"},      // no run.json: the name is all there is
	}
	for _, tt := range tests {
		if got := strictpublish.CampaignID(tt.dir, tt.slug); got != tt.want {
			t.Errorf("CampaignID(%q, %q) = %q, want %q", tt.dir, tt.slug, got, tt.want)
		}
	}
}

// publishNode is the strict-publish node of a fixture run (after the fixture's evidence node).
func publishNode(sum *run.Summary) run.NodeResult {
	for _, n := range sum.Nodes {
		if n.Kind == strictpublish.Name {
			return n
		}
	}
	return run.NodeResult{}
}

package webui

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// view is a campaign as its pages read it: its status, its recorded files and its points.
type view struct {
	ID  string
	Dir string
	*campaign.Status
	Files  campaigndir.Reader
	Points []pointRef
}

// pointRef is one measured point and where its files are.
type pointRef struct {
	Node  string
	Load  schema.Load // the point, as its node names it
	Files campaigndir.PointFiles
}

// URL is the point's page: point/<cell>/<key> (c16, r2.5-cap64).
func (p pointRef) URL(id string) string {
	return campaignURL(id) + "point/" + url.PathEscape(p.Files.Cell) + "/" + url.PathEscape(p.Load.Key())
}

// view reads a campaign through the campaign service: status, recorded outputs, points.
// openView opens the request's campaign and reads its view, answering the request itself
// (not found, or the read's error) when it cannot.
func (s *Server) openView(w http.ResponseWriter, r *http.Request) (entry, *view, bool) {
	e, ok := s.open(w, r)
	if !ok {
		return e, nil, false
	}
	v, err := s.view(e)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return e, nil, false
	}
	return e, v, true
}

func (s *Server) view(e entry) (*view, error) {
	if err := checkFiles(e.Dir); err != nil {
		return nil, fmt.Errorf("campaign %s: %w", e.ID, err)
	}
	st, err := s.opts.Service.Status(e.Dir)
	if err != nil {
		return nil, fmt.Errorf("read campaign %s: %w", e.ID, err)
	}
	v := &view{ID: e.ID, Dir: e.Dir, Status: st, Files: st.Inspection.State.Files}
	for _, n := range st.Inspection.State.Nodes {
		if n.Record == nil || n.State != run.StateSucceeded {
			continue
		}
		res, err := st.Inspection.State.Result(n.Node)
		if err != nil {
			continue // a result this build cannot decode is shown in the node table, not as a point
		}
		if po, ok := res.(campaigndir.PointOutput); ok && po.PointFiles().Point != "" {
			f := po.PointFiles()
			l := schema.LoadOf(f.Load, f.Concurrency, 0)
			if pn, ok := st.Inspection.Compiled.Plan.Node(n.Node); ok && !pn.Load.IsZero() {
				l = pn.Load // a result written before points were keyed by load names only a concurrency
			}
			v.Points = append(v.Points, pointRef{Node: n.Node, Load: l, Files: f})
		}
	}
	sort.SliceStable(v.Points, func(i, j int) bool {
		a, b := v.Points[i], v.Points[j]
		if a.Files.Cell != b.Files.Cell {
			return a.Files.Cell < b.Files.Cell
		}
		return a.Load.Compare(b.Load) < 0
	})
	return v, nil
}

// readPoint reads a point's point.json as its step recorded it.
func (v *view) readPoint(p pointRef) (*schema.Point, error) {
	d, _ := v.Files.Digest(p.Files.Point)
	b, err := readServed(v.Dir, p.Files.Point, d)
	if err != nil {
		return nil, err
	}
	var pt schema.Point
	if err := campaigndir.DecodeStrict(p.Files.Point, b, &pt); err != nil {
		return nil, err
	}
	return &pt, nil
}

// link is an output the campaign page links to.
type link struct{ Name, URL string }

// outputs are the campaign's recorded results a person opens: the PDF, the atlas, the TPM
// rollup, the champion, the lake receipt, and the engine's SOURCE.md and summary.md.
func (v *view) outputs() []link {
	var out []link
	if v.Files.Has(campaigndir.Atlas()) {
		out = append(out, link{Name: "report (HTML)", URL: campaignURL(v.ID) + "report"})
	}
	for _, rel := range []string{campaigndir.Report(), campaigndir.Atlas(), campaigndir.TPMMarkdown(), campaigndir.TPMCSV(),
		campaigndir.Champion(), campaigndir.Receipt(), campaigndir.Verdict()} {
		if v.Files.Has(rel) {
			out = append(out, link{Name: rel, URL: campaignURL(v.ID) + "file/" + rel})
		}
	}
	if st, err := os.Lstat(filepath.Join(v.Dir, campaigndir.Verdict())); err == nil && st.Mode().IsRegular() {
		out = append(out, link{Name: "verdict and diff", URL: campaignURL(v.ID) + "verdict"}) // the scheduler's judgment
	}
	for _, abs := range []string{campaigndir.Source(v.Dir), campaigndir.Summary(v.Dir)} {
		if st, err := os.Lstat(abs); err == nil && st.Mode().IsRegular() { // as file serves it: no symlink
			out = append(out, link{Name: filepath.Base(abs), URL: campaignURL(v.ID) + "file/" + filepath.Base(abs)})
		}
	}
	return out
}

// campaign is a campaign's page: its node table (live), its points, its outputs.
func (s *Server) campaign(w http.ResponseWriter, r *http.Request) {
	e, v, ok := s.openView(w, r)
	if !ok {
		return
	}
	var points []pointRow
	for _, p := range v.Points {
		pt, err := v.readPoint(p)
		row := pointRow{Ref: p, URL: p.URL(v.ID)}
		if err != nil {
			row.Error = redact.String(err.Error())
		} else {
			row.Point = pt
		}
		points = append(points, row)
	}
	others := []string{}
	for _, o := range s.campaigns() {
		if o.ID != e.ID {
			others = append(others, o.ID)
		}
	}
	searches, cost, err := v.searches()
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	outs := v.outputs()
	for _, h := range s.histories() { // a scheduled run: its campaign's history, where its scheduler keeps it
		if parent := filepath.Dir(v.Dir); h.Campaign == v.Campaign && (filepath.Dir(h.State) == parent || h.State == parent) {
			outs = append(outs, link{Name: "history of " + h.Campaign, URL: historyURL(h.ID)})
		}
	}
	s.render(w, "campaign.html", map[string]any{
		"Searches": searches, "Cost": costLine(cost),
		"Title": v.Campaign, "V": v, "Outputs": outs, "Points": points, "Goodput": anyGoodput(points),
		"Scatter": scatterOf(points), "Groups": groups(v.ID, v.Nodes), "Others": others, "Baselines": baselineNames(s.opts.Registry),
		"Live": campaignURL(v.ID) + "live?from=" + strconv.FormatInt(v.EventsSize, 10),
	})
}

// pointRow is one point in the campaign page's table.
type pointRow struct {
	Ref   pointRef
	URL   string
	Point *schema.Point
	Error string
}

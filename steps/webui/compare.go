package webui

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/baseline"
)

// baselineNames are the registered baselines a campaign can be compared with.
func baselineNames(registry string) []string {
	if registry == "" {
		return nil
	}
	return baseline.Names(registry)
}

// diffView is one baseline diff as the comparison page shows it.
type diffView struct {
	Title string
	Diff  *schema.BaselineDiff
	Error string
}

// CurrentCellTitle names the cell a baseline diff compared.
func (d diffView) CurrentCellTitle() string { return d.Diff.CurrentCell }

// compare shows campaign b against campaign a (the baseline side), cell by cell: the `baseline
// diff` table of b's snapshot against a's, under the default tolerances.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ea, okA := s.lookup(q.Get("a"))
	eb, okB := s.lookup(q.Get("b"))
	if !okA || !okB {
		s.fail(w, http.StatusNotFound, fmt.Errorf("compare needs two served campaigns: a=%q b=%q", q.Get("a"), q.Get("b")))
		return
	}
	va, err := s.view(ea)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	vb, err := s.view(eb)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	fa, errA := va.Inspection.Finished()
	fb, errB := vb.Inspection.Finished()
	if err := errors.Join(errA, errB); err != nil {
		s.fail(w, http.StatusConflict, err)
		return
	}
	var diffs []diffView
	for _, cell := range commonCells(va, vb) {
		dv := diffView{Title: cell}
		base, err := baseline.Snapshot(r.Context(), fa, cell)
		if err == nil {
			var cur *schema.PerfBench
			if cur, err = baseline.Snapshot(r.Context(), fb, cell); err == nil {
				dv.Diff, err = baseline.Diff(base, cur, nil)
			}
		}
		if err != nil {
			dv.Error = redact.String(err.Error())
		}
		diffs = append(diffs, dv)
	}
	s.render(w, "compare.html", map[string]any{"Title": "compare", "A": va, "B": vb, "Diffs": diffs})
}

// commonCells are the measured cells both campaigns have, in a's order.
func commonCells(a, b *view) []string {
	var out []string
	for _, p := range a.Points {
		if slices.Contains(out, p.Files.Cell) {
			continue
		}
		for _, q := range b.Points {
			if q.Files.Cell == p.Files.Cell {
				out = append(out, p.Files.Cell)
				break
			}
		}
	}
	return out
}

// baseline shows a campaign against a registered baseline (?name=), as `perfdag baseline diff`
// does. Only names the registry lists are looked up: a name is never a path.
func (s *Server) baseline(w http.ResponseWriter, r *http.Request) {
	e, ok := s.open(w, r)
	if !ok {
		return
	}
	name := r.URL.Query().Get("name")
	if !slices.Contains(baselineNames(s.opts.Registry), name) {
		s.fail(w, http.StatusNotFound, fmt.Errorf("no baseline named %q in the registry %s", name, s.opts.Registry))
		return
	}
	v, err := s.view(e)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	dv := diffView{Title: "baseline " + name}
	entry, err := baseline.Resolve(s.opts.Registry, name)
	if err == nil {
		f, ferr := v.Inspection.Finished()
		if err = ferr; err == nil {
			dv.Diff, err = baseline.DiffDir(r.Context(), entry, f, r.URL.Query().Get("cell"), nil)
		}
	}
	if err != nil {
		dv.Error = redact.String(err.Error())
	} else {
		dv.Title = dv.CurrentCellTitle()
	}
	s.render(w, "compare.html", map[string]any{"Title": "baseline " + name, "B": v, "Baseline": name, "Diffs": []diffView{dv}})
}

package webui

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"

	"github.com/perfdag/perfdag/steps/render"
	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/report/svgchart"
)

// reportCSP is the policy of the HTML report: its own inline style sheet and the one tooltip
// script, allowed by hash (the report carries the same policy in a meta element), nothing else.
var reportCSP = func() string {
	sum := sha256.Sum256([]byte(svgchart.Script))
	return "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-" +
		base64.StdEncoding.EncodeToString(sum[:]) + "'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
}()

// report shows the campaign's report as `perfdag report DIR --html` writes it: the PDF's pages
// with interactive charts, built from the recorded results of a finished campaign (refused,
// naming why, while its results are stale or it has not been aggregated).
func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	e, v, ok := s.openView(w, r)
	if !ok {
		return
	}
	f, err := v.Inspection.Finished()
	if err != nil {
		s.fail(w, http.StatusConflict, err)
		return
	}
	in, err := render.Input(r.Context(), f.Files, f.Evidence, f.Spec, f.Verdicts)
	if err == nil && f.Evidence.Atlas == "" {
		err = fmt.Errorf("campaign %s has no atlas yet: its report comes once aggregate has run", e.ID)
	}
	var doc []byte
	if err == nil {
		doc, err = report.BuildHTML(r.Context(), in)
	}
	if err != nil {
		s.fail(w, http.StatusConflict, err)
		return
	}
	w.Header().Set("Content-Security-Policy", reportCSP)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(doc)
}

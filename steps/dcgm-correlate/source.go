package dcgmcorrelate

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/steps/telemetry/dcgm"
)

// openSource builds the step's DCGM source for its cell. The frozen file is validated whole
// (its errors name file:line:col and the field); exporter samples are read for every measured
// point, and a point without a samples file is counted and logged, not fatal: the cell is then
// simply not grounded.
func openSource(_ context.Context, t *engine.Task, p *Params, source string, points []Point, res *Result, log io.Writer) (dcgm.Source, error) {
	switch source {
	case SourceFrozen:
		return loadFrozen(t.BaseDir, p, t.Cell.ID)
	case SourcePrometheus:
		src := &dcgm.PrometheusSource{URL: p.URL, Host: p.Host, Matcher: p.Matcher}
		if p.BearerTokenEnv != "" {
			src.BearerToken = os.Getenv(p.BearerTokenEnv)
			redact.Secret(src.BearerToken)
			if src.BearerToken == "" {
				return nil, fmt.Errorf("with.bearer_token_env: environment variable %s is not set (export the Prometheus token there)", p.BearerTokenEnv)
			}
		}
		return src, nil
	case SourceExporter:
		var all []dcgm.GPUSample
		var missing []string
		exporter := "" // the address run-shape sampled (a sim:// endpoint's is only known then)
		for _, pt := range points {
			if !pt.Measured {
				continue
			}
			if pt.Files.DCGMSamples == "" {
				missing = append(missing, pt.Load.Key())
				continue
			}
			var doc dcgm.Samples
			if err := t.Files.JSON(pt.Files.DCGMSamples, &doc); err != nil {
				return nil, err
			}
			if err := doc.Check(pt.Files.DCGMSamples, t.Cell.ID, pt.Load); err != nil {
				return nil, err
			}
			if doc.Failures > 0 {
				fmt.Fprintf(log, "dcgm-correlate %s %s: %d of %s failed during the window\n", t.Cell.ID, pt.Load.Key(), doc.Failures, plural.N(doc.Failures+doc.Scrapes, "exporter fetch"))
			}
			all = append(all, doc.Samples...)
			exporter = cmp.Or(exporter, doc.Exporter)
		}
		res.MissingExporterFiles = len(missing)
		if len(missing) > 0 {
			fmt.Fprintf(log, "dcgm-correlate %s: no exporter samples for %s: those points stay ungrounded\n", t.Cell.ID, strings.Join(missing, ", "))
		}
		url := exporter
		if url == "" && t.Endpoint != nil {
			url = cmp.Or(t.Endpoint.DCGMURL, t.Endpoint.URL)
		}
		return &dcgm.ExporterSource{URL: url, Samples: all}, nil
	}
	return nil, fmt.Errorf("no DCGM source: write with.source (frozen, prometheus or exporter), or set the endpoint's dcgm_url")
}

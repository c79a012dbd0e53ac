package report

import (
	"context"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"
)

// artwork holds every chart of the report as a figure, built before the pages are assembled.
type artwork struct {
	// raster makes every figure's PNG (the PDF's); the HTML report draws the specs as SVG.
	raster  bool
	mu      sync.Mutex
	scatter map[int][2]*figure // by mbt: left, right pane
	legend  *figure

	tpm        *figure
	dcgm       [][2]*figure // tokens per watt and DRAM active: against concurrency, then against request rate
	dcgmLegend *figure
	roofA      *figure
	roofB      *figure
	spec       []*figure // acceptance length against concurrency, then against request rate
	frontier   []*figure // the searches' probes: over concurrency, then over request rate
	slo        []*figure // the SLO's clauses against load, one panel each
}

func (a *artwork) setScatter(mbt int, p [2]*figure) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.scatter[mbt] = p
}

func (a *artwork) scatterFor(mbt int) [2]*figure {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.scatter[mbt]
}

// job draws one or more charts into the artwork.
type job func() error

// drawCharts builds every chart concurrently, one worker per CPU, rasterising them when raster
// (for the PDF); chart drawing dominates the PDF's render time and each chart is independent.
func drawCharts(ctx context.Context, v *view, raster bool) (*artwork, error) {
	art := &artwork{raster: raster, scatter: map[int][2]*figure{}}
	var jobs []job
	jobs = append(jobs, scatterCharts(v, art)...)
	jobs = append(jobs, tpmCharts(v, art)...)
	jobs = append(jobs, dcgmCharts(v, art)...)
	jobs = append(jobs, rooflineCharts(v, art)...)
	jobs = append(jobs, specCharts(v, art)...)
	jobs = append(jobs, frontierCharts(v, art)...)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, runtime.GOMAXPROCS(0)))
	for _, j := range jobs {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			return j()
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return art, ctx.Err()
}

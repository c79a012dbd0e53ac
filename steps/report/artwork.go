package report

import (
	"context"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"
)

// artwork holds every chart PNG, drawn before the PDF is assembled.
type artwork struct {
	mu      sync.Mutex
	scatter map[int][2][]byte // by mbt: left, right pane
	legend  []byte
	legendH float64 // mm

	tpm         []byte
	dcgm        [2][]byte
	dcgmLegend  []byte
	dcgmLegendH float64
	roofA       []byte
	roofB       []byte
	spec        []byte
	frontier    []byte
}

func (a *artwork) setScatter(mbt int, p [2][]byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.scatter[mbt] = p
}

func (a *artwork) scatterFor(mbt int) [2][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.scatter[mbt]
}

// job draws one or more charts into the artwork.
type job func() error

// drawCharts renders every chart concurrently, one worker per CPU; chart drawing dominates the
// render time and each chart is independent.
func drawCharts(ctx context.Context, v *view) (*artwork, error) {
	art := &artwork{scatter: map[int][2][]byte{}}
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

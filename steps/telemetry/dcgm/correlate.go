package dcgm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perfdag/perfdag/schema"
)

// CorrelationSchema names the record Correlate produces (cells/<id>/dcgm_correlation.json).
const CorrelationSchema = "dcgm_correlation_v1"

// Sol rigor levels: L3 when every point is byte-grounded by DCGM, else the L1 proxy level.
const (
	RigorGrounded   = "L3"
	RigorUngrounded = "L1"
)

// ErrNoData says a source holds nothing for a point: the point is recorded with null fields
// (and the cell is not grounded) instead of failing the correlation.
var ErrNoData = errors.New("no DCGM data for this point")

// Window is one point's measurement window, from the run's first request start to its last end.
type Window struct {
	Load       schema.Load
	Start, End time.Time
}

// Source yields the DCGM window means of one point, averaged over GPUs; the frozen YAML, a
// Prometheus server and exporter samples all stand behind it.
type Source interface {
	Name() string   // frozen, prometheus or exporter (the record's source)
	Detail() string // file, URL and matcher, for source_detail; never a secret
	Point(ctx context.Context, w Window) (schema.DCGMPoint, error)
}

// Correlate reads every point's DCGM means from src and derives tokens per watt:
// output tok/s ÷ (power per GPU × GPUs), where power was captured and outputTokPerS has the
// point. gpus is the number of GPUs serving the endpoint (0: the number the source saw). The cell
// is DCGM-grounded (sol_rigor L3) when every point has DRAM activity and at least one of the
// NVLink or PCIe byte rates. A point the source has no data for is kept with null fields; any
// other source error fails the whole correlation, so nothing partial is returned.
func Correlate(ctx context.Context, src Source, points []Window, outputTokPerS map[schema.Load]float64, gpus int) (schema.DCGMCorrelation, error) {
	c := schema.DCGMCorrelation{
		Schema:       CorrelationSchema,
		Source:       src.Name(),
		SourceDetail: src.Detail(),
		Points:       make([]schema.DCGMPoint, 0, len(points)),
		DCGMGrounded: len(points) > 0,
	}
	for _, w := range points {
		if err := ctx.Err(); err != nil {
			return schema.DCGMCorrelation{}, fmt.Errorf("dcgm correlate: %w", err)
		}
		p, err := src.Point(ctx, w)
		switch {
		case errors.Is(err, ErrNoData):
			p = schema.DCGMPoint{}
		case err != nil:
			return schema.DCGMCorrelation{}, fmt.Errorf("dcgm correlate point %s from %s: %w", w.Load.Key(), src.Name(), err)
		}
		p.Concurrency = w.Load.InFlight()
		if w.Load.IsRate() {
			p.Load = w.Load // a closed-loop point keeps the form it had before points were keyed by load
		}
		p.StartNs, p.EndNs = unixNs(w.Start), unixNs(w.End)
		p.TokensPerWatt = tokensPerWatt(p, outputTokPerS, gpus)
		if p.DRAMActive == nil || (p.NVLinkBytesPerS == nil && p.PCIeBytesPerS == nil) {
			c.DCGMGrounded = false
		}
		c.Points = append(c.Points, p)
	}
	c.SolRigor = RigorUngrounded
	if c.DCGMGrounded {
		c.SolRigor = RigorGrounded
	}
	return c, nil
}

// tokensPerWatt is output tok/s over the power of all GPUs serving the endpoint; nil without
// power, without a throughput for the point, or without a GPU count.
func tokensPerWatt(p schema.DCGMPoint, outputTokPerS map[schema.Load]float64, gpus int) *float64 {
	tps, ok := outputTokPerS[p.PointLoad()]
	if !ok || p.PowerWattsPerGPU == nil || *p.PowerWattsPerGPU <= 0 {
		return nil
	}
	if gpus <= 0 {
		gpus = p.GPUs
	}
	if gpus <= 0 {
		return nil
	}
	v := tps / (*p.PowerWattsPerGPU * float64(gpus))
	return &v
}

func unixNs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

package dcgm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/telemetry/promscrape"
)

// Sampler polls a DCGM exporter during run windows and keeps timestamped per-GPU samples, the
// raw material of the exporter source. Set the exporter's collect interval (-c) near the polling
// interval: its default of 30 s leaves a short window with one fresh value or none.
type Sampler struct {
	poller *promscrape.Poller

	mu      sync.Mutex
	samples []GPUSample
}

// StartSampler begins polling url every interval, keeping the GPUs the filter selects, until
// Stop or ctx ends.
func StartSampler(ctx context.Context, f *promscrape.Fetcher, url string, every time.Duration, filter Filter) *Sampler {
	s := &Sampler{}
	s.poller = promscrape.StartPoller(ctx, f, url, every, func(sc *promscrape.Scrape) {
		got := FromScrape(sc, filter)
		s.mu.Lock()
		s.samples = append(s.samples, got...)
		s.mu.Unlock()
	})
	return s
}

// Stop ends polling and returns the samples in time order with the polling stats.
func (s *Sampler) Stop() ([]GPUSample, promscrape.PollStats) {
	st := s.poller.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]GPUSample(nil), s.samples...), st
}

// ExporterSource answers per-point means from exporter samples taken during the run.
type ExporterSource struct {
	URL     string // where the samples came from (shown redacted in source_detail)
	Samples []GPUSample
}

// Name is the record's source.
func (e *ExporterSource) Name() string { return "exporter" }

// Detail names the exporter and how many samples back the correlation.
func (e *ExporterSource) Detail() string {
	return fmt.Sprintf("%s (%d GPU samples)", promscrape.Redact(e.URL), len(e.Samples))
}

// Point averages each GPU's samples taken within [w.Start, w.End], then averages over GPUs;
// ErrNoData when no sample falls in the window.
func (e *ExporterSource) Point(_ context.Context, w Window) (schema.DCGMPoint, error) {
	acc := newAccumulator(true)
	for i := range e.Samples {
		s := &e.Samples[i]
		if within(s.At, w.Start, w.End) {
			acc.addFields(s.key(), &s.DCGMFields)
		}
	}
	if len(acc.gpus) == 0 {
		return schema.DCGMPoint{}, fmt.Errorf("%d exporter samples, none in %s's window: %w", len(e.Samples), w.Load.Key(), ErrNoData)
	}
	return acc.point(), nil
}

// EncodeSamples writes samples as JSON lines, so samples taken during a run survive until the
// cell's dcgm-correlate step (and a resume) reads them back.
func EncodeSamples(w io.Writer, samples []GPUSample) error {
	enc := json.NewEncoder(w)
	for i := range samples {
		if err := enc.Encode(&samples[i]); err != nil {
			return fmt.Errorf("encode GPU sample %d: %w", i, err)
		}
	}
	return nil
}

// DecodeSamples reads JSON lines written by EncodeSamples; unknown keys and bad lines are errors
// naming the line.
func DecodeSamples(r io.Reader) ([]GPUSample, error) {
	var out []GPUSample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var g GPUSample
		if err := dec.Decode(&g); err != nil {
			return nil, fmt.Errorf("GPU samples line %d: %w", line, err)
		}
		out = append(out, g)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read GPU samples: %w", err)
	}
	return out, nil
}

package dcgmcorrelate

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/telemetry/dcgm"
	"github.com/perfdag/perfdag/steps/telemetry/promscrape"
)

// SamplesSchema names the exporter-samples file run-shape writes for each point.
const SamplesSchema = "dcgm_samples_v1"

// SamplesDir is the directory, inside a cell's directory, holding one samples file per point.
const SamplesDir = "dcgm_samples"

// Samples is cells/<id>/dcgm_samples/c<N>.json: the DCGM exporter samples a dcgm.Sampler took
// during one point's run window, kept so the cell's dcgm-correlate step (and a resume) reads
// them back. The samples are steps/telemetry/dcgm's own type, blanks already dropped; the exporter URL is
// stored redacted (no user info, no query).
//
//	{"schema": "dcgm_samples_v1", "cell": "aa-1k", "concurrency": 8,
//	 "exporter": "http://node-7:9400/metrics", "scrapes": 31, "failures": 0,
//	 "samples": [{"t": "2026-05-01T10:00:01.5Z", "gpu": "0", "uuid": "GPU-…",
//	              "hostname": "node-7", "model_name": "NVIDIA B200",
//	              "sm_active": 0.81, "dram_active": 0.64, "nvlink_tx_bytes_s": 2.1e10, …}]}
type Samples struct {
	Schema      string           `json:"schema"`
	Cell        string           `json:"cell"`
	Concurrency int              `json:"concurrency"`
	Exporter    string           `json:"exporter,omitempty"`
	Scrapes     int              `json:"scrapes"`  // successful exporter fetches in the window
	Failures    int              `json:"failures"` // failed fetches (they cost samples, never the run)
	Samples     []dcgm.GPUSample `json:"samples"`
}

// SamplesPath is the samples file of one point, relative to the campaign directory.
func SamplesPath(cellID string, concurrency int) string {
	return filepath.Join("cells", cellID, SamplesDir, "c"+strconv.Itoa(concurrency)+".json")
}

// WriteSamples is what run-shape calls after sampler.Stop(): it writes the point's samples
// atomically and returns the path relative to campaignDir, for the node's Outputs.
func WriteSamples(campaignDir, cellID string, concurrency int, exporterURL string, samples []dcgm.GPUSample, stats promscrape.PollStats) (string, error) {
	rel := SamplesPath(cellID, concurrency)
	doc := Samples{Schema: SamplesSchema, Cell: cellID, Concurrency: concurrency, Exporter: promscrape.Redact(exporterURL),
		Scrapes: stats.Scrapes, Failures: stats.Failures, Samples: samples}
	if doc.Samples == nil {
		doc.Samples = []dcgm.GPUSample{}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", rel, err)
	}
	path := filepath.Join(campaignDir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	if err := atlas.WriteFileAtomic(path, append(b, '\n')); err != nil {
		return "", err
	}
	return rel, nil
}

// ReadSamples reads one point's samples file strictly; found is false when there is none.
// A file for another cell or concurrency, or of another schema, is an error naming the field.
func ReadSamples(campaignDir, cellID string, concurrency int) (doc Samples, found bool, err error) {
	path := filepath.Join(campaignDir, SamplesPath(cellID, concurrency))
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Samples{}, false, nil
	}
	if err != nil {
		return Samples{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return Samples{}, true, fmt.Errorf("decode %s: %w", path, err)
	}
	switch {
	case doc.Schema != SamplesSchema:
		return Samples{}, true, fmt.Errorf("%s: field schema: %q, want %q", path, doc.Schema, SamplesSchema)
	case doc.Cell != cellID:
		return Samples{}, true, fmt.Errorf("%s: field cell: %q, want %q", path, doc.Cell, cellID)
	case doc.Concurrency != concurrency:
		return Samples{}, true, fmt.Errorf("%s: field concurrency: %d, want %d", path, doc.Concurrency, concurrency)
	}
	for i, s := range doc.Samples {
		if s.At.IsZero() {
			return Samples{}, true, fmt.Errorf("%s: field samples[%d].t: missing", path, i)
		}
	}
	return doc, true, nil
}

func sha(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

package roofline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/schema"
)

// Bundle file names (see the package documentation for their fields).
const (
	ProvenanceFile = "provenance.json"
	ConfigFile     = "config.json"
	DecodeFile     = "decode.json"
	PrefillFile    = "prefill.json"
	DCGMFile       = "dcgm.json"
)

// DecodePoint is one concurrency of the decode sweep (decode.json points[]).
type DecodePoint struct {
	Concurrency       *int     `json:"concurrency"`
	OutputTokPerS     *float64 `json:"output_tok_s"`
	NumPrompts        *int     `json:"num_prompts"`
	ISL               *int     `json:"isl"`
	OSL               *int     `json:"osl"`
	TTFTAvgMs         *float64 `json:"ttft_avg_ms,omitempty"`
	ITLAvgMs          *float64 `json:"itl_avg_ms,omitempty"`
	RequestThroughput *float64 `json:"request_throughput,omitempty"`
}

// PrefillPoint is one ISL of the prefill sweep (prefill.json points[]).
type PrefillPoint struct {
	ISL          *int     `json:"isl"`
	TTFTAvgMs    *float64 `json:"ttft_avg_ms"`
	InputTokPerS *float64 `json:"input_tok_s"`
	NumPrompts   *int     `json:"num_prompts"`
	Concurrency  *int     `json:"concurrency,omitempty"` // default 1
}

// DCGMMeans is one (phase, concurrency, ISL) window's DCGM means (dcgm.json points[]), ratios 0–1.
type DCGMMeans struct {
	Phase            string   `json:"phase"` // decode, prefill
	Concurrency      *int     `json:"concurrency"`
	ISL              *int     `json:"isl"`
	SMActive         *float64 `json:"sm_active"`
	TensorActive     *float64 `json:"tensor_active"`
	DRAMActive       *float64 `json:"dram_active"`
	NVLinkBytesPerS  *float64 `json:"nvlink_bytes_s"`
	PowerWattsPerGPU *float64 `json:"power_watts_per_gpu,omitempty"`
}

type decodeFile struct {
	Schema string        `json:"schema,omitempty"`
	Points []DecodePoint `json:"points"`
}

type prefillFile struct {
	Schema string         `json:"schema,omitempty"`
	Points []PrefillPoint `json:"points"`
}

type dcgmFile struct {
	Schema string      `json:"schema,omitempty"`
	Points []DCGMMeans `json:"points"`
}

// Bundle is a roofline bundle read and validated.
type Bundle struct {
	Dir        string
	Provenance schema.ExperimentProvenance
	Model      schema.ModelShape
	Decode     []DecodePoint
	Prefill    []PrefillPoint
	DCGM       []DCGMMeans
}

// LoadBundle reads and validates every file of a bundle; modelConfig, when set, replaces the
// bundle's config.json. Any missing file or field is an error naming the file and the field.
func LoadBundle(dir, modelConfig string) (*Bundle, error) {
	b := &Bundle{Dir: dir}
	if err := decodeStrict(filepath.Join(dir, ProvenanceFile), &b.Provenance); err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, ConfigFile)
	if modelConfig != "" {
		cfg = modelConfig
	}
	shape, err := LoadShape(cfg)
	if err != nil {
		return nil, err
	}
	b.Model = shape
	var dec decodeFile
	if err := decodeStrict(filepath.Join(dir, DecodeFile), &dec); err != nil {
		return nil, err
	}
	var pre prefillFile
	if err := decodeStrict(filepath.Join(dir, PrefillFile), &pre); err != nil {
		return nil, err
	}
	var dc dcgmFile
	if err := decodeStrict(filepath.Join(dir, DCGMFile), &dc); err != nil {
		return nil, err
	}
	b.Decode, b.Prefill, b.DCGM = dec.Points, pre.Points, dc.Points
	if err := b.validate(); err != nil {
		return nil, err
	}
	return b, nil
}

// validate checks required fields and ranges, naming file, index and field.
func (b *Bundle) validate() error {
	p := filepath.Join(b.Dir, ProvenanceFile)
	for _, f := range []struct{ name, v string }{
		{"engine", b.Provenance.Engine}, {"engine_version", b.Provenance.EngineVersion},
		{"delivery", b.Provenance.Delivery}, {"capture_date", b.Provenance.CaptureDate},
	} {
		if strings.TrimSpace(f.v) == "" {
			return fmt.Errorf("%s: field %s: missing", p, f.name)
		}
	}
	var errs []error
	decodePath := filepath.Join(b.Dir, DecodeFile)
	if len(b.Decode) == 0 {
		errs = append(errs, fmt.Errorf("%s: field points: no decode points", decodePath))
	}
	seen := map[[2]int]bool{}
	for i, d := range b.Decode {
		at := fmt.Sprintf("%s: points[%d]", decodePath, i)
		errs = append(errs, positiveInt(at, "concurrency", d.Concurrency), positiveFloat(at, "output_tok_s", d.OutputTokPerS),
			positiveInt(at, "num_prompts", d.NumPrompts), positiveInt(at, "isl", d.ISL), positiveInt(at, "osl", d.OSL))
		if d.Concurrency != nil && d.ISL != nil {
			k := [2]int{*d.Concurrency, *d.ISL}
			if seen[k] {
				errs = append(errs, fmt.Errorf("%s.concurrency: (concurrency %d, isl %d) appears twice", at, k[0], k[1]))
			}
			seen[k] = true
		}
	}
	prefillPath := filepath.Join(b.Dir, PrefillFile)
	if len(b.Prefill) == 0 {
		errs = append(errs, fmt.Errorf("%s: field points: no prefill points", prefillPath))
	}
	seen = map[[2]int]bool{}
	for i, pp := range b.Prefill {
		at := fmt.Sprintf("%s: points[%d]", prefillPath, i)
		errs = append(errs, positiveInt(at, "isl", pp.ISL), positiveFloat(at, "ttft_avg_ms", pp.TTFTAvgMs),
			positiveFloat(at, "input_tok_s", pp.InputTokPerS), positiveInt(at, "num_prompts", pp.NumPrompts))
		if pp.Concurrency != nil {
			errs = append(errs, positiveInt(at, "concurrency", pp.Concurrency))
		}
		if pp.ISL != nil {
			k := [2]int{prefillConc(pp), *pp.ISL}
			if seen[k] {
				errs = append(errs, fmt.Errorf("%s.isl: (concurrency %d, isl %d) appears twice", at, k[0], k[1]))
			}
			seen[k] = true
		}
	}
	dcgmPath := filepath.Join(b.Dir, DCGMFile)
	for i, m := range b.DCGM {
		at := fmt.Sprintf("%s: points[%d]", dcgmPath, i)
		if m.Phase != schema.RooflinePhaseDecode && m.Phase != schema.RooflinePhasePrefill {
			errs = append(errs, fmt.Errorf("%s.phase: %q, want decode or prefill", at, m.Phase))
		}
		errs = append(errs, positiveInt(at, "concurrency", m.Concurrency), positiveInt(at, "isl", m.ISL))
		for _, r := range []struct {
			name string
			v    *float64
		}{{"sm_active", m.SMActive}, {"tensor_active", m.TensorActive}, {"dram_active", m.DRAMActive}} {
			if r.v == nil {
				errs = append(errs, fmt.Errorf("%s.%s: missing", at, r.name))
			} else if *r.v < 0 || *r.v > 1 {
				errs = append(errs, fmt.Errorf("%s.%s: %g is not a ratio in [0, 1]", at, r.name, *r.v))
			}
		}
	}
	return errors.Join(errs...)
}

func prefillConc(p PrefillPoint) int {
	if p.Concurrency == nil {
		return 1
	}
	return *p.Concurrency
}

// dcgmFor finds the DCGM means of a (phase, concurrency, ISL) window.
func (b *Bundle) dcgmFor(phase string, conc, isl int) *DCGMMeans {
	for i := range b.DCGM {
		m := &b.DCGM[i]
		if m.Phase == phase && m.Concurrency != nil && *m.Concurrency == conc && m.ISL != nil && *m.ISL == isl {
			return m
		}
	}
	return nil
}

func positiveInt(at, field string, v *int) error {
	switch {
	case v == nil:
		return fmt.Errorf("%s.%s: missing", at, field)
	case *v <= 0:
		return fmt.Errorf("%s.%s: must be positive, got %d", at, field, *v)
	}
	return nil
}

func positiveFloat(at, field string, v *float64) error {
	switch {
	case v == nil:
		return fmt.Errorf("%s.%s: missing", at, field)
	case !(*v > 0):
		return fmt.Errorf("%s.%s: must be positive, got %g", at, field, *v)
	}
	return nil
}

// MaxBundleFileBytes bounds each JSON file of a roofline bundle (and the model's config.json):
// sweeps and per-point DCGM are kilobytes to a few megabytes; a larger file, or a device, is
// refused before it is read.
const MaxBundleFileBytes = 32 << 20

// decodeStrict reads one JSON file, rejecting unknown fields; a missing file names itself.
func decodeStrict(path string, v any) error {
	data, err := bounded.ReadFile("roofline bundle file", path, MaxBundleFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("roofline bundle: %s: missing file", path)
	}
	if err != nil {
		return fmt.Errorf("roofline bundle: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("roofline bundle: %s: %w", path, err)
	}
	return nil
}

package roofline

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Options name one imported configuration; set fields override the bundle's provenance.json.
type Options struct {
	Campaign       string // campaign slug stamped on every row
	ID             string // import id: cells <id>-decode and <id>-prefill ([a-z0-9._-])
	Hardware       string // GPU name in steps/analysis/catalog (H100, B200, GB300, ...)
	TensorParallel int    // GPUs per replica: the divisor of per-GPU figures
	Quant          string // weight quantization: BF16, FP8, NVFP4, ...
	CacheMode      string // warm or cold
	ModelConfig    string // config.json to use instead of the bundle's
	KVCacheDtype   string // bf16 (default), fp8, nvfp4
}

// Imported is what Import produced: the atlas rows of both cells and the sweep file's content.
type Imported struct {
	DecodeCell  string
	PrefillCell string
	Rows        []schema.AtlasRow // decode rows, then prefill rows
	Sweep       schema.RooflineSweep
	Warnings    []string
	Cells       []campaigndir.CellFiles // what was written: both cells, the decode cell with the sweep
}

var slug = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// resolved is the configuration an import runs under, after options overlay provenance.
type resolved struct {
	hw       Hardware
	quant    string
	tp       int
	bw, bkv  float64
	kvDtype  string
	model    string
	warnings []string
}

// Import reads a roofline bundle and writes cells/<id>-decode (normalized.json, status.txt,
// roofline_sweep.json) and cells/<id>-prefill (normalized.json, status.txt) under campaignDir.
// Everything is computed before anything is written, and the cells are built in a temp
// directory and renamed into place, so a bad bundle leaves nothing partial behind.
func Import(ctx context.Context, campaignDir, bundleDir string, opt Options) (Imported, error) {
	if !slug.MatchString(opt.ID) {
		return Imported{}, fmt.Errorf("roofline import: id %q: want [a-z0-9._-], starting with a letter or digit", opt.ID)
	}
	b, err := LoadBundle(bundleDir, opt.ModelConfig)
	if err != nil {
		return Imported{}, err
	}
	r, err := resolve(b, opt)
	if err != nil {
		return Imported{}, err
	}
	imp := Imported{DecodeCell: opt.ID + "-decode", PrefillCell: opt.ID + "-prefill", Warnings: r.warnings}
	sweep := schema.RooflineSweep{
		Schema: schema.SchemaRooflineSweep, Campaign: opt.Campaign, ImportID: opt.ID,
		DecodeCell: imp.DecodeCell, PrefillCell: imp.PrefillCell, Hardware: r.hw.Name, Quant: r.quant,
		TensorParallel: r.tp, CacheMode: opt.CacheMode, WeightBytes: r.bw, KVBytes: r.bkv,
		Provenance: b.Provenance, Model: b.Model, HBMLabel: schema.HBMBytesLabel, DRAMLabel: schema.DRAMActiveLabel,
	}
	sweep.Provenance.Hardware, sweep.Provenance.TensorParallel, sweep.Provenance.Quant = r.hw.Name, r.tp, r.quant
	sweep.Provenance.KVCacheDtype, sweep.Provenance.Model = r.kvDtype, r.model

	decode := slices.Clone(b.Decode)
	slices.SortFunc(decode, func(x, y DecodePoint) int {
		return cmp.Or(cmp.Compare(*x.Concurrency, *y.Concurrency), cmp.Compare(*x.ISL, *y.ISL))
	})
	for _, d := range decode {
		rr, ar, warn := decodeRow(b, r, opt, imp.DecodeCell, d)
		sweep.Rows = append(sweep.Rows, rr)
		imp.Rows = append(imp.Rows, ar)
		imp.Warnings = append(imp.Warnings, warn...)
	}
	prefill := slices.Clone(b.Prefill)
	slices.SortFunc(prefill, func(x, y PrefillPoint) int {
		return cmp.Or(cmp.Compare(prefillConc(x), prefillConc(y)), cmp.Compare(*x.ISL, *y.ISL))
	})
	for _, p := range prefill {
		rr, ar, warn := prefillRow(b, r, opt, imp.PrefillCell, p)
		sweep.Rows = append(sweep.Rows, rr)
		imp.Rows = append(imp.Rows, ar)
		imp.Warnings = append(imp.Warnings, warn...)
	}
	sweep.Warnings = imp.Warnings
	imp.Sweep = sweep
	if err := ctx.Err(); err != nil {
		return Imported{}, err
	}
	cells, err := writeCells(campaignDir, imp)
	if err != nil {
		return Imported{}, err
	}
	imp.Cells = cells
	return imp, nil
}

// resolve overlays options on provenance and looks up ceilings and byte widths.
func resolve(b *Bundle, opt Options) (resolved, error) {
	var r resolved
	prov := filepath.Join(b.Dir, ProvenanceFile)
	pick := func(field, optVal, provVal string) (string, error) {
		switch {
		case optVal != "" && provVal != "" && !strings.EqualFold(optVal, provVal):
			r.warnings = append(r.warnings, fmt.Sprintf("option %s %q overrides %s %s %q", field, optVal, ProvenanceFile, field, provVal))
			return optVal, nil
		case optVal != "":
			return optVal, nil
		case provVal != "":
			return provVal, nil
		}
		return "", fmt.Errorf("%s: field %s: missing (and no %s option given)", prov, field, field)
	}
	hwName, err := pick("hardware", opt.Hardware, b.Provenance.Hardware)
	if err != nil {
		return r, err
	}
	if r.quant, err = pick("quant", opt.Quant, b.Provenance.Quant); err != nil {
		return r, err
	}
	switch r.tp = opt.TensorParallel; {
	case r.tp > 0 && b.Provenance.TensorParallel > 0 && r.tp != b.Provenance.TensorParallel:
		r.warnings = append(r.warnings, fmt.Sprintf("option tensor_parallel %d overrides %s tensor_parallel %d", r.tp, ProvenanceFile, b.Provenance.TensorParallel))
	case r.tp <= 0 && b.Provenance.TensorParallel > 0:
		r.tp = b.Provenance.TensorParallel
	case r.tp <= 0:
		return r, fmt.Errorf("%s: field tensor_parallel: missing (and no tensor_parallel option given)", prov)
	}
	if r.hw, err = HardwareFor(hwName, r.quant); err != nil {
		return r, fmt.Errorf("%s: %w", prov, err)
	}
	if r.bw, err = BytesPerWeight(r.quant); err != nil {
		return r, fmt.Errorf("%s: %w", prov, err)
	}
	r.kvDtype = cmp.Or(opt.KVCacheDtype, b.Provenance.KVCacheDtype, "bf16")
	if r.bkv, err = kvBytes(r.kvDtype); err != nil {
		return r, fmt.Errorf("%s: field kv_cache_dtype: %w", prov, err)
	}
	r.model = cmp.Or(b.Provenance.Model, b.Model.ModelType)
	return r, nil
}

// kvBytes is b_kv for a KV-cache dtype name.
func kvBytes(dtype string) (float64, error) {
	switch strings.ToLower(dtype) {
	case "bf16", "fp16", "auto", "bfloat16", "float16":
		return 2, nil
	case "fp8", "fp8_e4m3", "fp8_e5m2":
		return 1, nil
	case "nvfp4":
		return 4.5 / 8, nil
	}
	return 0, fmt.Errorf("%q: want bf16, fp16, fp8 or nvfp4", dtype)
}

// baseRow is the identity both cells share.
func baseRow(r resolved, opt Options, prov schema.ExperimentProvenance, cell string, conc int) schema.AtlasRow {
	return schema.AtlasRow{
		Schema: "atlas_v1", Campaign: opt.Campaign, CellID: cell, Load: schema.Conc(conc), Concurrency: conc, Model: r.model,
		Hardware: r.hw.Name, Quant: r.quant, TensorParallel: r.tp, Engine: prov.Engine,
		EngineVersion: prov.EngineVersion, Delivery: prov.Delivery, CacheMode: opt.CacheMode,
		Backend: schema.RooflineBackend, GPUs: r.tp, CellStatus: schema.CellFull, SolRigor: schema.RigorL1,
	}
}

// joinDCGM copies a window's DCGM means onto both row kinds; nil means not captured.
func joinDCGM(ar *schema.AtlasRow, rr *schema.RooflineRow, m *DCGMMeans) {
	if m == nil {
		return
	}
	ar.SMActive, ar.TensorActive, ar.DRAMActive = m.SMActive, m.TensorActive, m.DRAMActive
	ar.NVLinkBytesPerS, ar.PowerWattsPerGPU = m.NVLinkBytesPerS, m.PowerWattsPerGPU
	ar.DCGMGrounded, ar.SolRigor = true, schema.RigorL3
	rr.SMActive, rr.TensorActive, rr.DRAMActive, rr.NVLinkBytesPerS = m.SMActive, m.TensorActive, m.DRAMActive, m.NVLinkBytesPerS
	rr.DRAMActivePct = schema.F(*m.DRAMActive * 100)
}

func bound(ai, ridge float64) string {
	if ai < ridge {
		return "memory"
	}
	return "compute"
}

// Package rooflineimport is the roofline-import step kind: it imports an operator-captured
// roofline bundle (decode concurrency sweep, prefill ISL sweep, per-(c, ISL) DCGM, the model's
// config.json, provenance) into the campaign as the cells <id>-decode and <id>-prefill plus
// roofline_sweep.json, through steps/analysis/roofline. Several imports (distinct ids) may share a
// campaign; aggregate picks their cells up from this kind's result.
package rooflineimport

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/roofline"
	"github.com/perfdag/perfdag/steps/catalog"
)

// Kind is the roofline-import step kind.
var Kind = engine.Kind{
	Name:    name,
	Scope:   engine.ScopeCampaign,
	Version: "1",
	Doc:     "import a roofline bundle (decode + prefill sweeps, per-point DCGM, config.json) as <id>-decode and <id>-prefill cells",
	Params:  func() any { return &Params{} },
	Result:  Result{},
	Inputs:  inputs,
	Check:   check,
	Run:     run,
}

// name is the kind's name in `kind:`.
const name = "roofline-import"

// Params are roofline-import's `with:`; hardware, tensor_parallel and quant override the
// bundle's provenance.json (and may be left out when it states them).
type Params struct {
	Bundle         string `yaml:"bundle" json:"bundle" doc:"bundle directory, relative to the campaign file"`
	ID             string `yaml:"id,omitempty" json:"id,omitempty" doc:"import id: cells <id>-decode and <id>-prefill (default: the step id)"`
	Hardware       string `yaml:"hardware,omitempty" json:"hardware,omitempty" doc:"GPU type in the catalog: H100, H200, B200, GB300"`
	TensorParallel int    `yaml:"tensor_parallel,omitempty" json:"tensor_parallel,omitempty" range:"0,1024" doc:"GPUs per replica, the divisor of per-GPU figures"`
	Quant          string `yaml:"quant,omitempty" json:"quant,omitempty" doc:"weight quantization: BF16, FP8, NVFP4, MXFP4"`
	CacheMode      string `yaml:"cache_mode,omitempty" json:"cache_mode,omitempty" enum:"warm,cold" doc:"warm or cold prefix cache during the capture"`
	ModelConfig    string `yaml:"model_config,omitempty" json:"model_config,omitempty" doc:"a Hugging Face config.json used instead of the bundle's (relative to the campaign file)"`
	KVCacheDtype   string `yaml:"kv_cache_dtype,omitempty" json:"kv_cache_dtype,omitempty" doc:"KV cache dtype: bf16 (default), fp8, nvfp4"`
}

// Result is what gates on roofline-import read, e.g. `undercount_cells == 0`.
type Result struct {
	ImportID        string  `json:"import_id"`
	DecodeCell      string  `json:"decode_cell"`
	PrefillCell     string  `json:"prefill_cell"`
	DecodePoints    int     `json:"decode_points"`
	PrefillPoints   int     `json:"prefill_points"`
	UndercountCells int     `json:"undercount_cells"` // points with num_prompts < 2 × concurrency
	DCGMPoints      int     `json:"dcgm_points"`      // points with per-(c, ISL) DCGM means
	Warnings        int     `json:"warnings"`
	Ridge           float64 `json:"ridge"` // FLOP/byte where the hardware turns compute-bound
	Model           string  `json:"model"`
	Hardware        string  `json:"hardware"`
	Quant           string  `json:"quant"`
	TensorParallel  int     `json:"tensor_parallel"`
	// Cells names the files of both cells (the decode cell's with the sweep).
	Cells []campaigndir.CellFiles `json:"cells"`
}

// WrittenCells lets aggregate include the cells this import wrote without knowing the kind.
func (r *Result) WrittenCells() []campaigndir.CellFiles { return r.Cells }

// importID is the id the cells are named after: the param, else the step id.
func importID(p *Params, stepID string) string { return cmp.Or(p.ID, stepID) }

// resolve anchors a path of the campaign file at its directory.
func resolve(baseDir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(baseDir, p)
}

// kindInputs is what an import depends on beyond its params: the campaign slug stamped on its
// rows and the content of the bundle and model config (so editing them re-imports).
type kindInputs struct {
	Campaign    string `json:"campaign"`
	Bundle      string `json:"bundle_digest"`
	ModelConfig string `json:"model_config_digest,omitempty"`
}

func inputs(t *engine.Task) any {
	p, _ := t.Params.(*Params)
	if p == nil {
		return kindInputs{Campaign: t.Campaign.Campaign}
	}
	in := kindInputs{Campaign: t.Campaign.Campaign, Bundle: DigestBundle(resolve(t.BaseDir, p.Bundle))}
	if p.ModelConfig != "" {
		in.ModelConfig = DigestFile(resolve(t.BaseDir, p.ModelConfig))
	}
	return in
}

func check(c *schema.Campaign, step *schema.PipelineStep, params any) []error {
	p, _ := params.(*Params)
	if p == nil {
		p = &Params{}
	}
	with := withPath(c, step.ID)
	var errs []error
	bad := func(field, hint string, format string, args ...any) {
		path := with
		if field != "" {
			path += "." + field
		}
		errs = append(errs, &engine.FieldError{Path: path, Err: fmt.Errorf(format, args...), Hint: hint})
	}
	if strings.TrimSpace(p.Bundle) == "" {
		bad("", "e.g. with: {bundle: roofline/, hardware: H100, tensor_parallel: 4, quant: FP8}", "step %s: with.bundle is required: the directory holding provenance.json, config.json, decode.json, prefill.json and dcgm.json", step.ID)
	}
	id := importID(p, step.ID)
	if p.ID != "" && !load.Slug.MatchString(p.ID) {
		bad("id", "use lower-case letters, digits, '.', '_' and '-'", "step %s: id %q is not a valid id", step.ID, p.ID)
	}
	if p.Hardware != "" {
		if _, ok := catalog.GPUByName(p.Hardware); !ok {
			bad("hardware", "known hardware: "+strings.Join(gpuNames(), ", "), "step %s: hardware %q is not in the GPU catalog", step.ID, p.Hardware)
		}
	}
	if p.Quant != "" {
		if _, err := roofline.BytesPerWeight(p.Quant); err != nil {
			bad("quant", "e.g. BF16, FP8, NVFP4", "step %s: quant: %v", step.ID, err)
		}
	}
	cells := make([]string, 0, len(c.Cells))
	for _, cell := range c.Cells {
		cells = append(cells, cell.ID)
	}
	for _, cell := range []string{id + "-decode", id + "-prefill"} {
		if slices.Contains(cells, cell) {
			bad("id", "give the import another id", "step %s writes cell %s, which is already a cell of the campaign", step.ID, cell)
		}
	}
	for _, other := range c.Pipeline {
		if other.Kind != name || other.ID == step.ID {
			continue
		}
		otherID, _ := other.With["id"].(string)
		if cmp.Or(otherID, other.ID) == id {
			bad("id", "give each roofline-import a distinct id", "step %s and step %s both import as %q", step.ID, other.ID, id)
		}
	}
	return errs
}

func run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	p := t.Params.(*Params)
	id := importID(p, t.Step)
	bundle := resolve(t.BaseDir, p.Bundle)
	imp, err := roofline.Import(ctx, t.Dir, bundle, roofline.Options{
		Campaign: t.Campaign.Campaign, ID: id, Hardware: p.Hardware, TensorParallel: p.TensorParallel,
		Quant: p.Quant, CacheMode: p.CacheMode, ModelConfig: resolve(t.BaseDir, p.ModelConfig), KVCacheDtype: p.KVCacheDtype,
	})
	if err != nil {
		return engine.Result{}, fmt.Errorf("step %s: import bundle %s: %w", t.Step, bundle, err)
	}
	sw := imp.Sweep
	res := &Result{
		ImportID: id, DecodeCell: imp.DecodeCell, PrefillCell: imp.PrefillCell, Warnings: len(imp.Warnings),
		Model: cmp.Or(sw.Provenance.Model, sw.Model.ModelType), Hardware: sw.Hardware, Quant: sw.Quant, TensorParallel: sw.TensorParallel,
	}
	var undercount []string
	for _, r := range sw.Rows {
		switch r.Phase {
		case schema.RooflinePhaseDecode:
			res.DecodePoints++
		case schema.RooflinePhasePrefill:
			res.PrefillPoints++
		}
		res.Ridge = r.RidgeFLOPPerByte
		if r.DRAMActive != nil {
			res.DCGMPoints++
		}
		if slices.Contains(r.Flags, schema.FlagSteadyWindowUndercount) {
			res.UndercountCells++
			undercount = append(undercount, fmt.Sprintf("%s c%d", r.Phase, r.Concurrency))
		}
	}
	log := t.Log
	if log == nil {
		log = io.Discard
	}
	for _, w := range imp.Warnings {
		fmt.Fprintf(log, "warning: roofline import %s: %s\n", id, w)
	}
	summary := fmt.Sprintf("imported %s: %d decode + %d prefill points of %s on %s %s TP%d, ridge %.0f FLOP/B",
		id, res.DecodePoints, res.PrefillPoints, res.Model, res.Hardware, res.Quant, res.TensorParallel, res.Ridge)
	if len(undercount) > 0 {
		summary += fmt.Sprintf("; WARNING steady_window_undercount (num_prompts < 2c) at %s", strings.Join(undercount, ", "))
	}
	res.Cells = imp.Cells
	var outputs []string
	for _, c := range imp.Cells {
		outputs = append(outputs, c.Normalized, c.Status)
		if c.Sweep != "" {
			outputs = append(outputs, c.Sweep)
		}
	}
	return engine.Result{Value: res, Outputs: outputs, Summary: summary}, nil
}

// withPath is the decoder path of a step's with: block, for positioned errors; the default
// pipeline has no source, so its errors fall back to the pipeline key.
func withPath(c *schema.Campaign, stepID string) string {
	for i, s := range c.Pipeline {
		if s.ID == stepID {
			return fmt.Sprintf("pipeline[%d].with", i)
		}
	}
	return "pipeline"
}

func gpuNames() []string {
	var out []string
	for _, g := range catalog.Get().GPUs {
		out = append(out, g.Name)
	}
	return out
}

package importcell

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/benchfile"
)

// ManifestFile is the optional manifest of a variant A/B bundle.
const ManifestFile = "bundle.yaml"

// Manifest is a bundle's bundle.yaml: which directory holds which arm, on which engine, and
// which arm is the baseline. Without one, every sub-directory is an arm named after it.
type Manifest struct {
	Baseline string        `yaml:"baseline,omitempty"`
	Arms     []ManifestArm `yaml:"arms"`
}

// ManifestArm is one arm of a bundle.
type ManifestArm struct {
	Arm           string `yaml:"arm"`
	Engine        string `yaml:"engine,omitempty"`
	EngineVersion string `yaml:"engine_version,omitempty"`
	Path          string `yaml:"path,omitempty"`   // default: the arm's name
	Format        string `yaml:"format,omitempty"` // default: recognised per file
}

// BundleOptions are Options for every arm's cell, plus the baseline arm.
type BundleOptions struct {
	Options
	Baseline string // overrides the manifest's baseline
}

// engines are the engine names an arm directory is recognised by (vllm, sglang-0.4.6, ...).
var engines = []string{"vllm", "sglang", "trtllm", "dynamo", "llamacpp"}

// BuildBundle reads a variant A/B bundle — a directory with one sub-directory per arm, each
// holding that arm's outputs (one file or AIPerf directory per concurrency) — and returns one
// engine-tagged cell per arm, id ARM-sweep, with arm: set and baseline: on the baseline arm's.
// An arm's engine comes from the manifest, else from its directory name when that starts with
// an engine name, else from its outputs (vLLM or SGLang bench files).
func BuildBundle(dir string, o BundleOptions) ([]schema.Cell, error) {
	arms, man, err := bundleArms(dir)
	if err != nil {
		return nil, err
	}
	baseline := man.Baseline
	if o.Baseline != "" {
		baseline = o.Baseline
	}
	if baseline != "" && !slices.ContainsFunc(arms, func(a ManifestArm) bool { return a.Arm == baseline }) {
		names := make([]string, 0, len(arms))
		for _, a := range arms {
			names = append(names, a.Arm)
		}
		return nil, fmt.Errorf("bundle %s: baseline arm %q is not one of its arms (%s)", dir, baseline, strings.Join(names, ", "))
	}
	var cells []schema.Cell
	for _, a := range arms {
		files, err := armFiles(filepath.Join(dir, a.Path))
		if err != nil {
			return nil, fmt.Errorf("bundle %s: arm %s: %w", dir, a.Arm, err)
		}
		co := o.Options
		co.Cell = ID(a.Arm) + "-sweep"
		co.Identity.Arm, co.Identity.Baseline = a.Arm, a.Arm == baseline
		if a.Format != "" {
			co.Format = a.Format
		}
		if e := cmp.Or(a.Engine, dirEngine(a.Arm)); e != "" {
			co.Identity.Engine = e // else --engine, else what the outputs imply
		}
		if a.EngineVersion != "" {
			co.Identity.EngineVersion = a.EngineVersion
		}
		cell, _, err := Build(files, co)
		if err != nil {
			return nil, err
		}
		if cell.Import.SourceVersion == "" && cell.EngineVersion != "" && engineOf(cell.Import.Format) == cell.Engine {
			cell.Import.SourceVersion = cell.EngineVersion // vllm bench serve / sglang.bench_serving ship with the engine
		}
		if cell.Engine == "" {
			return nil, fmt.Errorf("bundle %s: arm %s: its %s outputs do not name the engine: name the directory after it (vllm, sglang, ...) or give engine: in %s",
				dir, a.Arm, cell.Import.Format, ManifestFile)
		}
		cells = append(cells, cell)
	}
	models := map[string]bool{}
	for _, c := range cells {
		if c.Model != "" {
			models[c.Model] = true
		}
	}
	if len(models) == 1 { // an arm whose outputs name no model (SGLang) measured the others'
		for i := range cells {
			for m := range models {
				cells[i].Model = cmp.Or(cells[i].Model, m)
			}
		}
	}
	if len(cells) < 2 {
		return nil, fmt.Errorf("bundle %s: %s: an A/B bundle has one directory per arm, at least two", dir, plural.N(len(cells), "arm"))
	}
	return cells, nil
}

// MaxManifestBytes bounds a bundle's bundle.yaml (a list of arms: a few hundred bytes).
const MaxManifestBytes = 1 << 20

// bundleArms lists a bundle's arms from its manifest, or its sub-directories in name order.
func bundleArms(dir string) ([]ManifestArm, Manifest, error) {
	var man Manifest
	mf := filepath.Join(dir, ManifestFile)
	b, err := bounded.ReadFile("bundle manifest", mf, MaxManifestBytes)
	switch {
	case err == nil:
		if err := load.CheckPlain(mf, b); err != nil {
			return nil, man, err
		}
		if err := yaml.UnmarshalWithOptions(b, &man, yaml.Strict()); err != nil {
			return nil, man, fmt.Errorf("%s: %s", mf, yaml.FormatError(err, false, false))
		}
		for i := range man.Arms {
			a := &man.Arms[i]
			if a.Arm == "" {
				return nil, man, fmt.Errorf("%s: arms[%d].arm: missing", mf, i)
			}
			if a.Path == "" {
				a.Path = a.Arm
			}
		}
		return man.Arms, man, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, man, fmt.Errorf("bundle: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, man, fmt.Errorf("bundle: %w", err)
	}
	var arms []ManifestArm
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			arms = append(arms, ManifestArm{Arm: e.Name(), Path: e.Name()})
		}
	}
	return arms, man, nil
}

// armFiles lists an arm directory's outputs: AIPerf artifact directories, *.json (not
// *.pytorch.json) and *.jsonl files, in name order.
func armFiles(dir string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, benchfile.AIPerfAggregate)); err == nil {
		return []string{dir}, nil // the arm is one AIPerf run
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		n, p := e.Name(), filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(n, "."):
		case e.IsDir():
			if _, err := os.Stat(filepath.Join(p, benchfile.AIPerfAggregate)); err == nil {
				out = append(out, p)
			}
		case strings.HasSuffix(n, ".pytorch.json"):
		case strings.HasSuffix(n, ".json"), strings.HasSuffix(n, ".jsonl"):
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no benchmark outputs (AIPerf directories, *.json, *.jsonl)", dir)
	}
	return out, nil
}

// dirEngine is the engine an arm's name starts with ("sglang-0.4" → sglang), else "".
func dirEngine(name string) string {
	l := strings.ToLower(name)
	for _, e := range engines {
		if l == e || strings.HasPrefix(l, e+"-") || strings.HasPrefix(l, e+"_") {
			return e
		}
	}
	return ""
}

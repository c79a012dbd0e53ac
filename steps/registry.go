// The registry: adding a step kind is one line in Kinds.

package steps

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/aggregate"
	burnin "github.com/perfdag/perfdag/steps/burn-in"
	championselect "github.com/perfdag/perfdag/steps/champion-select"
	dcgmcorrelate "github.com/perfdag/perfdag/steps/dcgm-correlate"
	"github.com/perfdag/perfdag/steps/exec"
	importkind "github.com/perfdag/perfdag/steps/import"
	"github.com/perfdag/perfdag/steps/measure/benchfile"
	"github.com/perfdag/perfdag/steps/measure/endpoint"
	"github.com/perfdag/perfdag/steps/measure/hftok"
	"github.com/perfdag/perfdag/steps/prewarm"
	"github.com/perfdag/perfdag/steps/render"
	rooflineimport "github.com/perfdag/perfdag/steps/roofline-import"
	runshape "github.com/perfdag/perfdag/steps/run-shape"
	scrapespec "github.com/perfdag/perfdag/steps/scrape-spec"
	"github.com/perfdag/perfdag/steps/settle"
	"github.com/perfdag/perfdag/steps/sim"
	strictpublish "github.com/perfdag/perfdag/steps/strict-publish"
	"github.com/perfdag/perfdag/steps/sweep"
)

// Kinds lists every step kind perfdag ships.
func Kinds() []engine.Kind {
	return []engine.Kind{
		exec.Kind,
		prewarm.Kind,
		burnin.Kind,
		settle.Kind,
		runshape.Kind,
		importkind.Kind,
		scrapespec.Kind,
		render.Kind,
		aggregate.Kind,
		rooflineimport.Kind,
		championselect.Kind,
		dcgmcorrelate.Kind,
		strictpublish.Kind,
		sweep.Kind,
	}
}

// Registry returns the step registry with the default pipeline, run-wide setup and the rule
// context gates read; extra kinds (test doubles) are registered beside perfdag's own.
func Registry(extra ...engine.Kind) (*engine.Registry, error) {
	r, err := engine.NewRegistry(append(Kinds(), extra...)...)
	if err != nil {
		return nil, err
	}
	r.Default = DefaultPipeline
	r.Setup = setup
	r.RuleContext = RuleContext
	r.Files = files
	r.Expands = (*schema.Cell).Expands
	return r, nil
}

// files checks every endpoint's tokenizer file at validate time: it must be a tokenizer.json
// the tokenizer library builds (which also loads it for the run: hftok builds a file once).
func files(c *schema.Campaign, baseDir string) []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(c.Endpoints)) {
		ep := c.Endpoints[name]
		if ep.Tokenizer == "" {
			continue
		}
		if _, err := hftok.Load(hftok.Path(baseDir, ep.Tokenizer)); err != nil {
			errs = append(errs, &engine.FieldError{Path: "endpoints." + name + ".tokenizer", Err: err,
				Hint: "a Hugging Face tokenizer.json (what save_pretrained writes beside a model), relative to the campaign file"})
		}
	}
	return errs
}

// runEnv is what one run's nodes share: where its endpoints listen, and the imported
// benchmark files read so far (the import points of a file holding a thousand runs read it
// once, not once each).
type runEnv struct {
	endpoints *endpoint.Env
	imports   *benchfile.Files
}

// EndpointEnv is the endpoints as this run resolved them (endpoint.Resolve reads it).
func (e *runEnv) EndpointEnv() *endpoint.Env { return e.endpoints }

// ImportFiles is the run's reader of imported files (the import kind reads through it).
func (e *runEnv) ImportFiles() *benchfile.Files { return e.imports }

// setup starts an in-process simulator on a loopback port for every sim:// endpoint, and
// resolves the others as configured. The addresses live only for this run: fingerprints and
// files keep the configured URL.
func setup(ctx context.Context, c *schema.Campaign) (any, func(), error) {
	env := &endpoint.Env{Endpoints: map[string]endpoint.Resolved{}}
	run := &runEnv{endpoints: env, imports: benchfile.NewFiles()}
	var servers []*sim.Server
	cleanup := func() {
		for _, s := range servers {
			s.Close()
		}
	}
	names := make([]string, 0, len(c.Endpoints))
	for n := range c.Endpoints {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		ep := c.Endpoints[name]
		if !endpoint.IsSim(ep.URL) {
			env.Endpoints[name] = endpoint.Static(ep)
			continue
		}
		var cfg schema.SimConfig
		if ep.Sim != nil {
			cfg = *ep.Sim
		}
		if cfg.Deterministic { // no server, no samplers: they would read the wall clock
			v, err := sim.NewVirtual(cfg)
			if err != nil {
				cleanup()
				return nil, nil, fmt.Errorf("endpoint %s: %w", name, err)
			}
			env.Endpoints[name] = endpoint.Resolved{BaseURL: "http://deterministic.invalid", Sim: true, Virtual: v.Record, VirtualOpen: v.OpenRecord}
			continue
		}
		srv, err := sim.Start(ctx, cfg, ep.Model)
		if err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("start simulator for endpoint %s: %w", name, err)
		}
		servers = append(servers, srv)
		env.Endpoints[name] = endpoint.Resolved{BaseURL: srv.URL(), MetricsURL: srv.URL() + "/metrics", DCGMURL: srv.URL() + "/dcgm/metrics", Sim: true}
	}
	return run, cleanup, nil
}

// RuleContext is what gates and `when:` rules read of a cell besides the generic context:
// its endpoint, identity, workload shape and whether it is imported (zero values at campaign scope).
func RuleContext(_ *schema.Campaign, cell *schema.Cell, _ schema.Load, _ string) map[string]any {
	env := map[string]any{"endpoint": "", "model": "", "hardware": "", "quant": "", "tensor_parallel": 0, "engine": "", "shape": "", "imported": false}
	if cell != nil {
		env["imported"] = cell.Import != nil
		env["endpoint"], env["model"], env["hardware"], env["quant"] = cell.Endpoint, cell.Model, cell.Hardware, cell.Quant
		env["tensor_parallel"], env["engine"], env["shape"] = cell.TensorParallel, cell.Engine, cell.Workload.Shape
	}
	return env
}

// JSONSchema is the campaign file's JSON Schema with the registered kinds as pipeline[].kind's
// enum: editors complete exactly the kinds this build runs.
func JSONSchema() ([]byte, error) {
	r, err := Registry()
	if err != nil {
		return nil, err
	}
	return schema.JSONSchema(map[string][]string{"pipeline[].kind": r.Names()})
}

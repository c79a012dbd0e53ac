// Package engine is perfdag's generic, domain-free core: the step-kind contract and registry.
// Its subpackages load and validate campaign YAML (load, diag, gate), compile it into a DAG
// (plan), run that DAG with checkpoints (run, checkpoint, fingerprint, events) and schedule
// campaigns (schedule). The engine knows the Kind contract, never one step kind.
package engine

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Scope says what one node of a step kind runs for.
type Scope string

// The three scopes a step expands over (foreach).
const (
	ScopeCampaign Scope = "campaign"
	ScopeCell     Scope = "cell"
	ScopePoint    Scope = "point"
)

// Kind is one step kind: everything the engine needs to validate, fingerprint and run it.
// A step-kind package exports one Kind value; registering it is one line in steps/registry.go.
type Kind struct {
	Name          string // kebab-case name used in `kind:`
	Scope         Scope  // natural scope; `foreach:` defaults to it
	AnyScope      bool   // `foreach:` may choose any scope (exec)
	Version       string // bump when the kind's behaviour changes: enters every fingerprint
	HoldsEndpoint bool   // runs load against an endpoint: serialized per endpoint
	// Tolerant kinds run even when some data dependencies failed, seeing only those that
	// succeeded (Terraform's TolerantVertex): one failed point must not cost the atlas and the
	// report of a forty-cell campaign. A gate refusal still blocks them.
	Tolerant bool
	// ActsOnPass says the node acts on the campaign being good (publishes, promotes, deploys):
	// a fail verdict on any node it reads from, transitively, blocks it. Analysis and the
	// report never act on a pass, so a failed gate never costs the evidence. Nil means never.
	ActsOnPass func(t *Task) bool
	// ReadsVerdicts gives the node the gate verdicts of every node it reads from, transitively
	// (Task.Verdicts); the campaign's gate definitions and those verdicts enter its
	// fingerprint, so tightening a gate re-runs the report instead of reusing a stale one.
	ReadsVerdicts bool
	// Precedes says the node is a condition of the nodes that need it (a pause before a point),
	// not data for them: it is reused only while they are, so a point that re-runs after a
	// crash or an edit starts right after it again, never in the wake of other work.
	Precedes bool
	Doc      string // one line for `perfdag kinds` and the docs
	// Fanout makes the kind's nodes expand at run time into point groups of their cell (see
	// Fanout); only cells the registry's Expands selects get such a node, the others skip it.
	// Nil for every ordinary kind.
	Fanout *FanoutSpec

	// Params returns a pointer to a fresh parameter struct that `with:` decodes into strictly
	// (unknown keys are errors). Nil means the kind takes no parameters.
	Params func() any
	// Result is the zero value of the kind's result struct; gates on this kind compile
	// against its json field names. Nil means results are free-form (exec).
	Result any
	// Inputs returns what the node's result depends on beyond its params (the parts of the
	// campaign it reads), for the fingerprint. Nil means the resolved cell (minus its
	// concurrency list) and the point. Secrets must never be returned.
	Inputs func(t *Task) any
	// SecretEnv maps the parameters that name an environment variable holding a secret (a
	// token's *_env) to the variable they name in params ("" when unset), so an export to
	// another engine passes those variables to its pods and can tell a user where a credential
	// goes. Nil means the kind reads no secret from the environment.
	SecretEnv func(params any) map[string]string
	// Check validates a step's parameters against the campaign at validate time; each
	// error is reported at the step's position. Nil means no extra checks.
	Check func(c *schema.Campaign, step *schema.PipelineStep, params any) []error
	// Run does the work. It writes files only under Task.Dir and lists them in Result.Outputs.
	Run func(ctx context.Context, t *Task) (Result, error)
}

// Task is what one node's Run receives.
type Task struct {
	Node        string               // node id, e.g. run-shape[aa-10k/c16]
	Step        string               // pipeline step id
	Phase       string               // "before" or "after" for a bracketing step, else ""
	Campaign    *schema.Campaign     // defaults already merged into every cell
	Cell        *schema.Cell         // nil at campaign scope
	Load        schema.Load          // the point's load (an opaque key to the engine); zero unless point scope
	Endpoint    *schema.Endpoint     // the node's endpoint, nil when it has none
	EndpointKey string               // the endpoint's name in the campaign
	Params      any                  // decoded `with:` (the Kind.Params type), nil when none
	Dir         string               // campaign directory (absolute)
	BaseDir     string               // directory of the campaign file: relative paths in it resolve here
	Upstream    []Upstream           // results of the node's data dependencies, in plan order
	Verdicts    []schema.GateVerdict // ReadsVerdicts kinds: verdicts of every node read from, in plan order
	Files       campaigndir.Reader   // reads finished steps' outputs, checked against their recorded digests
	Env         any                  // what Registry.Setup returned for this run (e.g. started simulators)
	Log         io.Writer            // the node's log; never write secrets to it
	Progress    func(line string)
}

// Upstream is a finished dependency's result as a downstream node sees it.
type Upstream struct {
	Node   string
	Step   string
	Kind   string
	Cell   string
	Load   schema.Load // the upstream's point, zero unless point scope
	Result any         // the kind's result struct (pointer), or map[string]any for free-form kinds
	// Outputs are the files the node wrote (relative path → sha256) as its checkpoint records them.
	Outputs map[string]string
	// Failed is the error of a step that failed but kept its result as evidence (a point whose
	// every request failed); only tolerant kinds see such upstreams. "" when it succeeded.
	Failed string
}

// Result is what a node produced.
type Result struct {
	Value   any      // the kind's result struct (gates read its fields); stored in the checkpoint
	Outputs []string // files written, relative to Task.Dir; their digests feed downstream fingerprints
	Summary string   // one line for status and progress
}

// Refusal is the error a step returns when it worked but refuses the campaign (strict publish
// finding the evidence too weak): the node counts as refused, not failed, and the run exits
// with the refusal code (4) instead of the failure code.
type Refusal struct {
	Reasons []string
}

func (r *Refusal) Error() string { return "refused: " + strings.Join(r.Reasons, "; ") }

// Code is the exit code of a refusal (a gate or strict publish refused).
func (r *Refusal) Code() int { return 4 }

// FieldError lets a Kind's Check point at a key of the campaign file, e.g.
// "cells[1].workload.shape", so the author sees file:line:col instead of a bare message.
type FieldError struct {
	Path string // decoder path: cells[1].workload.shape, pipeline[2].with.file
	Err  error
	Hint string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// Registry holds the step kinds a run may use, the default pipeline and run-wide setup.
type Registry struct {
	kinds map[string]Kind
	// Default expands a campaign without `pipeline:` into its default pipeline.
	Default func(c *schema.Campaign) []schema.PipelineStep
	// Setup prepares run-wide resources (e.g. in-process simulators); the value is passed to
	// every Task as Env and cleanup runs when the walk ends.
	Setup func(ctx context.Context, c *schema.Campaign) (env any, cleanup func(), err error)
	// RuleContext adds the domain's fields every gate and `when:` rule may read besides a
	// result (a cell's identity, its shape): the engine never knows what a cell is made of.
	// The generic fields (campaign, kind, cells, step, cell, concurrency, request_rate, load)
	// are always there.
	RuleContext func(c *schema.Campaign, cell *schema.Cell, l schema.Load, step string) map[string]any
	// Files checks, at validate time, the files the campaign names outside itself that the
	// domain reads (an endpoint's tokenizer file, ...), relative paths resolving in baseDir; a
	// FieldError places its problem at the key that names the file.
	Files func(c *schema.Campaign, baseDir string) []error
	// Expands selects the cells whose points a Fanout kind decides at run time: their
	// point-scope steps compile to no static nodes. Nil means none.
	Expands func(cell *schema.Cell) bool
}

// ClearFanoutFields clears, on a copy of a cell, what the registry's fan-out kinds decide with
// (FanoutSpec.Decides), for fingerprints of the nodes that do not decide.
func (r *Registry) ClearFanoutFields(cell *schema.Cell) {
	if r == nil {
		return
	}
	for _, k := range r.kinds {
		if k.Fanout != nil && k.Fanout.Decides != nil {
			k.Fanout.Decides(cell)
		}
	}
}

// ExpandsCell reports whether the cell's points are decided at run time.
func (r *Registry) ExpandsCell(cell *schema.Cell) bool {
	return r != nil && r.Expands != nil && cell != nil && r.Expands(cell)
}

// NewRegistry builds a registry; duplicate or malformed kinds are programming errors.
func NewRegistry(kinds ...Kind) (*Registry, error) {
	r := &Registry{kinds: map[string]Kind{}}
	for _, k := range kinds {
		if k.Name == "" || k.Run == nil || k.Version == "" {
			return nil, fmt.Errorf("register kind %q: name, version and run are required", k.Name)
		}
		switch k.Scope {
		case ScopeCampaign, ScopeCell, ScopePoint:
		default:
			return nil, fmt.Errorf("register kind %q: unknown scope %q", k.Name, k.Scope)
		}
		if _, dup := r.kinds[k.Name]; dup {
			return nil, fmt.Errorf("register kind %q: registered twice", k.Name)
		}
		k.Run = redacted(k.Run)
		r.kinds[k.Name] = k
	}
	return r, nil
}

// RuleEnv is what every gate and `when:` rule reads besides a result: the generic context and
// the fields the registry's RuleContext adds (a cell's identity, its workload shape, ...).
func (r *Registry) RuleEnv(c *schema.Campaign, cell *schema.Cell, l schema.Load, step string) map[string]any {
	env := gate.Context(c, cell, l, step)
	if r != nil && r.RuleContext != nil {
		for k, v := range r.RuleContext(c, cell, l, step) {
			env[k] = v
		}
	}
	return env
}

// redacted wraps a kind's Run so nothing it reports — its error (journal, events, the CLI),
// its summary, its log — carries a URL password, a DSN password or a registered secret, even
// when a library quoted a URL into an error.
func redacted(run func(context.Context, *Task) (Result, error)) func(context.Context, *Task) (Result, error) {
	return func(ctx context.Context, t *Task) (Result, error) {
		if t != nil && t.Log != nil {
			t.Log = redact.Writer(t.Log)
		}
		out, err := run(ctx, t)
		out.Summary = redact.String(out.Summary)
		return out, redact.Error(err)
	}
}

// Lookup finds a kind by name.
func (r *Registry) Lookup(name string) (Kind, bool) {
	k, ok := r.kinds[name]
	return k, ok
}

// Names lists the registered kinds, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.kinds))
	for n := range r.kinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

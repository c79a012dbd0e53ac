// Package campaign is the campaign service: it compiles a campaign file, creates or resumes
// its directory, runs it, and opens a finished one for the verbs that read results (report,
// publish, baseline, tpm, status) — refusing a directory whose results no longer match its
// frozen file. The CLI and the scheduler both call it; neither re-implements it.
package campaign

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/engine/workspace"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Service runs and reads campaigns with one step registry.
type Service struct {
	Registry *engine.Registry
	Version  string    // perfdag's version, recorded in every run
	Log      io.Writer // the nodes' logs (nil discards them)
	// Redact makes a URL safe to record (user info and secrets removed); nil drops user info.
	Redact func(string) string
	// Lookup is the environment for ${VAR} (nil: the process environment).
	Lookup func(string) (string, bool)
}

// Compiled is a loaded campaign and its plan.
type Compiled struct {
	File *load.Campaign
	Plan *plan.Plan
}

// Spec is the campaign with its defaults merged.
func (c *Compiled) Spec() *schema.Campaign { return c.File.Spec }

// Compile loads, validates and compiles a campaign file (src nil reads path). An invalid file
// is an Error with CodeInvalid wrapping the positioned problems (a diag.List); a cycle is
// positioned at the step that closes it.
func (s *Service) Compile(path string, src []byte, baseDir string) (*Compiled, error) {
	opts := load.Options{Lookup: s.Lookup}
	var c *load.Campaign
	var err error
	if src == nil {
		c, err = load.File(path, s.Registry, opts)
	} else {
		c, err = load.Bytes(path, baseDir, src, s.Registry, opts)
	}
	if err != nil {
		return &Compiled{File: c}, invalid(err)
	}
	p, err := plan.Compile(c)
	var cyc *plan.CycleError
	if errors.As(err, &cyc) {
		var l diag.List
		line, col := c.Position(fmt.Sprintf("pipeline[%d].needs", cyc.Step))
		l.Add(c.File, line, col, "break the cycle: remove one of these needs or brackets", "%s", cyc.Error())
		return &Compiled{File: c}, Coded(CodeInvalid, l)
	}
	if err != nil {
		return &Compiled{File: c}, Coded(CodeInvalid, err)
	}
	return &Compiled{File: c, Plan: p}, nil
}

func invalid(err error) error {
	var l diag.List
	if errors.As(err, &l) {
		return Coded(CodeInvalid, l)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return Coded(CodeUsage, err)
	}
	return Coded(CodeInvalid, err)
}

// Frozen compiles the campaign a directory froze, with its relative paths resolving where
// the original file was.
func (s *Service) Frozen(dir string) (*Compiled, campaigndir.Info, error) {
	info, err := campaigndir.ReadInfo(dir)
	if err != nil {
		return nil, info, Coded(CodeUsage, err)
	}
	src, err := load.ReadSource(campaigndir.Config(dir))
	if err != nil {
		return nil, info, Coded(CodeUsage, fmt.Errorf("read the frozen campaign file: %w", err))
	}
	c, err := s.Compile(campaigndir.Config(dir), src, info.BaseDir)
	return c, info, err
}

// RunOptions tune a run.
type RunOptions struct {
	Out      string // campaign directory; "" creates Root/<UTC-ts>-<slug>
	Root     string // where new campaign directories are created (default "campaigns")
	Parallel int
	Only     []string
	Force    []string
	RunID    string
	// Slice runs as one task of an exported workflow (needs Out): it waits for the directory
	// instead of failing when another process holds it, when the nodes Only names all belong
	// to one cell it shares the directory with other cells' slices (see run.Options), and
	// once it finished it succeeds whatever its steps did (only an interrupted or broken
	// slice fails, to be retried).
	Slice   bool
	Observe func(events.Event)
	// Started is called once the directory is ready and locked, before any node runs.
	Started func(dir string, c *Compiled)
	// Edit, when set, rewrites the campaign file's text before it is compiled and frozen (the
	// scheduler adds the values it resolved outside the file); the run is then exactly a run
	// of the edited text, which config.yaml keeps.
	Edit func(src []byte, spec *schema.Campaign) ([]byte, error)
}

// Outcome is what a run did.
type Outcome struct {
	Dir     string
	Summary *run.Summary
}

// RunFile runs a campaign file into a new directory, or into o.Out (an existing campaign
// directory runs only what the edit changed). The error carries the exit code: a failed step,
// a fail gate, an interrupt.
func (s *Service) RunFile(ctx context.Context, path string, o RunOptions) (*Outcome, error) {
	c, err := s.Compile(path, nil, "")
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(path)
	if o.Edit != nil {
		src, err := o.Edit(c.File.Source, c.Spec())
		if err != nil {
			return nil, Coded(CodeUsage, fmt.Errorf("%s: %w", path, err))
		}
		if c, err = s.Compile(path, src, filepath.Dir(abs)); err != nil {
			return nil, err
		}
	}
	return s.run(ctx, c, abs, o)
}

// Resume continues a campaign from its directory's frozen file.
func (s *Service) Resume(ctx context.Context, dir string, o RunOptions) (*Outcome, error) {
	c, info, err := s.Frozen(dir)
	if err != nil {
		return nil, err
	}
	o.Out = dir
	return s.run(ctx, c, info.SourcePath, o)
}

func (s *Service) run(ctx context.Context, c *Compiled, sourcePath string, o RunOptions) (*Outcome, error) {
	if err := checkSelection(c, o.Out, o); err != nil {
		return nil, err // before a directory is made for a run that would select nothing
	}
	src := c.File.Source
	info := s.info(c, sourcePath)
	dir := o.Out
	if dir == "" {
		var err error
		if dir, err = workspace.Create(orDefault(o.Root, "campaigns"), c.Spec().Campaign, time.Now(), src, info); err != nil {
			return nil, err
		}
	} else if _, err := workspace.Usable(dir); err != nil {
		return nil, Coded(CodeUsage, fmt.Errorf("--out: %w", err))
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cell := ""
	if o.Slice {
		if o.Out == "" {
			return nil, Coded(CodeUsage, fmt.Errorf("a slice runs into a given campaign directory: --slice needs --out"))
		}
		cell = SliceCell(c.Plan, o.Only)
	}
	unlock, err := lockDir(ctx, dir, o.Slice, cell)
	if err != nil {
		return nil, Coded(CodeFailed, err)
	}
	defer unlock()
	if o.Out != "" {
		freeze := workspace.Freeze
		if cell != "" {
			freeze = func(dir string, src []byte, info campaigndir.Info) error {
				return workspace.FreezeShared(ctx, dir, src, info)
			}
		}
		if err := freeze(dir, src, info); err != nil {
			return nil, err
		}
	}
	if o.Started != nil {
		o.Started(dir, c)
	}
	r := run.New(c.Plan, dir, run.Options{Parallel: o.Parallel, Only: o.Only, Force: o.Force, RunID: o.RunID,
		Registry: s.Registry, Observe: o.Observe, Log: s.Log, Slice: cell})
	sum, err := r.Run(ctx)
	if err != nil {
		return &Outcome{Dir: dir}, err
	}
	if err := run.WriteSummary(dir, c.Spec().Campaign, sum); err != nil {
		return &Outcome{Dir: dir, Summary: sum}, err
	}
	err = runError(dir, sum)
	if o.Slice && !sum.Interrupted {
		// A slice that finished exits 0 even when its steps failed or a fail gate stands: its
		// dependents' tasks must still run, to block or tolerate those outcomes as one run
		// would. The workflow's last task (status --check) exits with the campaign's code.
		err = nil
	}
	return &Outcome{Dir: dir, Summary: sum}, err
}

// SliceCell is the cell every node the globs name belongs to, or "" when they name none, a
// campaign-scope node, or nodes of two cells: such a slice takes the directory whole.
func SliceCell(p *plan.Plan, only []string) string {
	cell := ""
	for _, n := range p.Nodes {
		named := false
		for _, g := range only {
			named = named || run.Match(g, n.ID)
		}
		switch {
		case !named:
		case n.Cell == nil, cell != "" && n.Cell.ID != cell:
			return ""
		default:
			cell = n.Cell.ID
		}
	}
	return cell
}

// lockDir takes the campaign directory: whole and at once for a run (another process there is
// an error), or — for a slice — waiting, whole or, for a cell's slice, shared with other
// cells' slices plus the cell's own lock.
func lockDir(ctx context.Context, dir string, slice bool, cell string) (func(), error) {
	if !slice {
		return workspace.Lock(dir)
	}
	if cell == "" {
		return workspace.LockWait(ctx, dir, workspace.Whole)
	}
	unlockDir, err := workspace.LockWait(ctx, dir, workspace.Shared)
	if err != nil {
		return nil, err
	}
	unlockCell, err := workspace.LockSlice(ctx, dir, cell)
	if err != nil {
		unlockDir()
		return nil, err
	}
	return func() { unlockCell(); unlockDir() }, nil
}

// runError is the error a finished run stands for, with its exit code; nil when it succeeded.
func runError(dir string, sum *run.Summary) error {
	switch {
	case sum.Interrupted:
		return Coded(CodeInterrupted, fmt.Errorf("interrupted: continue with 'perfdag resume %s'", dir))
	case sum.Failed():
		return Coded(CodeFailed, fmt.Errorf("%s failed (see 'perfdag status %s')", plural.N(sum.Counts[run.OutFailed], "step"), dir))
	case sum.Refused():
		return Coded(CodeRefused, fmt.Errorf("%s did not pass a fail gate (see 'perfdag status %s')", plural.N(sum.Counts[run.OutGateFailed], "step"), dir))
	}
	return nil
}

// DryRun says what a run of c in dir would do, writing nothing.
func (s *Service) DryRun(c *Compiled, dir string, o RunOptions) ([]*run.Decision, error) {
	if err := checkSelection(c, dir, o); err != nil {
		return nil, err
	}
	return run.New(c.Plan, dir, run.Options{Registry: s.Registry, Only: o.Only, Force: o.Force}).DryRun()
}

// checkSelection refuses, as bad usage, an --only or --force pattern that matches no node of
// the plan or of the probes dir's fan-out nodes made.
func checkSelection(c *Compiled, dir string, o RunOptions) error {
	err := run.CheckSelection(c.Plan, dir, run.Options{Only: o.Only, Force: o.Force})
	if errors.As(err, new(*run.Unselected)) {
		return Coded(CodeUsage, fmt.Errorf("%w\n  'perfdag plan FILE' lists every node id, 'perfdag status DIR' also the probes a search made; "+
			"* matches any text, ? one character", err))
	}
	return err
}

// info is the run record of a campaign: nothing secret, addresses redacted.
func (s *Service) info(c *Compiled, sourcePath string) campaigndir.Info {
	spec := c.Spec()
	host, _ := os.Hostname()
	info := campaigndir.Info{Campaign: spec.Campaign, SourcePath: sourcePath, BaseDir: c.File.BaseDir,
		Version: s.Version, Host: host, Kind: spec.Kind}
	if spec.Source != nil {
		src := *spec.Source
		src.URL = s.redact(src.URL)
		info.Source = &src
	}
	names := make([]string, 0, len(spec.Endpoints))
	for n := range spec.Endpoints {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		ep := spec.Endpoints[n]
		e := campaigndir.EndpointInfo{Name: n, URL: s.redact(ep.URL), Model: ep.Model,
			APIKeyEnv: ep.APIKeyEnv, MetricsURL: s.redact(ep.MetricsURL), TokenBasis: ep.Basis(c.File.BaseDir)}
		if schema.IsTokenizerBasis(e.TokenBasis) {
			e.TokenizerSHA256 = fileSHA256(c.File.BaseDir, ep.Tokenizer)
		}
		info.Endpoints = append(info.Endpoints, e)
	}
	deliveries := map[string]bool{}
	for _, cell := range spec.Cells {
		if cell.Delivery != "" && !deliveries[cell.Delivery] {
			deliveries[cell.Delivery] = true
			info.Deliveries = append(info.Deliveries, cell.Delivery)
		}
	}
	slices.Sort(info.Deliveries)
	return info
}

func (s *Service) redact(u string) string {
	if s.Redact != nil {
		return s.Redact(u)
	}
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	p.User = nil
	return p.String()
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// fileSHA256 is the hex SHA-256 of a file the campaign names (relative to its directory);
// empty when it cannot be read (validation reported that already).
func fileSHA256(baseDir, path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(baseDir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Package exec is the general step kind: run a program with arguments, environment, working
// directory and timeout. Users need it for deploy, restart and notify steps; when its stdout is
// a JSON object, that object is the node's result, so gates can read it.
package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
)

// Kind is the exec step kind.
var Kind = engine.Kind{
	Name:     "exec",
	Scope:    engine.ScopeCampaign,
	AnyScope: true,
	Version:  "1",
	Doc:      "run a command; a JSON object on stdout becomes the result gates read",
	Params:   func() any { return &Params{} },
	Check:    check,
	Run:      run,
	// A command after a measurement usually acts on it (deploy, promote): a fail gate standing
	// on what it reads blocks it, unless always: true (notify, clean up).
	ActsOnPass: func(t *engine.Task) bool {
		p, _ := t.Params.(*Params)
		return p == nil || !p.Always
	},
}

// Params are exec's `with:`.
type Params struct {
	Command []string          `yaml:"command" json:"command" doc:"argv: program and arguments (no shell)"`
	Env     map[string]string `yaml:"env,omitempty" json:"env,omitempty" doc:"extra environment variables"`
	Dir     string            `yaml:"dir,omitempty" json:"dir,omitempty" doc:"working directory (default: the campaign directory)"`
	Timeout schema.Duration   `yaml:"timeout,omitempty" json:"timeout,omitempty" doc:"kill the command after this long (e.g. 30s)"`
	Always  bool              `yaml:"always,omitempty" json:"always,omitempty" doc:"run even when a fail gate stands on a step it reads (notifications, cleanup); default false: a fail gate blocks it"`
}

// RunSpec runs a command spec outside the DAG as a node named node of campaign c would run
// (the schedule's on_red): always, with its log under dir/logs and dir relative to baseDir.
func RunSpec(ctx context.Context, spec schema.ExecSpec, c *schema.Campaign, node, baseDir, dir string) error {
	p := &Params{Command: spec.Command, Env: spec.Env, Dir: spec.Dir, Timeout: spec.Timeout, Always: true}
	t := &engine.Task{Node: node, Step: node, Campaign: c, Params: p, Dir: dir, BaseDir: baseDir, Log: io.Discard, Progress: func(string) {}}
	_, err := run(ctx, t)
	return err
}

func check(_ *schema.Campaign, step *schema.PipelineStep, params any) []error {
	p, _ := params.(*Params)
	if p == nil || len(p.Command) == 0 {
		return []error{fmt.Errorf("step %s: with.command is required, e.g. command: [./deploy.sh, --model, m]", step.ID)}
	}
	return nil
}

// Result is what an exec node records when its stdout is not a JSON object.
type Result struct {
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout,omitempty"`
}

const maxStdout = 1 << 20

func run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	p := t.Params.(*Params)
	if p.Timeout.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Timeout.Duration)
		defer cancel()
	}
	logRel := filepath.Join("logs", fileSafe(t.Node)+".log")
	if err := os.MkdirAll(filepath.Join(t.Dir, "logs"), 0o755); err != nil {
		return engine.Result{}, fmt.Errorf("create logs dir: %w", err)
	}
	logf, err := os.Create(filepath.Join(t.Dir, logRel))
	if err != nil {
		return engine.Result{}, fmt.Errorf("create log: %w", err)
	}
	defer logf.Close()

	cmd := osexec.CommandContext(ctx, p.Command[0], p.Command[1:]...)
	cmd.Dir = t.Dir
	if p.Dir != "" {
		cmd.Dir = p.Dir
		if !filepath.IsAbs(p.Dir) {
			cmd.Dir = filepath.Join(t.BaseDir, p.Dir)
		}
	}
	cmd.Env = environ(t, p.Env)
	var stdout bytes.Buffer
	cmd.Stdout = io.MultiWriter(&limited{w: &stdout, n: maxStdout}, logf)
	cmd.Stderr = logf
	// SIGTERM first so the child can clean up; SIGKILL after a grace period. If perfdag itself
	// dies (kill -9), the child dies with it rather than finishing unobserved.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return engine.Result{}, fmt.Errorf("%s timed out after %s (log: %s)", p.Command[0], p.Timeout.Duration, logRel)
	}
	if err != nil {
		var ee *osexec.ExitError
		if errors.As(err, &ee) {
			return engine.Result{}, fmt.Errorf("%s exited with status %d (log: %s): %s", p.Command[0], ee.ExitCode(), logRel, tail(stdout.String()))
		}
		return engine.Result{}, fmt.Errorf("run %s: %w", p.Command[0], err)
	}
	if err := logf.Sync(); err != nil {
		return engine.Result{}, err
	}
	out := engine.Result{Outputs: []string{logRel}, Summary: "exit 0: " + firstLine(stdout.String())}
	var obj map[string]any
	if json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &obj) == nil && obj != nil {
		out.Value = obj
	} else {
		out.Value = map[string]any{"exit_code": 0, "stdout": tail(stdout.String())}
	}
	return out, nil
}

// environ passes the process environment, the campaign coordinates, and the step's env.
func environ(t *engine.Task, extra map[string]string) []string {
	env := os.Environ()
	add := func(k, v string) { env = append(env, k+"="+v) }
	add("PERFDAG_CAMPAIGN", t.Campaign.Campaign)
	add("PERFDAG_DIR", t.Dir)
	add("PERFDAG_NODE", t.Node)
	if t.Cell != nil {
		add("PERFDAG_CELL", t.Cell.ID)
	}
	if !t.Load.IsZero() {
		add("PERFDAG_LOAD", t.Load.Key())
		if n := t.Load.InFlight(); n > 0 {
			add("PERFDAG_CONCURRENCY", fmt.Sprint(n)) // a rate point's in-flight cap
		}
		if t.Load.IsRate() {
			add("PERFDAG_REQUEST_RATE", schema.FormatRate(t.Load.Rate))
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add(k, extra[k])
	}
	return env
}

func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 400 {
		return "…" + s[len(s)-400:]
	}
	return s
}

type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

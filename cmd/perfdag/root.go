package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine/redact"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// app carries the streams a command writes to, so tests can capture them.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

const rootLong = `perfdag benchmarks LLM inference deployments (vLLM, SGLang, Dynamo, any
OpenAI-compatible endpoint). A campaign YAML compiles into a DAG of typed steps —
prewarm, burn-in, settle, run-shape, scrape-spec, dcgm-correlate, roofline-import,
aggregate, render, strict-publish, champion-select, exec — each checkpointed, so a
campaign killed at any moment resumes where it stopped.

Start here:
  perfdag run pipelines/quickstart.yaml     run a campaign (built-in simulator)
  perfdag validate FILE                     check a campaign file, every error at once
  perfdag plan FILE                         show the DAG before anything runs
  perfdag resume DIR                        continue an interrupted campaign
  perfdag status DIR                        what ran, what was reused, gate verdicts

Exit codes: 0 success · 1 a step failed (validate: invalid) · 2 bad usage ·
3 invalid campaign file · 4 a gate or strict publish refused · 130 interrupted.`

// Main runs the CLI and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Last line of defence: whatever a command prints passes engine/redact (every writer of
	// a URL, DSN or header already does; this catches a library's error quoting one).
	stdout, stderr = redact.Writer(stdout), redact.Writer(stderr)
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:           "perfdag",
		Short:         "Benchmark LLM inference deployments with checkpointed campaign DAGs",
		Long:          rootLong,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetIn(stdin)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exit(ExitUsage, fmt.Errorf("%w\nsee '%s --help'", err, c.CommandPath()))
	})
	for _, c := range a.commands() {
		root.AddCommand(c)
	}
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		if msg := err.Error(); msg != "" {
			if strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "accepts ") || strings.HasPrefix(msg, "requires ") {
				err = exit(ExitUsage, err)
			}
			fmt.Fprintf(stderr, "perfdag: %s\n", strings.TrimRight(msg, "\n"))
		}
	}
	return codeOf(err)
}

func (a *app) commands() []*cobra.Command {
	return []*cobra.Command{
		a.validateCmd(), a.planCmd(), a.runCmd(), a.resumeCmd(), a.statusCmd(), a.schemaCmd(), a.kindsCmd(),
		a.reportCmd(), a.smokeCmd(), a.baselineCmd(), a.scheduleCmd(), a.publishCmd(), a.tpmCmd(),
		a.simCmd(), a.datasetCmd(),
	}
}

// usageArgs wraps cobra's argument checks so they exit with the usage code.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return exit(ExitUsage, fmt.Errorf("%w\nsee '%s --help'", err, cmd.CommandPath()))
		}
		return nil
	}
}

var errSilent = errors.New("")

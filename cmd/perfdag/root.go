package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/redact"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// app carries the streams a command writes to, so tests can capture them.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	testKinds      []engine.Kind                       // test doubles registered beside perfdag's kinds (tests only)
	testObserve    func(context.Context, events.Event) // sees each event a run emits, with the run's context (tests only: they stop a run at an exact event)
}

const rootLong = `perfdag benchmarks LLM inference deployments (vLLM, SGLang, Dynamo, any
OpenAI-compatible endpoint). A campaign YAML compiles into a DAG of typed steps
(%s),
each checkpointed, so a campaign killed at any moment resumes where it stopped.

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
	return (&app{stdin: stdin, stdout: stdout, stderr: stderr}).main(args)
}

func (a *app) main(args []string) int {
	// Last line of defence: whatever a command prints passes engine/redact (every writer of
	// a URL, DSN or header already does; this catches a library's error quoting one).
	a.stdout, a.stderr = redact.Writer(a.stdout), redact.Writer(a.stderr)
	stdout, stderr := a.stdout, a.stderr
	defer startCPUProfile(stderr)()
	root := &cobra.Command{
		Use:           "perfdag",
		Short:         "Benchmark LLM inference deployments with checkpointed campaign DAGs",
		Long:          fmt.Sprintf(rootLong, a.kindList()),
		Version:       readBuildInfo(version).Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every command's numeric and output-path flags are checked here, once (flagcheck.go).
		PersistentPreRunE: func(c *cobra.Command, _ []string) error { return checkFlags(c) },
	}
	root.SetVersionTemplate(readBuildInfo(version).text())
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetIn(a.stdin)
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
		a.validateCmd(), a.importCmd(), a.planCmd(), a.runCmd(), a.resumeCmd(), a.statusCmd(), a.schemaCmd(), a.kindsCmd(),
		a.reportCmd(), a.smokeCmd(), a.baselineCmd(), a.scheduleCmd(), a.historyCmd(), a.publishCmd(), a.tpmCmd(),
		a.serveCmd(), a.simCmd(), a.calibrateCmd(), a.datasetCmd(), a.exportCmd(), a.versionCmd(), a.shardCmd(),
	}
}

// usageArgs wraps cobra's argument checks so they exit with the usage code.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return exit(ExitUsage, fmt.Errorf("%w\nusage: %s\nsee '%s --help'", err, cmd.UseLine(), cmd.CommandPath()))
		}
		return nil
	}
}

var errSilent = errors.New("")

// kindList names the registered kinds for the help text (from the registry, never a copy).
func (a *app) kindList() string {
	reg, err := a.registry()
	if err != nil {
		return "see 'perfdag kinds'"
	}
	var b strings.Builder
	width := 1
	for i, n := range reg.Names() {
		if i > 0 {
			b.WriteString(",")
			width++
			if width+len(n) > 86 {
				b.WriteString("\n")
				width = 0
			} else {
				b.WriteString(" ")
				width++
			}
		}
		b.WriteString(n)
		width += len(n)
	}
	return b.String()
}

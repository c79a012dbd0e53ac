package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/measure/workload"
	"github.com/perfdag/perfdag/steps/sim"
)

func (a *app) simCmd() *cobra.Command {
	var addr, model, config string
	var listenFD int
	var cfg schema.SimConfig
	cmd := &cobra.Command{
		Use:   "sim [--addr HOST:PORT]",
		Short: "Run the built-in OpenAI-compatible simulator on its own",
		Long: `Sim serves perfdag's simulator — a test double of a vLLM server — until interrupted:
GET /v1/models, POST /v1/chat/completions (streaming and not; role chunk first, usage
chunk last), GET /metrics (vLLM format, spec-decode counters), GET /dcgm/metrics
(DCGM-exporter GPU gauges). TTFT grows with prompt length and queueing, time per token with
the running batch; faults (500s, 429s, dropped streams, stalls, malformed chunks, SSE error
events, in-band errors) are switchable. Campaigns use it through sim:// endpoints; run it
alone to point other clients (AIPerf, vllm bench) at the same double.

--config reads a YAML file of the sim: block (the keys under endpoints.<name>.sim).`,
		Example: `  perfdag sim --addr 127.0.0.1:8000 --tpot-ms 5
  perfdag sim --config sim.yaml`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if config != "" {
				var fromFile schema.SimConfig
				if err := readYAML(config, &fromFile); err != nil {
					return exit(ExitUsage, err)
				}
				cfg = fromFile
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			if listenFD > 0 {
				return serveInherited(ctx, listenFD, cfg, model)
			}
			fmt.Fprintf(a.stderr, "simulator serving %s on http://%s (Ctrl-C to stop)\n", model, addr)
			return sim.ListenAndServe(ctx, addr, cfg, model)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8000", "listen address")
	f.StringVar(&model, "model", "perfdag/sim-1", "served model name")
	f.StringVar(&config, "config", "", "YAML file with the simulator settings (the sim: block)")
	f.IntVar(&listenFD, "listen-fd", 0, "serve on this inherited listening socket instead of --addr (how perfdag calibrate starts its simulator)")
	f.Float64Var(&cfg.TTFTMs, "ttft-ms", 0, "base time to first token in ms (default 40)")
	f.Float64Var(&cfg.TPOTMs, "tpot-ms", 0, "time per output token at batch 1 in ms (default 8)")
	f.BoolVar(&cfg.ZeroDelay, "zero-delay", false, "stream as fast as possible")
	f.BoolVar(&cfg.Reasoning, "reasoning", false, "behave as a reasoning model")
	f.Float64Var(&cfg.SpecAcceptRate, "spec-accept-rate", 0, "export spec-decode counters at this acceptance rate")
	f.Float64Var(&cfg.Slowdown, "slowdown", 0, "multiply every delay (a degraded server)")
	bound(f, "listen-fd", 0, maxFD, "a file descriptor")
	boundAs[schema.SimConfig](f, "ttft-ms", "TTFTMs", "endpoints.<name>.sim.ttft_ms")
	boundAs[schema.SimConfig](f, "tpot-ms", "TPOTMs", "endpoints.<name>.sim.tpot_ms")
	boundAs[schema.SimConfig](f, "spec-accept-rate", "SpecAcceptRate", "endpoints.<name>.sim.spec_accept_rate")
	boundAs[schema.SimConfig](f, "slowdown", "Slowdown", "endpoints.<name>.sim.slowdown")
	return cmd
}

// maxFD bounds --listen-fd: Linux's default ceiling on a process's descriptors (fs.nr_open).
const maxFD = 1 << 20

// serveInherited serves on the listening socket a parent handed down as file descriptor fd,
// until ctx ends.
func serveInherited(ctx context.Context, fd int, cfg schema.SimConfig, model string) error {
	f := os.NewFile(uintptr(fd), "listener")
	if f == nil {
		return exitf(ExitUsage, "--listen-fd %d: not an open file descriptor", fd)
	}
	ln, err := net.FileListener(f)
	_ = f.Close() // the listener holds its own copy
	if err != nil {
		return exitf(ExitUsage, "--listen-fd %d: %v", fd, err)
	}
	s, err := sim.StartListener(ctx, ln, cfg, model)
	if err != nil {
		ln.Close()
		return err
	}
	<-ctx.Done()
	s.Close()
	return nil
}

func readYAML(path string, v any) error {
	b, err := readFile(path)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalWithOptions(b, v, yaml.DisallowUnknownField()); err != nil {
		return fmt.Errorf("%s: %s", path, yaml.FormatError(err, false, true))
	}
	return nil
}

func (a *app) datasetCmd() *cobra.Command {
	root := &cobra.Command{Use: "dataset", Short: "Generate replay datasets sized in o200k_base tokens"}
	var opts workload.GenerateOptions
	var out string
	gen := &cobra.Command{
		Use:   "generate --shape SHAPE --count N --out FILE",
		Short: "Write a mooncake_trace JSONL of natural-text prompts for dataset-replay cells",
		Long: `Generate writes COUNT requests as mooncake_trace JSONL (text_input, output_length) with
natural English prompts — from perfdag's own text generator, nothing downloaded — each exactly
the shape's input budget in o200k_base tokens, with output_length the shape's answer length.
The same seed writes the same file, so several providers can be measured on identical
prompts: use it as workload.dataset with mode: dataset-replay.`,
		Example: `  perfdag dataset generate --shape aa-10k --count 200 --out data/aa-10k.jsonl
  perfdag dataset generate --shape custom --input-tokens 2048 --output-tokens 256 --count 50 --out d.jsonl`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" || opts.Count <= 0 || opts.Shape == "" {
				return exitf(ExitUsage, "--shape, a positive --count and --out are required")
			}
			if _, err := workload.Resolve(schema.Workload{Shape: opts.Shape, InputTokens: opts.InputTokens, OutputTokens: opts.OutputTokens}); err != nil {
				return exit(ExitUsage, err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			// On a terminal one line counts up; elsewhere (a log, CI) only the total is written,
			// not a run of carriage returns.
			tty := isTerminal(a.stderr)
			opts.Progress = func(done, total int) {
				switch {
				case tty && (done == total || done%max(1, total/20) == 0):
					fmt.Fprintf(a.stderr, "\r%d/%d prompts", done, total)
				case !tty && done == total:
					fmt.Fprintf(a.stderr, "%d/%d prompts", done, total)
				}
			}
			if err := workload.GenerateFile(ctx, opts, out); err != nil {
				fmt.Fprintln(a.stderr)
				if ctx.Err() != nil {
					return exit(ExitInterrupted, fmt.Errorf("interrupted: %s was not written", out))
				}
				if errors.Is(err, workload.ErrTooManyRequests) {
					return exit(ExitUsage, fmt.Errorf("--count %d: %w", opts.Count, err))
				}
				return err
			}
			fmt.Fprintf(a.stderr, "\n")
			fmt.Fprintln(a.stdout, out)
			return nil
		},
	}
	f := gen.Flags()
	f.StringVar(&opts.Shape, "shape", "", "aa-1k, aa-10k, aa-100k or custom")
	f.IntVar(&opts.Count, "count", 0, "number of requests")
	f.IntVar(&opts.InputTokens, "input-tokens", 0, "input budget (custom, or to override the shape)")
	f.IntVar(&opts.OutputTokens, "output-tokens", 0, "answer length (custom, or to override the shape)")
	f.Int64Var(&opts.Seed, "seed", 1, "the same seed writes the same file")
	f.StringVar(&out, "out", "", "JSONL file to write (atomically)")
	bound(f, "count", 0, schema.MaxRequestsPerPoint, "a point sends at most "+strconv.Itoa(schema.MaxRequestsPerPoint)+" requests, and a replay cycles through its prompts")
	boundAs[schema.Workload](f, "input-tokens", "InputTokens", "cells[].workload.input_tokens")
	boundAs[schema.Workload](f, "output-tokens", "OutputTokens", "cells[].workload.output_tokens")
	boundAs[schema.Workload](f, "seed", "Seed", "cells[].workload.seed")
	output(f, "out", campaigndir.TargetFile)
	root.AddCommand(gen)
	return root
}

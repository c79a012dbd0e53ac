package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/engine/workspace"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/calibrate"
)

func (a *app) calibrateCmd() *cobra.Command {
	var dir, root string
	var asJSON bool
	var requests, maxStreams int
	cmd := &cobra.Command{
		Use:   "calibrate FILE [--dir DIR]",
		Short: "Measure this machine's own client overhead and record it in the campaign directory",
		Long: `Calibrate measures what this machine's client adds to the numbers it measures, at each
distinct concurrency of the campaign's measured cells (imported cells are another tool's
client): the TTFT error, p50 and p99 — the client's send (start stamp → request written) plus
its receive lag (server wrote the first token → client stamped it), leaving out the server's
own time — and the ingest ceiling (tokens per second the client takes from zero-delay streams
of one-token chunks). It runs perfdag's real client path over loopback HTTP against the
built-in simulator with zero delay, started as a child process so the simulator's work never
runs on the client's Go runtime. Concurrencies above ` + strconv.Itoa(calibrate.MaxConcurrency) + ` are represented by
` + strconv.Itoa(calibrate.MaxConcurrency) + ` (a note says so). Each point takes a second or a few.

It then measures this machine's ceilings — what one client holds: streams (a ladder of
closed-loop points doubling from ` + strconv.Itoa(calibrate.FirstRung) + ` up to --max-streams against a second simulator
pacing each stream at 20 tokens/s; the highest rung whose client was not client_bound and took
90 % of the paced tokens), requests/s (one-token answers) and tokens/s (long answers), both at
zero delay. plan and run warn before a point that asks for more.

The result goes to DIR/calibration.json (calibration_v1). The report's cover then shows the
client's error bar next to TTFT, at the calibrated concurrency nearest the headline's, and
says when the calibration comes from another machine or was made long before or after the
run. Calibrate on the machine and under the load the campaign runs with; nothing else
should run meanwhile (the figures are this machine's, now).

DIR is --dir, or else the newest campaign directory of this campaign under --root (the one
'perfdag resume' and 'perfdag report' would read). To calibrate before a first run, give the
directory the run will use: perfdag calibrate FILE --dir D, then perfdag run FILE --out D.
After a run, 'perfdag report DIR' re-renders the cover with the calibration.

Exit codes: 0 calibrated · 1 the measurement failed or DIR is busy · 2 bad usage, no
directory, or a DIR that is another campaign's, inside a campaign directory or cannot be
created · 3 invalid campaign file · 130 interrupted (nothing written).`,
		Example: `  perfdag calibrate campaign.yaml --dir campaigns/weekly
  perfdag calibrate pipelines/quickstart.yaml --json
  perfdag calibrate campaign.yaml --dir campaigns/weekly --requests 200
  perfdag calibrate campaign.yaml --dir campaigns/weekly --max-streams 0`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if maxStreams > 0 && maxStreams < calibrate.FirstRung {
				return exitf(ExitUsage, "--max-streams %d: want 0 (no ceilings) or at least %d, the stream ladder's first rung", maxStreams, calibrate.FirstRung)
			}
			c, _, err := a.compile(args[0], nil, "")
			if err != nil {
				return a.invalid(err, args[0], c)
			}
			targets, skipped := calibrate.Targets(c.Spec)
			if len(targets) == 0 {
				return exitf(ExitUsage, "%s: no cell runs at a concurrency (imported cells are not measured here): nothing to calibrate", args[0])
			}
			if dir == "" {
				if dir, err = newestDir(root, c.Spec.Campaign); err != nil {
					return exit(ExitUsage, err)
				}
			} else if _, err := workspace.Usable(dir); err != nil {
				return exit(ExitUsage, fmt.Errorf("--dir: %w", err))
			} else if err := campaigndir.CheckOwner(dir, c.Spec.Campaign); err != nil {
				return exit(ExitUsage, fmt.Errorf("--dir: %w (its cover would show an error bar measured for another campaign's prompts)", err))
			}
			if len(skipped) > 0 {
				fmt.Fprintf(a.stderr, "note: concurrencies above %d (%s) are represented by c%d\n",
					calibrate.MaxConcurrency, joinInts(skipped), calibrate.MaxConcurrency)
			}
			ctx, stop := interruptible(cmd.Context(), a)
			defer stop()
			cal, err := a.calibrate(ctx, dir, c.Spec.Campaign, targets, requests, maxStreams)
			if err != nil {
				if ctx.Err() != nil {
					return exit(ExitInterrupted, fmt.Errorf("interrupted: %s was not written", campaigndir.Abs(dir, campaigndir.Calibration())))
				}
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, cal)
			}
			printCalibration(a.stdout, cal)
			fmt.Fprintln(a.stderr, campaigndir.Abs(dir, campaigndir.Calibration()))
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "campaign directory to record the calibration in (created when missing)")
	cmd.Flags().StringVar(&root, "root", "campaigns", "where to look for the campaign's newest directory when --dir is not given")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the calibration (calibration_v1) as JSON on stdout")
	cmd.Flags().IntVar(&maxStreams, "max-streams", calibrate.DefaultMaxStreams, "the stream ladder's top: rungs double from "+strconv.Itoa(calibrate.FirstRung)+" up to it (lowered to what the open-file limit allows); 0 measures no ceilings")
	bound(cmd.Flags(), "max-streams", 0, 100_000, "0 (no ceilings), or the ladder's top from "+strconv.Itoa(calibrate.FirstRung)+", a concurrency as cells[].concurrencies")
	cmd.Flags().IntVar(&requests, "requests", 0, "TTFT requests per concurrency (default 4 × concurrency, at least 64; at least 20 for aa-100k-sized prompts)")
	bound(cmd.Flags(), "requests", 0, schema.MaxRequestsPerPoint, "0: the default; a point sends at most "+strconv.Itoa(schema.MaxRequestsPerPoint)+" requests, as cells[].requests_per_point in a campaign file")
	output(cmd.Flags(), "dir", campaigndir.TargetCampaign)
	return cmd
}

// calibrate holds the directory's lock (no run measures beside it), measures, and writes
// calibration.json atomically.
func (a *app) calibrate(ctx context.Context, dir, slug string, targets []calibrate.Target, requests, maxStreams int) (*schema.Calibration, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, exit(ExitUsage, fmt.Errorf("--dir %s cannot be created: %w", dir, err))
	}
	unlock, err := workspace.Lock(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	host, _ := os.Hostname()
	m := schema.CalibrationMachine{Host: host, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, NumCPU: runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), Version: readBuildInfo(version).Version}
	var ok bool
	m.LoadAvg, ok = loadAvg()
	m.LoadAvgUnknown = !ok
	child, err := startSim(ctx, calibrateModel, "--zero-delay")
	if err != nil {
		return nil, err
	}
	defer child.stop()
	o := calibrate.Options{BaseURL: child.url, Model: calibrateModel,
		Salt: filepath.Base(dir) + "/" + strconv.FormatInt(time.Now().UnixNano(), 36), Requests: requests,
		Truth: child.served, CPU: cpuTime,
		Progress: func(line string) { fmt.Fprintln(a.stderr, line) }}
	points, err := calibrate.Run(ctx, targets, o)
	if err != nil {
		return nil, err
	}
	var ceilings *schema.CalibrationCeilings
	if maxStreams > 0 {
		if ceilings, err = a.ceilings(ctx, o, maxStreams); err != nil {
			return nil, err
		}
	}
	m.LoadAvgAfter, _ = loadAvg()
	cal := &schema.Calibration{Schema: schema.SchemaCalibration, Campaign: slug, Created: time.Now().UTC().Truncate(time.Second),
		Machine: m, Method: calibrate.Method, Points: points, Ceilings: ceilings}
	if _, err := campaigndir.WriteJSON(dir, campaigndir.Calibration(), cal); err != nil {
		return nil, err
	}
	return cal, nil
}

// calibrateModel is the model name the calibration's simulator serves.
const calibrateModel = "perfdag/calibrate"

// newestDir is the newest campaign directory of slug under root (by creation time in run.json).
func newestDir(root, slug string) (string, error) {
	entries, err := os.ReadDir(root)
	if err != nil && !os.IsNotExist(err) {
		return "", fmt.Errorf("look for campaign directories in %s: %w", root, err)
	}
	best, bestAt := "", time.Time{}
	for _, e := range entries {
		d := filepath.Join(root, e.Name())
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		info, err := campaigndir.ReadInfo(d)
		if err != nil || info.Campaign != slug {
			continue
		}
		if best == "" || info.Created.After(bestAt) {
			best, bestAt = d, info.Created
		}
	}
	if best == "" {
		return "", fmt.Errorf("no campaign directory of %s under %s: give the one the run will use with --dir DIR (then perfdag run FILE --out DIR)", slug, root)
	}
	return best, nil
}

// printCalibration is the table a person reads: per concurrency, the TTFT error and the
// ingest ceiling, with the machine and its load.
func printCalibration(w io.Writer, c *schema.Calibration) {
	m := c.Machine
	load := "load average unknown"
	if !m.LoadAvgUnknown {
		load = fmt.Sprintf("load average %.2f %.2f %.2f → %.2f %.2f %.2f", m.LoadAvg[0], m.LoadAvg[1], m.LoadAvg[2],
			m.LoadAvgAfter[0], m.LoadAvgAfter[1], m.LoadAvgAfter[2])
	}
	fmt.Fprintf(w, "calibration of %s on %s %s/%s, %s, %s\n", c.Campaign, m.Host, m.GOOS, m.GOARCH, plural.N(m.NumCPU, "CPU"), load)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "conc\tprompt\trequests\tTTFT err p50 ms\tp99 ms\tsend p99\treceive p99\tingest tok/s\tclient CPU\t")
	f := func(st *schema.Stat, v func(*schema.Stat) float64) string {
		if st == nil {
			return "-"
		}
		return fmt.Sprintf("%.3f", v(st))
	}
	p50 := func(s *schema.Stat) float64 { return s.P50 }
	p99 := func(s *schema.Stat) float64 { return s.P99 }
	for _, p := range c.Points {
		req := strconv.Itoa(p.Requests)
		if p.Failed > 0 {
			req += fmt.Sprintf(" (%d failed)", p.Failed)
		}
		fmt.Fprintf(tw, "c%d\t%d tok\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.0f %%\t\n", p.Concurrency, p.InputTokens, req,
			f(p.TTFTErrorMs, p50), f(p.TTFTErrorMs, p99), f(p.SendMs, p99), f(p.ReceiveMs, p99), p.IngestTokensPerS, p.IngestClientCPUPct)
	}
	if n := clockViolations(c); n > 0 {
		fmt.Fprintf(tw, "warning: %s broke causality between the two processes' clocks: receive times are off by about the clock difference\n", plural.N(n, "request"))
	}
	_ = tw.Flush()
	printCeilings(w, c.Ceilings)
}

// printCeilings is the ceilings' part of the table: what one client held, then the ladder.
func printCeilings(w io.Writer, ce *schema.CalibrationCeilings) {
	if ce == nil {
		return
	}
	fmt.Fprintln(w, "ceilings of one client on this machine (the simulator shares its cores: lower bounds)")
	fmt.Fprintf(w, "  streams       %d at %g tokens/s a stream (%s)\n", ce.Streams, ce.StreamTokensPerS, ce.StreamsEnd)
	fmt.Fprintf(w, "  requests/s    %.0f (one-token answers at c%d, zero delay; client CPU %.0f %% of a core)\n", ce.RequestsPerS, ce.Concurrency, ce.RequestsClientCPUPct)
	fmt.Fprintf(w, "  tokens/s      %.0f (%d-token answers at c%d, zero delay; client CPU %.0f %% of a core)\n", ce.TokensPerS, ce.TokensPerRequest, ce.Concurrency, ce.TokensClientCPUPct)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  rung\trequests\tratio\tclient CPU\tread lag p99 ms\theld\t")
	for _, r := range ce.Rungs {
		cpu, lag := "-", "-"
		if b := r.ClientBound; b != nil {
			cpu = fmt.Sprintf("%.0f %% of %d", b.CPUPct, b.Cores)
			if b.Reads > 0 {
				lag = fmt.Sprintf("%.3g", b.ReadLagP99Ms)
			}
		}
		held := "yes"
		if !r.Held {
			held = "no: " + r.Why
		}
		fmt.Fprintf(tw, "  c%d\t%d\t%.2f\t%s\t%s\t%s\t\n", r.Concurrency, r.Requests, r.Ratio, cpu, lag, held)
	}
	_ = tw.Flush()
}

func clockViolations(c *schema.Calibration) int {
	n := 0
	for _, p := range c.Points {
		n += p.ClockViolations
	}
	return n
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// ceilings starts the paced simulator and measures the ceilings, the ladder topped at
// maxStreams or at what this process's open files allow (each stream holds one; the simulator,
// a Go program too, raises its own limit as this one did).
func (a *app) ceilings(ctx context.Context, o calibrate.Options, maxStreams int) (*schema.CalibrationCeilings, error) {
	cfgFile, err := os.CreateTemp("", "perfdag-paced-sim-*.yaml")
	if err != nil {
		return nil, fmt.Errorf("write the paced simulator's settings: %w", err)
	}
	defer os.Remove(cfgFile.Name())
	b, err := yaml.Marshal(calibrate.PacedSim)
	if err == nil {
		_, err = cfgFile.Write(b)
	}
	if cerr := cfgFile.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write the paced simulator's settings: %w", err)
	}
	paced, err := startSim(ctx, calibrateModel, "--config", cfgFile.Name())
	if err != nil {
		return nil, err
	}
	defer paced.stop()
	co := calibrate.CeilingOptions{ZeroURL: o.BaseURL, PacedURL: paced.url, MaxStreams: maxStreams}
	if files, ok := openFileLimit(); ok {
		if fit := streamsFitting(files); fit < maxStreams {
			co.MaxStreams = fit
			co.Limit = fmt.Sprintf("%d open files allow up to c%d (ulimit -n: raise it to climb higher)", files, fit)
		}
	}
	return calibrate.Ceilings(ctx, o, co)
}

// streamsFitting is the highest rung of the ladder whose connections, with room for
// everything else, fit in files open files.
func streamsFitting(files int) int {
	fit := 0
	for c := calibrate.FirstRung; c+streamsSpare <= files; c *= 2 {
		fit = c
	}
	return fit
}

// streamsSpare are the open files a ladder rung needs beyond its streams' connections: the
// pre-dialled stock, the binary, logs, the simulators' sockets.
const streamsSpare = 256

// warnCeilings prints, on stderr, a warning for each point of spec whose asked load exceeds
// the ceilings of the calibration at path (none when it is missing or has no ceilings; one
// line when it cannot be read).
func (a *app) warnCeilings(spec *schema.Campaign, path string) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var cal schema.Calibration
	if err == nil {
		err = json.Unmarshal(b, &cal)
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "warning: calibration %s unreadable (%v): no point is checked against this machine's ceilings\n", path, err)
		return
	}
	host, _ := os.Hostname()
	for _, w := range calibrate.Warnings(spec, &cal, host) {
		fmt.Fprintf(a.stderr, "warning: %s (%s)\n", w, path)
	}
}

package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/engine/run"
)

func (a *app) statusCmd() *cobra.Command {
	var asJSON, check bool
	cmd := &cobra.Command{
		Use:   "status DIR",
		Short: "Show every node's state, timing, reuse and gate verdicts",
		Long: `Status reads a campaign directory — its frozen config, checkpoints and events.jsonl —
and shows every node of the plan: its state (succeeded, failed, interrupted, running,
crashed, pending, skipped), when it ran and for how long, whether the latest run ran it or
reused its checkpoint (and why), and its gate verdicts. It never writes anything.

--check also exits as the run that left the directory so would have: 1 when a node failed or
never finished, 4 when a fail-severity gate stands or a step refused, else 0. It is the last
task of an exported Argo workflow, whose slices finish with exit 0 whatever their steps did
(their dependents must see failures and verdicts as one run's would).`,
		Example: `  perfdag status campaigns/20261202T130455Z-quickstart
  perfdag status --json DIR | jq '.nodes[] | select(.state != "succeeded")'`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.readStatus(args[0])
			if err != nil {
				return exit(ExitUsage, err)
			}
			if asJSON {
				err = writeJSON(a.stdout, st)
			} else {
				printStatus(a, st)
			}
			if err != nil || !check {
				return err
			}
			return statusExit(st)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	cmd.Flags().BoolVar(&check, "check", false, "exit 1 (a node failed or never finished) or 4 (a fail gate stands) as the run would have")
	return cmd
}

func (a *app) readStatus(dir string) (*campaign.Status, error) {
	svc, err := a.service()
	if err != nil {
		return nil, err
	}
	return svc.Status(dir)
}

func printStatus(a *app, st *campaign.Status) {
	state := "idle"
	if st.Running {
		state = "running now"
	}
	var counts []string
	for _, k := range []string{"succeeded", "stale", "failed", "blocked", "interrupted", "running", "crashed", "pending", "skipped"} {
		if n := st.Counts[k]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, k))
		}
	}
	fmt.Fprintf(a.stdout, "campaign %s (%s; last run %s): %s\n%s\n\n", st.Campaign, state, st.Run, strings.Join(counts, ", "), st.Dir)
	tw := tabwriter.NewWriter(a.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSTATE\tSTARTED\tSECONDS\tLAST RUN\tGATES\tNOTE")
	for _, n := range st.Nodes {
		started := "-"
		if n.StartedAt != nil {
			started = n.StartedAt.Local().Format("01-02 15:04:05")
		}
		secs := "-"
		if n.Seconds > 0 {
			secs = fmt.Sprintf("%.1f", n.Seconds)
		}
		var gates []string
		for _, g := range n.Gates {
			mark := "ok"
			switch {
			case g.Failing():
				mark = "FAILED"
			case !g.Passed:
				mark = "warned"
			}
			gates = append(gates, g.Gate+":"+mark)
		}
		note := firstNonEmpty(firstLine(n.Error), n.Summary, n.Why)
		if len(note) > 80 {
			note = note[:77] + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Node, n.State, started, secs, firstNonEmpty(n.LastRun, "-"), firstNonEmpty(strings.Join(gates, " "), "-"), note)
	}
	tw.Flush()
	// Every verdict that did not pass, with the values its rule read.
	for _, n := range st.Nodes {
		for _, g := range n.Gates {
			if !g.Passed {
				fmt.Fprintln(a.stdout, g.Line())
			}
		}
	}
}

// statusExit is --check's exit: the code of the run that left the directory as it is.
func statusExit(st *campaign.Status) error {
	nodes := strings.Join(limitList(st.Deciding, 3), ", ")
	switch st.Outcome {
	case run.OutPending:
		return exitf(ExitFailed, "%s never finished: %s (continue with 'perfdag resume %s')", plural.N(len(st.Deciding), "node"), nodes, st.Dir)
	case run.OutFailed:
		return exitf(ExitFailed, "%s failed: %s", plural.N(len(st.Deciding), "step"), nodes)
	case run.OutGateFailed:
		return exitf(ExitRefused, "%s did not pass a fail gate: %s", plural.N(len(st.Deciding), "step"), nodes)
	}
	return nil
}

func limitList(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
}

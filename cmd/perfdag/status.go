package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/workspace"
)

// nodeStatus is one row of `perfdag status`.
type nodeStatus struct {
	Node      string         `json:"node"`
	Kind      string         `json:"kind"`
	State     string         `json:"state"`              // succeeded, failed, interrupted, running, crashed, pending, skipped
	LastRun   string         `json:"last_run,omitempty"` // ran, reused, skipped, blocked in the latest run
	Why       string         `json:"why,omitempty"`
	StartedAt *time.Time     `json:"started_at,omitempty"`
	Seconds   float64        `json:"seconds,omitempty"`
	Attempt   int            `json:"attempt,omitempty"`
	Summary   string         `json:"summary,omitempty"`
	Error     string         `json:"error,omitempty"`
	Gates     []gate.Verdict `json:"gates,omitempty"`
}

type campaignStatus struct {
	Campaign string         `json:"campaign"`
	Dir      string         `json:"dir"`
	Run      string         `json:"run"`
	Running  bool           `json:"running"`
	Counts   map[string]int `json:"counts"`
	Nodes    []nodeStatus   `json:"nodes"`
}

func (a *app) statusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status DIR",
		Short: "Show every node's state, timing, reuse and gate verdicts",
		Long: `Status reads a campaign directory — its frozen config, checkpoints and events.jsonl —
and shows every node of the plan: its state (succeeded, failed, interrupted, running,
crashed, pending, skipped), when it ran and for how long, whether the latest run ran it or
reused its checkpoint (and why), and its gate verdicts. It never writes anything.`,
		Example: `  perfdag status campaigns/20261202T130455Z-quickstart
  perfdag status --json DIR | jq '.nodes[] | select(.state != "succeeded")'`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := readStatus(args[0])
			if err != nil {
				return exit(ExitUsage, err)
			}
			if asJSON {
				return writeJSON(a.stdout, st)
			}
			printStatus(a, st)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

func readStatus(dir string) (*campaignStatus, error) {
	info, err := workspace.ReadInfo(dir)
	if err != nil {
		return nil, err
	}
	records, err := checkpoint.ReadOnly(dir).LoadAll()
	if err != nil {
		return nil, err
	}
	evs, err := events.Read(filepath.Join(dir, workspace.EventsFile))
	if err != nil {
		return nil, err
	}
	st := &campaignStatus{Campaign: info.Campaign, Dir: dir, Running: workspace.Locked(dir), Counts: map[string]int{}}
	last := map[string]events.Event{}
	for _, e := range evs {
		if e.Type == events.RunStart {
			st.Run = e.Run
			last = map[string]events.Event{}
		}
		switch e.Type {
		case events.NodeEnd, events.NodeReused, events.NodeSkipped, events.NodeStart:
			last[e.Node] = e
		}
	}
	var order []string
	kinds := map[string]string{}
	skips := map[string]string{}
	src, _ := load.ReadSource(filepath.Join(dir, workspace.ConfigFile))
	if _, p, err := compile(filepath.Join(dir, workspace.ConfigFile), src, info.BaseDir); err == nil {
		for _, n := range p.Nodes {
			order = append(order, n.ID)
			kinds[n.ID] = n.Step.Kind.Name
			skips[n.ID] = n.Skip
		}
	} else {
		for id, r := range records {
			order = append(order, id)
			kinds[id] = r.Kind
		}
		sort.Strings(order)
	}
	for _, id := range order {
		ns := nodeStatus{Node: id, Kind: kinds[id], State: "pending"}
		if r := records[id]; r != nil {
			ns.State, ns.Attempt, ns.Summary, ns.Error, ns.Gates = r.Status, r.Attempt, r.Summary, r.Error, r.Gates
			t := r.StartedAt
			ns.StartedAt = &t
			if !r.EndedAt.IsZero() {
				ns.Seconds = r.EndedAt.Sub(r.StartedAt).Seconds()
			}
			if r.Status == checkpoint.Running && !st.Running {
				ns.State = "crashed"
				ns.Why = "its run ended without recording an outcome; resume re-runs it"
			}
		}
		if skips[id] != "" {
			ns.State, ns.Why = "skipped", skips[id]
		}
		if e, ok := last[id]; ok {
			switch e.Type {
			case events.NodeReused:
				ns.LastRun = "reused"
			case events.NodeStart:
				ns.LastRun = "started"
			case events.NodeSkipped:
				ns.LastRun = firstNonEmpty(e.Status, "skipped")
			default:
				ns.LastRun = "ran"
			}
			if ns.Why == "" {
				ns.Why = e.Reason
			}
		}
		st.Counts[ns.State]++
		st.Nodes = append(st.Nodes, ns)
	}
	return st, nil
}

func printStatus(a *app, st *campaignStatus) {
	state := "idle"
	if st.Running {
		state = "running now"
	}
	var counts []string
	for _, k := range []string{"succeeded", "failed", "interrupted", "running", "crashed", "pending", "skipped"} {
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
			if !g.Passed {
				mark = "FAIL"
				if g.Severity == gate.Warn {
					mark = "warn"
				}
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
}

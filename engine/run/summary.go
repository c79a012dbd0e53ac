package run

import (
	"fmt"
	"strings"

	"github.com/perfdag/perfdag/schema/campaigndir"
)

// WriteSummary writes summary.md: what the last run did, failures and gate verdicts, and the
// one-line summaries steps reported (the atlas's coverage line among them).
func WriteSummary(dir, campaign string, s *Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s — run %s\n\n", campaign, s.Run)
	var counts []string
	for _, k := range []string{OutRan, OutReused, OutFailed, OutGateFailed, OutBlocked, OutSkipped, OutIgnored, OutInterrupted, OutPending} {
		if n := s.Counts[k]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, k))
		}
	}
	fmt.Fprintf(&b, "%s in %.1f s.\n\n", strings.Join(counts, ", "), s.Seconds)
	b.WriteString("| node | outcome | summary |\n| --- | --- | --- |\n")
	for _, n := range s.Nodes {
		text := n.Summary
		if n.Outcome != OutRan && n.Outcome != OutReused && n.Reason != "" {
			text = n.Reason
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", n.Node, n.Outcome, cell(text))
	}
	var gates []string
	for _, n := range s.Nodes {
		for _, v := range n.Verdicts {
			if !v.Passed {
				gates = append(gates, "- "+cell(describe(v)))
			}
		}
	}
	if len(gates) > 0 {
		b.WriteString("\n## Gates not passed\n\n" + strings.Join(gates, "\n") + "\n")
	}
	return campaigndir.WriteFile(campaigndir.Summary(dir), []byte(b.String()))
}

func cell(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.ReplaceAll(s, "|", "\\|")
}

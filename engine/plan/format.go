package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/schema"
)

// Formats Write understands.
var Formats = []string{"text", "dot", "mermaid", "json"}

// Annotation adds a column to the text and JSON forms (a dry run's decision per node).
type Annotation func(id string) (action string, reasons []string)

// NodeJSON is one node in `plan --format json`.
type NodeJSON struct {
	ID          string      `json:"id"`
	Step        string      `json:"step"`
	Kind        string      `json:"kind"`
	Scope       string      `json:"scope"`
	Cell        string      `json:"cell,omitempty"`
	Load        schema.Load `json:"load,omitzero"`          // the point's key (c16, r2.5-cap64)
	Concurrency int         `json:"concurrency,omitempty"`  // closed loop, or a rate point's in-flight cap
	RequestRate float64     `json:"request_rate,omitempty"` // a rate point's requests per second
	Phase       string      `json:"phase,omitempty"`
	Endpoint    string      `json:"endpoint,omitempty"`
	Deps        []DepJSON   `json:"deps"`
	Skip        string      `json:"skip,omitempty"`
	Bound       int         `json:"bound,omitempty"` // a fan-out node's most probes
	Action      string      `json:"action,omitempty"`
	Reasons     []string    `json:"reasons,omitempty"`
}

// DepJSON is one edge in `plan --format json`.
type DepJSON struct {
	Node string `json:"node"`
	Data bool   `json:"data"`
}

// Write renders the plan in one of Formats.
func (p *Plan) Write(w io.Writer, format string, note Annotation) error {
	switch format {
	case "", "text":
		return p.text(w, note)
	case "dot":
		return p.dot(w)
	case "mermaid":
		return p.mermaid(w)
	case "json":
		return p.json(w, note)
	}
	return fmt.Errorf("unknown format %q: want one of %s", format, strings.Join(Formats, ", "))
}

func (p *Plan) text(w io.Writer, note Annotation) error {
	c := p.Campaign
	src := "explicit pipeline"
	if c.Default {
		src = "default pipeline"
	}
	fmt.Fprintf(w, "campaign %s: %s, %s, %s\n\n", c.Spec.Campaign, plural.N(len(p.Nodes), "node"), plural.N(len(c.Spec.Cells), "cell"), src)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	head := "#\tNODE\tKIND\tAFTER"
	if note != nil {
		head += "\tACTION\tWHY"
	}
	fmt.Fprintln(tw, head)
	for i, n := range p.Nodes {
		var after []string
		for _, d := range n.Deps {
			after = append(after, d.Node.ID)
		}
		a := "-"
		if len(after) > 0 {
			a = strings.Join(after, ", ")
			if len(after) > 3 {
				a = fmt.Sprintf("%s, … (%d)", strings.Join(after[:2], ", "), len(after))
			}
		}
		line := fmt.Sprintf("%d\t%s\t%s\t%s", i+1, n.ID, n.Step.Kind.Name, a)
		if note != nil {
			act, why := note(n.ID)
			line += "\t" + act + "\t" + strings.Join(why, "; ")
		} else if n.Skip != "" {
			line += "\t(skipped: " + n.Skip + ")"
		} else if b := n.Bound(); b > 0 {
			line += fmt.Sprintf("\t(expands at run time: ≤ %d probes)", b)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// dot writes the plan as Graphviz DOT in plan order (nodes, then each node's incoming edges in
// dependency order), so the same campaign gives the same bytes on every run. Ordering edges
// are dashed; data edges solid.
func (p *Plan) dot(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "strict digraph {\n  label=%s;\n  rankdir=\"LR\";\n", strconv.Quote(p.Campaign.Spec.Campaign))
	for _, n := range p.Nodes {
		fmt.Fprintf(&b, "  %s;\n", strconv.Quote(n.ID))
	}
	for _, n := range p.Nodes {
		for _, d := range n.Deps {
			style := ""
			if !d.Data {
				style = ` [style="dashed"]`
			}
			fmt.Fprintf(&b, "  %s -> %s%s;\n", strconv.Quote(d.Node.ID), strconv.Quote(n.ID), style)
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (p *Plan) mermaid(w io.Writer) error {
	fmt.Fprintln(w, "flowchart TD")
	idx := map[*Node]int{}
	for i, n := range p.Nodes {
		idx[n] = i
		fmt.Fprintf(w, "  n%d[\"%s\"]\n", i, strings.ReplaceAll(n.ID, `"`, "#quot;"))
	}
	for _, n := range p.Nodes {
		for _, d := range n.Deps {
			arrow := "-->"
			if !d.Data {
				arrow = "-.->"
			}
			fmt.Fprintf(w, "  n%d %s n%d\n", idx[d.Node], arrow, idx[n])
		}
	}
	return nil
}

func (p *Plan) json(w io.Writer, note Annotation) error {
	out := struct {
		Campaign string     `json:"campaign"`
		Default  bool       `json:"default_pipeline"`
		Nodes    []NodeJSON `json:"nodes"`
	}{Campaign: p.Campaign.Spec.Campaign, Default: p.Campaign.Default}
	for _, n := range p.Nodes {
		j := NodeJSON{ID: n.ID, Step: n.Step.ID, Kind: n.Step.Kind.Name, Scope: string(n.Step.Scope),
			Load: n.Load, Concurrency: n.Load.InFlight(), RequestRate: n.Load.Rate, Phase: n.Phase, Endpoint: n.Endpoint, Skip: n.Skip, Bound: n.Bound(), Deps: []DepJSON{}}
		if n.Cell != nil {
			j.Cell = n.Cell.ID
		}
		for _, d := range n.Deps {
			j.Deps = append(j.Deps, DepJSON{Node: d.Node.ID, Data: d.Data})
		}
		if note != nil {
			j.Action, j.Reasons = note(n.ID)
		}
		out.Nodes = append(out.Nodes, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// propCell is one cell of a generated campaign.
type propCell struct {
	id      string
	in, out int
	concs   []int
}

// propGate is one gate on run-shape of a generated campaign.
type propGate struct {
	id, severity string
	threshold    float64
}

// propCampaign is a random campaign of the property test: deterministic simulator cells, gates
// on their points, and optionally an exec step per cell whose `with:` carries a parameter.
type propCampaign struct {
	cells []propCell
	gates []propGate
	exec  string // the exec step's parameter; "" = no exec step
}

var (
	propInputs  = []int{100, 200, 400}
	propOutputs = []int{10, 20, 30}
	propConcs   = []int{1, 2, 4}
)

// randConcs draws 1–3 distinct concurrencies in ascending order.
func randConcs(r *rand.Rand) []int {
	c := slices.Clone(propConcs)
	r.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
	c = c[:1+r.IntN(3)]
	slices.Sort(c)
	return c
}

// randThreshold draws a TTFT p50 threshold around the simulator's 40–45 ms, so gates pass on
// some points and fail on others.
func randThreshold(r *rand.Rand) float64 { return float64(38+r.IntN(10)) + 0.5 }

func randCell(r *rand.Rand, id string) propCell {
	return propCell{id: id, in: propInputs[r.IntN(3)], out: propOutputs[r.IntN(3)], concs: randConcs(r)}
}

func randCampaign(r *rand.Rand) propCampaign {
	var c propCampaign
	for i := range 1 + r.IntN(3) {
		c.cells = append(c.cells, randCell(r, string(rune('a'+i))))
	}
	for i := range r.IntN(3) {
		c.gates = append(c.gates, propGate{id: fmt.Sprintf("g%d", i), severity: []string{"warn", "fail"}[r.IntN(2)], threshold: randThreshold(r)})
	}
	if r.IntN(2) == 0 {
		c.exec = fmt.Sprintf("p%d", r.IntN(100))
	}
	return c
}

// edit applies one random edit (a gate threshold, a cell added or removed, a concurrency, the
// exec step's `with:` parameter) and describes it.
func (c propCampaign) edit(r *rand.Rand) (propCampaign, string) {
	e := propCampaign{gates: slices.Clone(c.gates), exec: c.exec}
	for _, cell := range c.cells {
		cell.concs = slices.Clone(cell.concs)
		e.cells = append(e.cells, cell)
	}
	switch r.IntN(4) {
	case 0:
		if len(e.gates) == 0 {
			e.gates = append(e.gates, propGate{id: "g9", severity: "fail", threshold: randThreshold(r)})
			return e, "gate g9 added"
		}
		i := r.IntN(len(e.gates))
		e.gates[i].threshold = randThreshold(r)
		return e, fmt.Sprintf("gate %s threshold %.1f -> %.1f", e.gates[i].id, c.gates[i].threshold, e.gates[i].threshold)
	case 1:
		if len(e.cells) > 1 && r.IntN(2) == 0 {
			i := r.IntN(len(e.cells))
			e.cells = slices.Delete(e.cells, i, i+1)
			return e, "cell " + c.cells[i].id + " removed"
		}
		if len(e.cells) < 3 {
			id := string(rune('a' + len(e.cells)))
			for slices.ContainsFunc(e.cells, func(x propCell) bool { return x.id == id }) {
				id += "x"
			}
			e.cells = append(e.cells, randCell(r, id))
			return e, "cell " + id + " added"
		}
		i := r.IntN(len(e.cells))
		e.cells = slices.Delete(e.cells, i, i+1)
		return e, "cell " + c.cells[i].id + " removed"
	case 2:
		i := r.IntN(len(e.cells))
		old := slices.Clone(e.cells[i].concs)
		for slices.Equal(old, e.cells[i].concs) {
			e.cells[i].concs = randConcs(r)
		}
		return e, fmt.Sprintf("cell %s concurrencies %v -> %v", e.cells[i].id, old, e.cells[i].concs)
	default:
		if e.exec == "" {
			e.exec = "p0"
			return e, "exec step added"
		}
		e.exec += "x"
		return e, "exec with: " + c.exec + " -> " + e.exec
	}
}

// yaml renders the campaign file.
func (c propCampaign) yaml() string {
	var b strings.Builder
	b.WriteString("version: 1\ncampaign: prop\nendpoints:\n  main: {url: \"sim://\", model: m, sim: {deterministic: true}}\ncells:\n")
	for _, cell := range c.cells {
		concs := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(cell.concs)), ", "), "[]")
		fmt.Fprintf(&b, "  - {id: %s, workload: {shape: custom, input_tokens: %d, output_tokens: %d}, concurrencies: [%s]}\n", cell.id, cell.in, cell.out, concs)
	}
	b.WriteString("pipeline:\n  - {id: run-shape, kind: run-shape}\n")
	if c.exec != "" {
		b.WriteString(`  - {id: note, kind: exec, foreach: cell, needs: [run-shape], with: {command: [sh, -c, 'echo "{\"p\": \"$P\", \"cell\": \"$PERFDAG_CELL\"}"'], env: {P: ` + c.exec + "}}}\n")
	}
	b.WriteString("  - {id: aggregate, kind: aggregate, needs: [run-shape]}\n  - {id: render, kind: render, needs: [aggregate]}\n  - {id: strict-publish, kind: strict-publish, needs: [render]}\n")
	if len(c.gates) > 0 {
		b.WriteString("gates:\n")
		for _, g := range c.gates {
			fmt.Fprintf(&b, "  - {id: %s, on: run-shape, rule: ttft_p50_ms < %.1f, severity: %s}\n", g.id, g.threshold, g.severity)
		}
	}
	b.WriteString("publish: {lake: \"sqlite://lake.db\", strict: false}\n")
	return b.String()
}

package importcell

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/perfdag/perfdag/schema"
)

// cellYAML is the order and style an imported cell is written in: id, endpoint, identity,
// workload and the points (concurrencies, rates and their cap) on one line each, then the
// import block.
type cellYAML struct {
	ID              string `yaml:"id"`
	Endpoint        string `yaml:"endpoint,omitempty"`
	schema.Identity `yaml:",inline"`
	Workload        schema.Workload `yaml:"workload,flow"`
	Concurrencies   []int           `yaml:"concurrencies,flow,omitempty"`
	Rates           []rateYAML      `yaml:"rates,flow,omitempty"`
	MaxInFlight     int             `yaml:"max_in_flight,omitempty"`
	Import          importYAML      `yaml:"import"`
}

type importYAML struct {
	Format        string      `yaml:"format"`
	SourceVersion string      `yaml:"source_version,omitempty"`
	Points        []pointYAML `yaml:"points"`
}

type pointYAML struct {
	Concurrency int      `yaml:"concurrency,omitempty"`
	Rate        rateYAML `yaml:"rate,omitempty"`
	Path        string   `yaml:"path"`
}

// rateYAML is a rate written as its key spells it: 1, 2.5 (not 1.0).
type rateYAML float64

// MarshalYAML writes a whole rate as an integer, any other as its shortest decimal.
func (r rateYAML) MarshalYAML() (any, error) {
	if v := float64(r); v == math.Trunc(v) && v <= schema.MaxRate {
		return int64(v), nil
	}
	return float64(r), nil
}

func toYAML(c schema.Cell) cellYAML {
	y := cellYAML{ID: c.ID, Endpoint: c.Endpoint, Identity: c.Identity, Workload: c.Workload, Concurrencies: c.Concurrencies,
		MaxInFlight: c.MaxInFlight}
	for _, r := range c.Rates {
		y.Rates = append(y.Rates, rateYAML(r))
	}
	if c.Import != nil {
		y.Import = importYAML{Format: c.Import.Format, SourceVersion: c.Import.SourceVersion}
		for _, p := range c.Import.Points {
			y.Import.Points = append(y.Import.Points, pointYAML{Concurrency: p.Concurrency, Rate: rateYAML(p.Rate), Path: p.Path})
		}
	}
	return y
}

// Snippet writes cells as the items of a campaign's `cells:` list, indented by indent spaces.
func Snippet(cells []schema.Cell, indent int) ([]byte, error) {
	pad := strings.Repeat(" ", indent)
	var out bytes.Buffer
	for _, c := range cells {
		b, err := yaml.MarshalWithOptions(toYAML(c), yaml.Indent(2), yaml.IndentSequence(true))
		if err != nil {
			return nil, fmt.Errorf("write cell %s as YAML: %w", c.ID, err)
		}
		for i, l := range strings.SplitAfter(strings.TrimRight(string(b), "\n")+"\n", "\n") {
			switch {
			case l == "":
			case i == 0:
				out.WriteString(pad + "- " + l)
			default:
				out.WriteString(pad + "  " + l)
			}
		}
	}
	return out.Bytes(), nil
}

// Append adds cells at the end of the campaign's `cells:` list and returns the new file. The
// rest of the file — comments, key order, flow style — is kept byte for byte: the cells are
// inserted as text after the list's last line. A cell id the campaign already has is an error.
func Append(src []byte, file string, cells []schema.Cell) ([]byte, error) {
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var top *ast.MappingNode
	if len(f.Docs) > 0 && f.Docs[0].Body != nil {
		switch b := f.Docs[0].Body.(type) {
		case *ast.MappingNode:
			top = b
		case *ast.MappingValueNode:
			top = &ast.MappingNode{Values: []*ast.MappingValueNode{b}}
		}
	}
	if top == nil {
		return nil, fmt.Errorf("%s: not a campaign file (its top level is not a mapping)", file)
	}
	var existing struct {
		Cells []struct {
			ID string `yaml:"id"`
		} `yaml:"cells"`
	}
	_ = yaml.Unmarshal(src, &existing)
	for _, c := range cells {
		for _, e := range existing.Cells {
			if e.ID == c.ID {
				return nil, fmt.Errorf("%s: the campaign already has a cell %q: choose another id (--cell)", file, c.ID)
			}
		}
	}
	lines := strings.SplitAfter(string(src), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	idx := slices.IndexFunc(top.Values, func(v *ast.MappingValueNode) bool { return v.Key.String() == "cells" })
	if idx < 0 { // no cells: key yet: add one at the end
		items, err := Snippet(cells, 2)
		if err != nil {
			return nil, err
		}
		out := strings.Join(lines, "")
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		return []byte(out + "cells:\n" + string(items)), nil
	}
	mv := top.Values[idx]
	cellsLine := mv.Key.GetToken().Position.Line // 1-based
	indent := 2
	switch v := mv.Value.(type) {
	case *ast.SequenceNode:
		if v.IsFlowStyle {
			return nil, fmt.Errorf("%s:%d: cells: written in flow style ([...]): write it as a block list (- id: ...) or add the printed cell by hand (--print)", file, cellsLine)
		}
		indent = v.Start.Position.Column - 1
	case *ast.NullNode:
	default:
		return nil, fmt.Errorf("%s:%d: cells: not a list", file, cellsLine)
	}
	end := len(lines) // the line (0-based) the next top-level key starts on
	if idx+1 < len(top.Values) {
		end = top.Values[idx+1].Key.GetToken().Position.Line - 1
	}
	at := cellsLine // insert after the last line of the list that is not blank or a comment
	for i := cellsLine; i < end && i < len(lines); i++ {
		if t := strings.TrimSpace(lines[i]); t != "" && !strings.HasPrefix(t, "#") {
			at = i + 1
		}
	}
	items, err := Snippet(cells, indent)
	if err != nil {
		return nil, err
	}
	var out strings.Builder
	for i, l := range lines {
		if i == at {
			out.Write(items)
		}
		out.WriteString(l)
		if i == at-1 && !strings.HasSuffix(l, "\n") {
			out.WriteString("\n")
		}
	}
	if at >= len(lines) {
		out.Write(items)
	}
	return []byte(out.String()), nil
}

// NewCampaign is the text of a new campaign file for imported cells only, named after the
// file (no endpoints: imported points were measured elsewhere). Append adds its cells.
func NewCampaign(file string) []byte {
	slug := ID(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
	return []byte("# " + slug + " — results imported with perfdag import\nversion: 1\ncampaign: " + slug + "\ncells:\n")
}

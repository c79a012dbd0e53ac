package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/steps"
)

func registry() (*engine.Registry, error) {
	r, err := steps.Registry()
	if err != nil {
		return nil, fmt.Errorf("build step registry: %w", err)
	}
	return r, nil
}

// compile loads, validates and compiles a campaign file. On an invalid file it returns the
// positioned problems (a diag.List), with cycles positioned at the step that closes them.
func compile(path string, src []byte, baseDir string) (*load.Campaign, *plan.Plan, error) {
	reg, err := registry()
	if err != nil {
		return nil, nil, err
	}
	var c *load.Campaign
	if src == nil {
		c, err = load.File(path, reg, load.Options{})
	} else {
		c, err = load.Bytes(path, baseDir, src, reg, load.Options{})
	}
	if err != nil {
		return nil, nil, err
	}
	p, err := plan.Compile(c)
	var cyc *plan.CycleError
	if errors.As(err, &cyc) {
		var l diag.List
		where := fmt.Sprintf("pipeline[%d].needs", cyc.Step)
		line, col := c.Position(where)
		l.Add(c.File, line, col, "break the cycle: remove one of these needs or brackets", "%s", cyc.Error())
		return c, nil, l
	}
	return c, p, err
}

// report prints problems: human form with source excerpts on w, or JSON.
func reportDiags(w io.Writer, err error, sources map[string][]byte, asJSON bool) bool {
	var l diag.List
	if !errors.As(err, &l) {
		return false
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(l)
		return true
	}
	fmt.Fprint(w, l.FormatAll(sources))
	fmt.Fprintf(w, "%d problem(s) found\n", len(l))
	return true
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// sourceOf returns a campaign's source for error excerpts.
func sourceOf(c *load.Campaign, path string) []byte {
	if c != nil {
		return c.Source
	}
	b, _ := load.ReadSource(path)
	return b
}

func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

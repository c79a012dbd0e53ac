package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps"
)

// registry is perfdag's step registry (plus the test doubles a test app carries).
func (a *app) registry() (*engine.Registry, error) {
	r, err := steps.Registry(a.testKinds...)
	if err != nil {
		return nil, fmt.Errorf("build step registry: %w", err)
	}
	return r, nil
}

// service is the campaign service every verb goes through.
func (a *app) service() (*campaign.Service, error) {
	reg, err := a.registry()
	if err != nil {
		return nil, err
	}
	return &campaign.Service{Registry: reg, Version: readBuildInfo(version).Version, Redact: redact.URL}, nil
}

// compile loads, validates and compiles a campaign file. On an invalid file it returns the
// positioned problems (a diag.List inside the coded error).
func (a *app) compile(path string, src []byte, baseDir string) (*load.Campaign, *plan.Plan, error) {
	svc, err := a.service()
	if err != nil {
		return nil, nil, err
	}
	c, err := svc.Compile(path, src, baseDir)
	if c == nil {
		return nil, nil, err
	}
	return c.File, c.Plan, err
}

// invalid prints a campaign file's problems with source excerpts and returns the invalid code.
func (a *app) invalid(err error, path string, c *load.Campaign) error {
	if reportDiags(a.stderr, err, map[string][]byte{path: sourceOf(c, path)}, false) {
		return exit(campaign.CodeOf(err), nil)
	}
	return err
}

// reportDiags prints problems: human form with source excerpts on w, or JSON.
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
	fmt.Fprintf(w, "%s found\n", plural.N(len(l), "problem"))
	return true
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// sourceOf returns a campaign's source for error excerpts.
func sourceOf(c *load.Campaign, path string) []byte {
	if c != nil && c.Source != nil {
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

// open reads a finished campaign directory for a verb that uses its results.
func (a *app) open(dir string) (campaigndir.Finished, error) {
	svc, err := a.service()
	if err != nil {
		return campaigndir.Finished{}, err
	}
	return svc.Open(dir)
}

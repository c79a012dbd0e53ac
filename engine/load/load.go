// Package load reads a campaign file strictly into schema types, interpolates ${VAR}, merges
// defaults, decodes every step's `with:` into its kind's parameters, compiles every rule, and
// reports every problem of the file at once with its position.
package load

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"

	"github.com/expr-lang/expr/vm"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/schema"
)

// Campaign is a loaded and validated campaign file.
type Campaign struct {
	File    string           // path as given
	Source  []byte           // the file as written (frozen into the campaign directory)
	BaseDir string           // relative paths in the file resolve here
	Spec    *schema.Campaign // decoded, interpolated, defaults merged into every cell
	Steps   []*Step          // the pipeline (explicit or default), validated, in file order
	Gates   []*Gate          // compiled quality gates
	Default bool             // the pipeline is the registry's default
	Rules   *engine.Registry // supplies the context rules read (Registry.RuleEnv)
	dec     *decoder
}

// Position returns the line and column of a decoder path ("pipeline[2].needs"), or of its
// nearest enclosing key that has one; zeros when unknown.
func (c *Campaign) Position(path string) (int, int) {
	if c.dec == nil {
		return 0, 0
	}
	v := &validator{d: c.dec, c: c}
	if n := v.node(path, true); n != nil {
		return pos(n)
	}
	return 0, 0
}

// Step is one validated pipeline step.
type Step struct {
	schema.PipelineStep
	Index  int
	Kind   engine.Kind
	Scope  engine.Scope
	Params any         // decoded `with:` (pointer to the kind's params type), nil when none
	Cond   *vm.Program // compiled `when:`, nil when always
}

// Gate is one compiled quality gate.
type Gate struct {
	schema.Gate
	Targets []string               // step ids the gate guards
	Program map[string]*vm.Program // by target step id (kinds differ in their fields)
}

// Options tune loading.
type Options struct {
	Lookup func(string) (string, bool) // environment for ${VAR}; default os.LookupEnv
}

// ReadSource reads a campaign file for loading: a regular file only, and never more than one
// byte past MaxFileBytes (Bytes then reports the oversized file with a position).
func ReadSource(path string) ([]byte, error) {
	src, err := bounded.Prefix("campaign file", path, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) { // say it once, not "read campaign: campaign file: stat …"
		return nil, fmt.Errorf("campaign file %s: %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("read campaign: %w", err)
	}
	return src, nil
}

// File loads and validates a campaign file.
func File(path string, reg *engine.Registry, opts Options) (*Campaign, error) {
	src, err := ReadSource(path)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", path, err)
	}
	return Bytes(path, filepath.Dir(abs), src, reg, opts)
}

// Bytes loads and validates campaign source named name (for messages); baseDir anchors
// relative paths. The error, when not nil, is a diag.List holding every problem found.
func Bytes(name, baseDir string, src []byte, reg *engine.Registry, opts Options) (*Campaign, error) {
	if opts.Lookup == nil {
		opts.Lookup = os.LookupEnv
	}
	var diags diag.List
	d := newDecoder(name, &diags)
	root, ok := parse(d, name, src, &diags)
	if !ok {
		return nil, diags
	}
	d.interpolate(root, opts.Lookup)
	spec := &schema.Campaign{}
	d.decode(root, reflect.ValueOf(spec).Elem(), "")
	c := &Campaign{File: name, Source: src, BaseDir: baseDir, Spec: spec, Rules: reg, dec: d}
	v := &validator{d: d, c: c, reg: reg}
	v.run()
	diags.Sort()
	if len(diags) > 0 {
		return nil, diags
	}
	return c, nil
}

// parse turns source into the document body, reporting syntax errors with positions. Size
// and nesting are bounded before the parser runs (it is superlinear in depth), aliases after.
func parse(d *decoder, name string, src []byte, diags *diag.List) (ast.Node, bool) {
	if !checkSize(name, src, diags) {
		return nil, false
	}
	toks, ok := tokenize(name, string(src), diags)
	if !ok {
		return nil, false
	}
	f, err := parser.Parse(toks, 0)
	if err != nil {
		line, col, msg := 0, 0, err.Error()
		if yerr, ok := err.(yaml.Error); ok {
			line, col = position(yerr.GetToken())
			msg = yerr.GetMessage()
		}
		diags.Add(name, line, col, "", "YAML syntax: %s", firstLine(msg))
		return nil, false
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		diags.Add(name, 1, 1, "start with `version: 1` and `campaign: <slug>`", "the file is empty")
		return nil, false
	}
	if len(f.Docs) > 1 {
		line, col := pos(f.Docs[1])
		diags.Add(name, line, col, "split campaigns into separate files", "a campaign file holds one YAML document")
		return nil, false
	}
	body := f.Docs[0].Body
	return body, d.resolveAliases(body)
}

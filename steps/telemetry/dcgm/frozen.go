package dcgm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/schema"
)

// MaxFrozenBytes bounds a dcgm_frozen_v1 file: one cell's capture is kilobytes, a sampled one
// (8 GPUs, six points, minutes of 1 s samples) a few megabytes; a larger file (or a device)
// is refused before it is read.
const MaxFrozenBytes = 8 << 20

// FrozenSource answers per-point means from a validated dcgm_frozen_v1 file.
type FrozenSource struct {
	name   string
	doc    schema.DCGMFrozen
	sealed bool // Detail names the file only: its text must not reach records
}

// LoadFrozen reads and validates a dcgm_frozen_v1 file of at most MaxFrozenBytes; any problem
// is an error naming the file, the line and the field, and no partial source is returned.
func LoadFrozen(path string) (*FrozenSource, error) {
	data, err := bounded.ReadFile("dcgm_frozen_v1", path, MaxFrozenBytes)
	if err != nil {
		return nil, fmt.Errorf("load dcgm_frozen_v1: %w", err)
	}
	return ParseFrozen(path, data)
}

// Sealed returns the source with its detail cut to the file's name, for a file from outside
// the campaign's directory: nothing of its text (its source: line) is echoed into records.
func (f *FrozenSource) Sealed() *FrozenSource {
	g := *f
	g.sealed = true
	return &g
}

// ParseFrozen decodes data strictly (unknown keys are errors) and validates units, ranges and
// structure; name is the file name errors carry. Every problem of the file is reported at once.
func ParseFrozen(name string, data []byte) (*FrozenSource, error) {
	var doc schema.DCGMFrozen
	if err := yaml.UnmarshalWithOptions(data, &doc, yaml.Strict()); err != nil {
		return nil, decodeError(name, err)
	}
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, decodeError(name, err)
	}
	c := &checker{name: name, file: file}
	c.check(&doc)
	if len(c.errs) > 0 {
		return nil, fmt.Errorf("load dcgm_frozen_v1 %s: %s:\n%w", name, plural.N(len(c.errs), "problem"), errors.Join(c.errs...))
	}
	return &FrozenSource{name: name, doc: doc}, nil
}

// Name is the record's source.
func (f *FrozenSource) Name() string { return "frozen" }

// Detail names the file and the capture it describes.
func (f *FrozenSource) Detail() string {
	if f.doc.Source == "" || f.sealed {
		return f.name
	}
	return f.name + " (" + f.doc.Source + ")"
}

// Point averages the file's entry for w's point (schema.DCGMFrozenPoint.Matches): window means as given, or the mean of the
// samples inside the window (the entry's own start/end when set, else w; no bounds: all samples).
// Power comes from the entry's power_watts_per_gpu, else its GPUs, else the file-wide value.
func (f *FrozenSource) Point(_ context.Context, w Window) (schema.DCGMPoint, error) {
	var fp *schema.DCGMFrozenPoint
	for i := range f.doc.Points {
		if f.doc.Points[i].Matches(w.Load) {
			fp = &f.doc.Points[i]
		}
	}
	if fp == nil {
		return schema.DCGMPoint{}, fmt.Errorf("%s has no point for %s: %w", f.name, w.Load.Label(), ErrNoData)
	}
	from, to := w.Start, w.End
	if fp.Start != nil {
		from, to = *fp.Start, *fp.End
	}
	sampled, total, inside := false, 0, 0
	acc := newAccumulator(false)
	for _, g := range fp.GPUs {
		key := fmt.Sprintf("gpu%d", *g.GPU)
		if g.Means != nil {
			acc.addFields(key, g.Means)
			continue
		}
		sampled = true
		for i := range g.Samples {
			s := &g.Samples[i]
			total++
			if within(*s.T, from, to) {
				inside++
				acc.addFields(key, &s.DCGMFields)
			}
		}
	}
	acc.sampled = sampled
	if sampled && inside == 0 {
		return schema.DCGMPoint{}, fmt.Errorf("%s point %s: none of its %d samples fall in the window %s – %s (wrong file, or a clock/timezone offset?)",
			f.name, w.Load.Key(), total, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	}
	p := acc.point()
	p.GPUs = len(fp.GPUs)
	switch {
	case fp.PowerWattsPerGPU != nil:
		p.PowerWattsPerGPU = fp.PowerWattsPerGPU
	case p.PowerWattsPerGPU == nil && f.doc.PowerWattsPerGPU != nil:
		p.PowerWattsPerGPU = f.doc.PowerWattsPerGPU
	}
	return p, nil
}

// within reports from ≤ t ≤ to; a zero bound is open.
func within(t, from, to time.Time) bool {
	return (from.IsZero() || !t.Before(from)) && (to.IsZero() || !t.After(to))
}

// decodeError turns a go-yaml error into "file:line:col: key: message" plus its source excerpt.
func decodeError(name string, err error) error {
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return fmt.Errorf("load dcgm_frozen_v1 %s: %w", name, err)
	}
	tk := ye.GetToken()
	where := fmt.Sprintf("%s:%d:%d", name, tk.Position.Line, tk.Position.Column)
	if key := keyOf(tk); key != "" {
		where += ": " + key
	}
	return fmt.Errorf("load dcgm_frozen_v1 %s: %s: %s\n%s", name, where, ye.GetMessage(), ye.FormatError(false, true))
}

// keyOf finds the mapping key a value token belongs to ("gpu" for the 0 of "gpu: 0").
func keyOf(tk *token.Token) string {
	if tk.Type == token.MappingValueType && tk.Prev != nil {
		return tk.Prev.Value
	}
	if p := tk.Prev; p != nil && p.Type == token.MappingValueType && p.Prev != nil {
		return p.Prev.Value
	}
	return ""
}

// checker collects every validation problem of one file with its position.
type checker struct {
	name string
	file *ast.File
	errs []error
}

// errorf records a problem at a field path like points[0].gpus[1].means.sm_active; a missing
// field is reported at its nearest present parent.
func (c *checker) errorf(path, format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%s: %s: %s", c.pos(path), path, fmt.Sprintf(format, args...)))
}

func (c *checker) pos(path string) string {
	for p := path; p != ""; p = parentPath(p) {
		yp, err := yaml.PathString("$." + p)
		if err != nil {
			continue
		}
		if n, err := yp.FilterFile(c.file); err == nil && n != nil {
			if tk := nodeToken(n); tk != nil {
				return fmt.Sprintf("%s:%d:%d", c.name, tk.Position.Line, tk.Position.Column)
			}
		}
	}
	return c.name
}

// nodeToken is where a node starts: a block mapping's token is its first ':', so use its first key.
func nodeToken(n ast.Node) *token.Token {
	switch m := n.(type) {
	case *ast.MappingNode:
		if !m.IsFlowStyle && len(m.Values) > 0 {
			return m.Values[0].Key.GetToken()
		}
	case *ast.MappingValueNode:
		return m.Key.GetToken()
	}
	return n.GetToken()
}

// parentPath drops the last ".key" or "[i]" of a field path.
func parentPath(p string) string {
	if i := strings.LastIndexAny(p, ".["); i > 0 {
		return p[:i]
	}
	return ""
}

// Package importcell turns existing benchmark outputs (AIPerf artifact directories, vLLM
// `bench serve --save-result` JSON, SGLang bench_serving JSONL, or a variant A/B bundle of
// them) into campaign cells with an `import:` block, and adds those cells to a campaign
// YAML file without disturbing the rest of it. It is the library behind `perfdag import`:
// every file is read with steps/measure/benchfile (the import kind's reader), so a cell this
// package writes is one the import step accepts, and a file it refuses is refused with the
// same positioned error (file:line: field: message).
package importcell

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/benchfile"
	"github.com/perfdag/perfdag/steps/measure/stats"
	"github.com/perfdag/perfdag/steps/measure/workload"
)

// FormatAuto asks Build to recognise each file's format from its content.
const FormatAuto = "auto"

// Options say how to build an imported cell. Identity fields left empty are not written, so
// the campaign's defaults apply to them.
type Options struct {
	Format        string // aiperf, vllm-bench, sglang-bench or auto ("" = auto)
	Cell          string // cell id; "" derives one from the files
	Endpoint      string // the campaign endpoint the outputs were measured on ("" = the only one)
	SourceVersion string // the tool's version, for files that do not state it
	// BaseDir is the directory paths in the cell are relative to: the campaign file's.
	BaseDir string
	// Identity of what the files measured. Model defaults to the model the files state, and
	// Engine to the one a vLLM or SGLang output implies.
	Identity schema.Identity
}

// Point is one file (or AIPerf directory) read for a cell.
type Point struct {
	Path   string            // as given
	Result *benchfile.Result // its point, without the per-request records (Result.Slim)
}

// Build reads the outputs at paths (one per concurrency) and returns the cell that imports
// them. What the files state is checked against the cell exactly as the import step checks
// it, so a model, concurrency or token-length mismatch is reported now, at its position.
func Build(paths []string, o Options) (schema.Cell, []Point, error) {
	if len(paths) == 0 {
		return schema.Cell{}, nil, fmt.Errorf("import: no file given")
	}
	format := o.Format
	if format == "" {
		format = FormatAuto
	}
	if format != FormatAuto && !slices.Contains(benchfile.Formats(), format) {
		return schema.Cell{}, nil, fmt.Errorf("import: format %q: want %s or %s", format, strings.Join(benchfile.Formats(), ", "), FormatAuto)
	}
	if cm := o.Identity.CacheMode; cm != "" && cm != "warm" && cm != "cold" {
		return schema.Cell{}, nil, fmt.Errorf("import: cache mode %q: want warm or cold", cm)
	}
	var (
		points []Point
		seen   = map[int]string{} // concurrency → the file imported at it
		cellFm string
		files  = benchfile.NewFiles() // a file of many runs is indexed once, each run read when needed
		first  *benchfile.Result      // the lowest concurrency's run, whole: it names the workload
	)
	for _, p := range paths {
		f, ip, err := format, p, error(nil)
		if format == FormatAuto {
			f, ip, err = files.Detect(p)
		} else {
			ip, err = benchfile.Locate(format, p)
		}
		if err != nil {
			return schema.Cell{}, nil, err
		}
		if cellFm != "" && f != cellFm {
			return schema.Cell{}, nil, fmt.Errorf("import: %s is %s output, %s is %s: one cell imports one format (import them as two cells)", points[0].Path, cellFm, p, f)
		}
		cellFm = f
		runs, err := files.Runs(f, ip) // a JSONL of several runs is a sweep: one point each
		if err != nil {
			return schema.Cell{}, nil, err
		}
		if len(runs) < 2 {
			runs = []int{0} // one run: read it whatever its concurrency
		}
		for _, c := range runs {
			r, err := files.Read(f, ip, benchfile.Expect{Concurrency: c}, stats.Options{})
			if err != nil {
				return schema.Cell{}, nil, err
			}
			if prev, ok := seen[r.Concurrency]; ok {
				return schema.Cell{}, nil, r.At(r.ConcurrencyField(), fmt.Sprintf("concurrency %d is already imported from %s: a cell has one run per concurrency", r.Concurrency, prev))
			}
			seen[r.Concurrency] = r.File
			if first == nil || r.Concurrency < first.Concurrency {
				first = r
			}
			points = append(points, Point{Path: ip, Result: r.Slim()}) // a run's requests are not kept: memory is one run's, not the file's
		}
	}
	slices.SortFunc(points, func(a, b Point) int { return a.Result.Concurrency - b.Result.Concurrency })

	cell := schema.Cell{ID: o.Cell, Endpoint: o.Endpoint, Identity: o.Identity}
	if cell.ID == "" {
		cell.ID = defaultID(paths, cellFm)
	}
	if cell.Model == "" {
		cell.Model = first.Model
	}
	if cell.Engine == "" {
		cell.Engine = engineOf(cellFm)
	}
	isl, osl, err := first.Workload()
	if err != nil {
		return schema.Cell{}, nil, err
	}
	cell.Workload = schema.Workload{Shape: workload.ShapeCustom, InputTokens: int(math.Round(isl)), OutputTokens: int(math.Round(osl))}
	cell.Import = &schema.CellImport{Format: cellFm, SourceVersion: o.SourceVersion}
	for _, p := range points {
		cell.Concurrencies = append(cell.Concurrencies, p.Result.Concurrency)
		cell.Import.Points = append(cell.Import.Points, schema.ImportPoint{Concurrency: p.Result.Concurrency, Path: relTo(o.BaseDir, p.Path)})
	}
	if err := check(files, cell, points); err != nil {
		return schema.Cell{}, nil, err
	}
	return cell, points, nil
}

// Check reads every point again with what the cell says it measured: the import step's check.
func Check(cell schema.Cell, points []Point) error { return check(benchfile.NewFiles(), cell, points) }

// check is Check reading through files (Build's, which has every file already).
func check(files *benchfile.Files, cell schema.Cell, points []Point) error {
	b, err := workload.Resolve(cell.Workload)
	if err != nil {
		return fmt.Errorf("cell %s: %w", cell.ID, err)
	}
	for _, p := range points {
		e := benchfile.Expect{Model: cell.Model, Concurrency: p.Result.Concurrency, ISL: b.InputTokens, OSL: b.OutputTokens}
		if _, err := files.Read(cell.Import.Format, p.Path, e, stats.Options{}); err != nil {
			return err
		}
	}
	return nil
}

// engineOf is the engine a format implies; "" for AIPerf, which measures any engine.
func engineOf(format string) string {
	switch format {
	case benchfile.SourceVLLM:
		return "vllm"
	case benchfile.SourceSGLang:
		return "sglang"
	}
	return ""
}

var notID = regexp.MustCompile(`[^a-z0-9._-]+`)

// ID makes a cell id out of free text: lower case, [a-z0-9._-], starting with a letter or digit.
func ID(s string) string {
	s = strings.Trim(notID.ReplaceAllString(strings.ToLower(s), "-"), "-._")
	if s == "" {
		return "imported"
	}
	return s
}

// defaultID names a cell after its only file (extension dropped), else after the format.
func defaultID(paths []string, format string) string {
	if len(paths) != 1 {
		return format
	}
	base := filepath.Base(filepath.Clean(paths[0]))
	if base == benchfile.AIPerfAggregate || base == benchfile.AIPerfRecords {
		base = filepath.Base(filepath.Dir(filepath.Clean(paths[0])))
	}
	return ID(strings.TrimSuffix(strings.TrimSuffix(base, ".jsonl"), ".json"))
}

// relTo writes p relative to base (slash-separated), or absolute when it cannot be.
func relTo(base, p string) string {
	ap, err := filepath.Abs(p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	if base == "" {
		base = "."
	}
	ab, err := filepath.Abs(base)
	if err != nil {
		return filepath.ToSlash(ap)
	}
	rel, err := filepath.Rel(ab, ap)
	if err != nil {
		return filepath.ToSlash(ap)
	}
	return filepath.ToSlash(rel)
}

// StatsNotes says where the points' statistics come from, one line per kind, in the order
// met: "c2: per-request stats", "c1, c8: aggregate stats; unknown: ttft_ms p90, osl" — what
// a user learns before the run whether a gate can read.
func StatsNotes(points []Point) []string {
	var order []string
	by := map[string][]int{}
	for _, p := range points {
		n := p.Result.StatsNote()
		if _, ok := by[n]; !ok {
			order = append(order, n)
		}
		by[n] = append(by[n], p.Result.Concurrency)
	}
	out := make([]string, 0, len(order))
	for _, n := range order {
		cs := by[n]
		list := make([]string, 0, min(len(cs), 6))
		for _, c := range cs[:min(len(cs), 6)] {
			list = append(list, fmt.Sprintf("c%d", c))
		}
		at := strings.Join(list, ", ")
		if len(cs) > 6 {
			at = fmt.Sprintf("c%d … c%d (%d points)", cs[0], cs[len(cs)-1], len(cs))
		}
		out = append(out, at+": "+n)
	}
	return out
}

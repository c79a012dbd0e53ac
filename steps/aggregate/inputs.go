package aggregate

import (
	"fmt"
	"maps"
	"slices"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
)

// upstream is what aggregate's upstream steps name: every measured point, every point's
// metric window, every cell's DCGM correlation, and the whole cells imports wrote. Nothing
// is found by listing the directory: a file no upstream result names is not evidence.
type upstream struct {
	points   map[string]map[schema.Load]string // cell → point → point file
	windows  map[string]map[schema.Load]string // cell → point → spec window file
	corr     map[string]string                 // cell → correlation file
	spec     []campaigndir.SpecFiles
	dcgm     []campaigndir.DCGMFiles
	imported []campaigndir.CellFiles
	from     map[string]string // imported cell → the step that wrote it
	sweeps   []string          // cells' sweep_probes.json
}

func gather(t *engine.Task) (*upstream, error) {
	in := &upstream{points: map[string]map[schema.Load]string{}, windows: map[string]map[schema.Load]string{}, corr: map[string]string{}, from: map[string]string{}}
	put := func(m map[string]map[schema.Load]string, cell string, l schema.Load, rel string) {
		if m[cell] == nil {
			m[cell] = map[schema.Load]string{}
		}
		m[cell][l] = rel
	}
	// a point's load is its node's (results written before points were keyed by load name
	// only a concurrency, the in-flight cap of an open-loop point)
	loadOf := func(u engine.Upstream, l schema.Load, conc int) schema.Load {
		if !u.Load.IsZero() {
			return u.Load
		}
		return schema.LoadOf(l, conc, 0)
	}
	for _, u := range t.Upstream {
		if po, ok := u.Result.(campaigndir.PointOutput); ok {
			if f := po.PointFiles(); f.Point != "" {
				put(in.points, f.Cell, loadOf(u, f.Load, f.Concurrency), f.Point)
			}
		}
		if so, ok := u.Result.(campaigndir.SpecOutput); ok {
			if f, ok := so.SpecFiles(); ok {
				put(in.windows, f.Cell, loadOf(u, f.Load, f.Concurrency), f.Window)
				in.spec = append(in.spec, f)
			}
		}
		if do, ok := u.Result.(campaigndir.DCGMOutput); ok {
			if f := do.DCGMFiles(); f.Correlation != "" {
				in.corr[f.Cell] = f.Correlation
				in.dcgm = append(in.dcgm, f)
			}
		}
		if so, ok := u.Result.(campaigndir.SweepOutput); ok && so.SweepFile() != "" {
			in.sweeps = append(in.sweeps, so.SweepFile())
		}
		if co, ok := u.Result.(campaigndir.CellsOutput); ok {
			for _, f := range co.WrittenCells() {
				if prev, dup := in.from[f.Cell]; dup {
					return nil, fmt.Errorf("cell %s is imported twice (by steps %s and %s): give each import a distinct id", f.Cell, prev, u.Step)
				}
				in.from[f.Cell] = u.Step
				in.imported = append(in.imported, f)
			}
		}
	}
	return in, nil
}

// checkImports refuses an imported cell that collides with a campaign cell: it would be
// aggregated twice.
func checkImports(imported []campaigndir.CellFiles, cells []schema.Cell) error {
	for _, f := range imported {
		if slices.ContainsFunc(cells, func(c schema.Cell) bool { return c.ID == f.Cell }) {
			return fmt.Errorf("an import wrote cell %s, which is also a cell of the campaign: rename the cell or the import id", f.Cell)
		}
	}
	return nil
}

// normalizeCell reads one campaign cell's measured points, windows and correlation (as their
// steps recorded them), maps them to atlas rows with the verdicts they carry, and writes the
// cell. A point no step measured keeps a gray row.
func normalizeCell(t *engine.Task, cell schema.Cell, in *upstream) (campaigndir.CellFiles, error) {
	var points []schema.Point
	spec := map[schema.Load]*schema.SpecWindow{}
	loads := cell.Loads()
	if cell.Expands() { // its points were chosen at run time: what was measured is what exists
		loads = slices.SortedFunc(maps.Keys(in.points[cell.ID]), schema.Load.Compare)
		cell.Concurrencies, cell.Rates = nil, nil // Normalize lists what was measured
	}
	for _, l := range loads {
		if rel := in.points[cell.ID][l]; rel != "" {
			var p schema.Point
			if err := t.Files.JSON(rel, &p); err != nil {
				return campaigndir.CellFiles{}, err
			}
			p.Load, p.Concurrency = l, l.InFlight()
			points = append(points, p)
		}
		if rel := in.windows[cell.ID][l]; rel != "" {
			var w schema.SpecWindow
			if err := t.Files.JSON(rel, &w); err != nil {
				return campaigndir.CellFiles{}, err
			}
			spec[l] = &w
		}
	}
	var dcgm *schema.DCGMCorrelation
	if rel := in.corr[cell.ID]; rel != "" {
		dcgm = &schema.DCGMCorrelation{}
		if err := t.Files.JSON(rel, dcgm); err != nil {
			return campaigndir.CellFiles{}, err
		}
	}
	rows, status := atlas.Normalize(t.Campaign.Campaign, cell, points, spec, dcgm)
	atlas.AttachVerdicts(rows, t.Verdicts)
	return atlas.WriteCell(t.Dir, cell.ID, rows, status)
}

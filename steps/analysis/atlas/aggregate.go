package atlas

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Coverage counts what an atlas covers; String renders the report's page-1 coverage line.
type Coverage struct {
	Cells     int `json:"cells"`      // distinct atlas cells
	Full      int `json:"full"`       // cells with status full
	Partial   int `json:"partial"`    // cells with status partial
	Failed    int `json:"failed"`     // cells with status failed
	PlotReady int `json:"plot_ready"` // rows with plot_ready
	Rows      int `json:"rows"`       // all rows
}

// String is the coverage line in the seed's words, each count agreeing in number ("1 partial
// sweep", "2 failed cells"; the seed's own line reads "1 partial sweeps").
func (c Coverage) String() string {
	return "Coverage: " + strings.Join([]string{plural.N(c.Cells, "atlas cell"), plural.N(c.Full, "full sweep"),
		plural.N(c.Partial, "partial sweep"), plural.N(c.Failed, "failed cell"), plural.N(c.PlotReady, "plot-ready concurrency point")}, " | ")
}

// rowKey orders the atlas: cell id, point (concurrencies ascending, then rates:
// schema.Load.Compare), then mean input tokens (a prefill ISL sweep holds several ISLs at one
// concurrency).
type rowKey struct {
	cell string
	load schema.Load
	isl  float64
}

func keyOf(r *schema.AtlasRow) rowKey {
	k := rowKey{cell: r.CellID, load: r.PointLoad(), isl: -1}
	if r.MeanInputTokens != nil {
		k.isl = *r.MeanInputTokens
	}
	return k
}

func compareKeys(a, b rowKey) int {
	return cmp.Or(cmp.Compare(a.cell, b.cell), a.load.Compare(b.load), cmp.Compare(a.isl, b.isl))
}

// rowName names a row in an error: cell/point.
func rowName(r *schema.AtlasRow) string { return r.CellID + "/" + r.PointLoad().Key() }

// SortRows puts rows in atlas order (cell id, point, mean input tokens), stably.
func SortRows(rows []schema.AtlasRow) {
	slices.SortStableFunc(rows, func(a, b schema.AtlasRow) int { return compareKeys(keyOf(&a), keyOf(&b)) })
}

// Writer streams rows, which must arrive in atlas order, to JSON Lines while counting
// coverage; it holds one row's key, never the rows, so memory stays flat at any atlas size.
type Writer struct {
	enc     *campaigndir.AtlasEncoder
	cov     Coverage
	last    rowKey
	started bool
	status  string
}

// NewWriter writes atlas rows to w; call Flush when done.
func NewWriter(w io.Writer) *Writer { return &Writer{enc: campaigndir.NewAtlasEncoder(w)} }

// Write appends one row. Rows out of order, duplicated keys, an unknown cell status or a
// status that changes within a cell are errors.
func (w *Writer) Write(row *schema.AtlasRow) error { return w.WriteLine(row, nil) }

// WriteLine is Write for a row whose atlas line is at hand (from campaigndir.ReadCellLines):
// line is copied rather than row encoded again. A nil line encodes row.
func (w *Writer) WriteLine(row *schema.AtlasRow, line []byte) error {
	k := keyOf(row)
	if w.started {
		switch c := compareKeys(w.last, k); {
		case c == 0:
			return fmt.Errorf("atlas row %s: duplicate (cell_id, load, mean_input_tokens)", rowName(row))
		case c > 0:
			return fmt.Errorf("atlas row %s: out of order after %s/%s (want cell_id, then concurrencies and rates ascending)", rowName(row), w.last.cell, w.last.load.Key())
		}
	}
	if !w.started || k.cell != w.last.cell {
		switch row.CellStatus {
		case schema.CellFull:
			w.cov.Full++
		case schema.CellPartial:
			w.cov.Partial++
		case schema.CellFailed:
			w.cov.Failed++
		default:
			return fmt.Errorf("atlas row %s: cell_status %q: want full, partial or failed", rowName(row), row.CellStatus)
		}
		w.cov.Cells++
		w.status = row.CellStatus
	} else if row.CellStatus != w.status {
		return fmt.Errorf("atlas row %s: cell_status %q differs from the cell's earlier rows (%q)", rowName(row), row.CellStatus, w.status)
	}
	w.started, w.last = true, k
	if row.PlotReady {
		w.cov.PlotReady++
	}
	w.cov.Rows++
	if line != nil {
		if err := w.enc.WriteLine(line); err != nil {
			return fmt.Errorf("write atlas row %s: %w", rowName(row), err)
		}
		return nil
	}
	if err := w.enc.Encode(row); err != nil {
		return fmt.Errorf("encode atlas row %s: %w", rowName(row), err)
	}
	return nil
}

// Flush writes buffered rows out.
func (w *Writer) Flush() error { return w.enc.Flush() }

// Coverage is what has been written so far.
func (w *Writer) Coverage() Coverage { return w.cov }

// Aggregate writes the union of rows to w in atlas order and returns its coverage. It sorts a
// copy in memory; AggregateDir streams cell files instead.
func Aggregate(w io.Writer, rows ...schema.AtlasRow) (Coverage, error) {
	sorted := slices.Clone(rows)
	SortRows(sorted)
	aw := NewWriter(w)
	for i := range sorted {
		if err := aw.Write(&sorted[i]); err != nil {
			return Coverage{}, err
		}
	}
	return aw.Coverage(), aw.Flush()
}

// AggregateDir unions the given cells' rows into the campaign's atlas (rel, relative to
// r.Dir), atomically, a few batches of cells in memory at a time. Each row is also passed to
// every observe function (TPM, champion), on the calling goroutine, in atlas order; the row's
// storage is reused for later cells, so copy what you keep. Cells are read and decoded ahead,
// in batches, by background workers (see readahead.go) while this goroutine writes; the error
// returned is the first in cell order, as a sequential pass would meet it.
func AggregateDir(ctx context.Context, r campaigndir.Reader, rel string, cells []campaigndir.CellFiles, observe ...func(*schema.AtlasRow) error) (Coverage, error) {
	sorted := slices.Clone(cells)
	slices.SortFunc(sorted, func(a, b campaigndir.CellFiles) int { return cmp.Compare(a.Cell, b.Cell) })
	ids := make([]string, len(sorted))
	for i, c := range sorted {
		ids[i] = c.Cell
	}
	if dup := firstDuplicate(ids); dup != "" {
		return Coverage{}, fmt.Errorf("aggregate: cell %q listed twice", dup)
	}
	var cov Coverage
	err := campaigndir.WriteWith(campaigndir.Abs(r.Dir, rel), func(f io.Writer) error {
		aw := NewWriter(f)
		ra := startReadAhead(ctx, r, sorted)
		defer ra.Close()
		for b := ra.next(); b != nil; b = ra.next() {
			for _, c := range b.cells {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := writeCell(aw, c, observe); err != nil {
					return err
				}
			}
			if b.err != nil {
				if err := ctx.Err(); err != nil {
					return err
				}
				return b.err
			}
			ra.recycle(b)
		}
		cov = aw.Coverage()
		return aw.Flush()
	})
	if err != nil {
		return Coverage{}, fmt.Errorf("aggregate %s: %w", r.Dir, err)
	}
	return cov, nil
}

// writeCell writes one cell's rows and passes each to observe, in order.
func writeCell(aw *Writer, c readCell, observe []func(*schema.AtlasRow) error) error {
	for i := range c.rows {
		var line []byte
		if c.lines != nil {
			line = c.lines[i]
		}
		if err := aw.WriteLine(&c.rows[i], line); err != nil {
			return err
		}
		for _, fn := range observe {
			if err := fn(&c.rows[i]); err != nil {
				return fmt.Errorf("cell %s %s: %w", c.files.Cell, c.rows[i].PointLoad().Key(), err)
			}
		}
	}
	return nil
}

func firstDuplicate(sorted []string) string {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return sorted[i]
		}
	}
	return ""
}

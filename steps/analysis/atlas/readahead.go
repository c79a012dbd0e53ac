package atlas

import (
	"context"
	"runtime"
	"sync"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Read-ahead: AggregateDir's cells are read and decoded by background workers in batches of
// batchCells consecutive cells while the caller writes and observes them in cell order. A
// batch is one handoff (one channel operation per side for many cells, not one per cell:
// per-cell handoffs cost more in scheduler waits than they saved under load). At most
// batchDepth batches exist; each keeps one CellReader per cell slot and is recycled, so
// memory is bounded by batchDepth·batchCells cells and steady-state allocation is the rows'.
// 16 cells a batch (320 rows in BenchmarkAggregateDir) keep its peak heap near 15 MB; 128×4
// was no faster there and held 65 MB.
const (
	batchCells = 16
	batchDepth = 3
)

// readCell is one cell of a batch as readCellLines returned it.
type readCell struct {
	files campaigndir.CellFiles
	rows  []schema.AtlasRow
	lines [][]byte
}

// cellBatch holds cells [lo, lo+len(cells)) of the sorted list; err, when set, is the error
// of reading the cell right after the last one held (the batch stops there).
type cellBatch struct {
	lo, hi  int
	readers []*campaigndir.CellReader
	cells   []readCell
	err     error
	done    chan struct{} // one value when filled
}

// readAhead reads sorted cells through background workers and hands them to the caller in
// order. Close must be called; it stops and waits for the workers.
type readAhead struct {
	ordered chan *cellBatch // batches in cell order, not yet filled until done
	free    chan *cellBatch
	stop    chan struct{}
	wg      sync.WaitGroup
}

// startReadAhead starts reading sorted through r; ctx cancelled stops the workers (the batch
// being filled records ctx.Err() as its error).
func startReadAhead(ctx context.Context, r campaigndir.Reader, sorted []campaigndir.CellFiles) *readAhead {
	workers := max(1, runtime.GOMAXPROCS(0)-1)
	ra := &readAhead{
		ordered: make(chan *cellBatch, batchDepth),
		free:    make(chan *cellBatch, batchDepth),
		stop:    make(chan struct{}),
	}
	for range batchDepth {
		ra.free <- &cellBatch{done: make(chan struct{}, 1)}
	}
	work := make(chan *cellBatch)
	ra.wg.Add(1 + workers)
	go func() { // dispatcher: assigns ranges in order, bounded by the free batches
		defer ra.wg.Done()
		defer close(work)
		defer close(ra.ordered)
		for lo := 0; lo < len(sorted); lo += batchCells {
			var b *cellBatch
			select {
			case b = <-ra.free:
			case <-ra.stop:
				return
			}
			b.lo, b.hi, b.err = lo, min(lo+batchCells, len(sorted)), nil
			select {
			case ra.ordered <- b:
			case <-ra.stop:
				return
			}
			select {
			case work <- b:
			case <-ra.stop:
				return
			}
		}
	}()
	for range workers {
		go func() {
			defer ra.wg.Done()
			for b := range work {
				b.fill(ctx, r, sorted, ra.stop)
				b.done <- struct{}{}
			}
		}()
	}
	return ra
}

// fill reads the batch's cells, stopping at the first error (or at stop: the caller is gone).
func (b *cellBatch) fill(ctx context.Context, r campaigndir.Reader, sorted []campaigndir.CellFiles, stop <-chan struct{}) {
	b.cells = b.cells[:0]
	for i := b.lo; i < b.hi; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if err := ctx.Err(); err != nil {
			b.err = err
			return
		}
		slot := i - b.lo
		if slot == len(b.readers) {
			b.readers = append(b.readers, campaigndir.NewCellReader(r))
		}
		rows, lines, _, err := readCellLines(b.readers[slot], sorted[i])
		if err != nil {
			b.err = err
			return
		}
		b.cells = append(b.cells, readCell{files: sorted[i], rows: rows, lines: lines})
	}
}

// next returns the next batch in order, filled, or nil when all have been returned. Give it
// back with recycle once its cells are no longer used.
func (ra *readAhead) next() *cellBatch {
	b, ok := <-ra.ordered
	if !ok {
		return nil
	}
	<-b.done
	return b
}

// recycle returns a batch for reuse.
func (ra *readAhead) recycle(b *cellBatch) {
	clear(b.cells) // drop references into the readers' buffers until refilled
	b.cells = b.cells[:0]
	ra.free <- b // never blocks: at most batchDepth batches exist
}

// Close stops the workers and waits for them to exit.
func (ra *readAhead) Close() {
	close(ra.stop)
	ra.wg.Wait()
}

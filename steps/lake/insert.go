package lake

import (
	"context"
	"fmt"
	"reflect"
)

// maxParams bounds the placeholders of one INSERT: under SQLite's 32766 and PostgreSQL's 65535.
const maxParams = 30000

// maxBatchRows bounds the rows of one INSERT, so progress moves and statements stay small.
const maxBatchRows = 500

// inserter buffers one table's rows into multi-row INSERTs.
type inserter struct {
	tx       txn
	d        dialect
	t        Table
	per      int            // rows per full batch
	args     []any          // pending values, row-major
	pending  int            // rows in args
	done     int            // rows inserted
	stmts    map[int]string // INSERT text by row count
	progress Progress
	x        *extractor // built for the first record's type
}

func newInserter(tx txn, d dialect, t Table, progress Progress) *inserter {
	per := max(1, min(maxBatchRows, maxParams/len(t.Columns)))
	return &inserter{tx: tx, d: d, t: t, per: per, stmts: map[int]string{}, progress: progress,
		args: make([]any, 0, per*len(t.Columns))}
}

// add queues one record; what names it in an error (cell/c8, ...).
func (b *inserter) add(ctx context.Context, record any, computed map[string]any, what string) error {
	if b.x == nil {
		x, err := newExtractor(b.t, reflect.TypeOf(record).Elem())
		if err != nil {
			return err
		}
		b.x = x
	}
	vals, err := b.x.values(record, computed)
	if err != nil {
		return fmt.Errorf("%s row %s: %w", b.t.Name, what, err)
	}
	b.args = append(b.args, vals...)
	b.pending++
	if b.pending == b.per {
		return b.flush(ctx)
	}
	return nil
}

// flush inserts the pending rows.
func (b *inserter) flush(ctx context.Context) error {
	if b.pending == 0 {
		return nil
	}
	q, ok := b.stmts[b.pending]
	if !ok {
		q = b.d.insertSQL(b.t, b.pending)
		b.stmts[b.pending] = q
	}
	if _, err := b.tx.exec(ctx, q, b.args...); err != nil {
		return fmt.Errorf("%s: insert rows %d-%d: %w", b.t.Name, b.done+1, b.done+b.pending, err)
	}
	b.done += b.pending
	b.pending = 0
	b.args = b.args[:0]
	b.progress(b.t.Name, b.done)
	return nil
}

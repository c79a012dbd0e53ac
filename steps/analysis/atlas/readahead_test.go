package atlas

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// manyCells writes n cells of two rows each, as WriteCell would but without its fsyncs, so the
// read-ahead crosses several batches and waits on recycled ones.
func manyCells(t *testing.T, dir string, n int) ([]campaigndir.CellFiles, []schema.AtlasRow) {
	t.Helper()
	var ids []campaigndir.CellFiles
	var all []schema.AtlasRow
	for i := range n {
		id := fmt.Sprintf("cell-%04d", i)
		rows, status := Normalize("camp", testCell(id, 1, 2), []schema.Point{okPoint(id, 1), okPoint(id, 2)}, nil, nil)
		files, normalized, st, err := campaigndir.EncodeCell(id, rows, status)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(campaigndir.Abs(dir, files.Normalized)), 0o755); err != nil {
			t.Fatal(err)
		}
		for rel, data := range map[string][]byte{files.Normalized: normalized, files.Status: st} {
			if err := os.WriteFile(campaigndir.Abs(dir, rel), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, files)
		all = append(all, rows...)
	}
	// Listed out of order: AggregateDir sorts.
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids, all
}

// waitGoroutines fails unless the goroutine count returns to at most want: the read-ahead's
// workers must have exited when AggregateDir returns (polled, as exiting goroutines are
// counted until they are gone).
func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	n := runtime.NumGoroutine()
	for i := 0; i < 500 && n > want; i++ {
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	if n > want {
		t.Errorf("%d goroutines after AggregateDir, %d before: the read-ahead leaked", n, want)
	}
}

func TestAggregateDirReadAheadManyBatches(t *testing.T) {
	dir := t.TempDir()
	n := batchCells*(batchDepth+2) + 7
	ids, all := manyCells(t, dir, n)
	before := runtime.NumGoroutine()
	var seen []string
	cov, err := AggregateDir(context.Background(), campaigndir.Unrecorded(dir), campaigndir.Atlas(), ids,
		func(r *schema.AtlasRow) error {
			seen = append(seen, fmt.Sprintf("%s/c%d", r.CellID, r.Concurrency))
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	waitGoroutines(t, before)
	if cov.Cells != n || cov.Rows != 2*n {
		t.Errorf("coverage %+v, want %d cells, %d rows", cov, n, 2*n)
	}
	var want bytes.Buffer
	if _, err := Aggregate(&want, all...); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Atlas()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Error("atlas.jsonl differs from the in-memory Aggregate of the same rows")
	}
	for i := range seen {
		if w := fmt.Sprintf("cell-%04d/c%d", i/2, 1+i%2); seen[i] != w {
			t.Fatalf("observed row %d is %s, want %s (cell order)", i, seen[i], w)
		}
	}
}

// TestAggregateDirFirstErrorInCellOrder: an error of writing or observing a cell wins over a
// read error of a later cell that the read-ahead met first, and a read error is the one the
// sequential read gives.
func TestAggregateDirFirstErrorInCellOrder(t *testing.T) {
	dir := t.TempDir()
	n := batchCells*3 + 1
	ids, _ := manyCells(t, dir, n)
	r := campaigndir.Unrecorded(dir)
	bad := fmt.Sprintf("cell-%04d", batchCells+3) // in the second batch
	for _, f := range ids {
		if f.Cell == bad {
			if err := os.WriteFile(campaigndir.Abs(dir, f.Status), []byte("bogus\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, _, want := readCellLines(campaigndir.NewCellReader(r), f)
			if want == nil {
				t.Fatal("no error reading the damaged cell")
			}
			_, err := AggregateDir(context.Background(), r, campaigndir.Atlas(), ids)
			if err == nil || !strings.HasSuffix(err.Error(), want.Error()) {
				t.Errorf("AggregateDir error %v, want it to end in the sequential read's %q", err, want)
			}
		}
	}
	errObserve := errors.New("observer refuses")
	for _, at := range []string{"cell-0005", fmt.Sprintf("cell-%04d", batchCells+2)} {
		before := runtime.NumGoroutine()
		_, err := AggregateDir(context.Background(), r, campaigndir.Atlas(), ids, func(row *schema.AtlasRow) error {
			if row.CellID == at {
				return errObserve
			}
			return nil
		})
		if !errors.Is(err, errObserve) || !strings.Contains(err.Error(), at) {
			t.Errorf("observer failing at %s: error %v, want the observer's, naming the cell", at, err)
		}
		waitGoroutines(t, before)
	}
}

func TestAggregateDirCancelled(t *testing.T) {
	dir := t.TempDir()
	ids, _ := manyCells(t, dir, batchCells*(batchDepth+2))
	r := campaigndir.Unrecorded(dir)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := AggregateDir(ctx, r, campaigndir.Atlas(), ids); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: error %v, want context.Canceled", err)
	}
	waitGoroutines(t, before)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	rows := 0
	_, err := AggregateDir(ctx, r, campaigndir.Atlas(), ids, func(*schema.AtlasRow) error {
		if rows++; rows == 3 {
			cancel() // mid-pass, with batches read ahead and workers blocked on free ones
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled mid-pass: error %v, want context.Canceled", err)
	}
	if rows > 4 {
		t.Errorf("%d rows observed after cancelling at the third: want the pass to stop at the next cell", rows)
	}
	waitGoroutines(t, before)
	if _, err := os.Stat(campaigndir.Abs(dir, campaigndir.Atlas())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cancelled pass left an atlas: %v", err)
	}
}

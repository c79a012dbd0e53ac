package checkpoint

import (
	"fmt"
	"sync"
	"testing"

	"github.com/perfdag/perfdag/schema/campaigndir"
)

// sliced writes a journal with one record and the slice journals of cells a and b with one
// record each: the view every reader must see, before, during and after a fold.
func sliced(t *testing.T, dir string, round int) map[string]string {
	t.Helper()
	whole, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"deploy": fmt.Sprint("d", round)}
	mustSave(t, whole, &Record{Node: "deploy", Status: Succeeded, Digest: want["deploy"]})
	whole.Close()
	for _, cell := range []string{"a", "b"} {
		s, err := OpenSlice(dir, cell)
		if err != nil {
			t.Fatal(err)
		}
		id := "run[" + cell + "/c1]"
		want[id] = fmt.Sprint(cell, round)
		mustSave(t, s, &Record{Node: id, Status: Succeeded, Digest: want[id]})
		s.Close()
	}
	return want
}

func sameView(all map[string]*Record, want map[string]string) error {
	if len(all) != len(want) {
		return fmt.Errorf("%d records, want %d", len(all), len(want))
	}
	for id, d := range want {
		if r := all[id]; r == nil || r.Digest != d {
			return fmt.Errorf("%s = %+v, want digest %s", id, r, d)
		}
	}
	return nil
}

// A reader that read the journal just before a whole opener folded the slice journals into
// it (renamed the merged journal into place, removed the slices) still sees every record: it
// notices the journal it read was replaced and reads again. The fold is run at that exact
// point (between the journal and the slices), so this fails on a reader that reads once.
func TestReaderDuringFoldSeesEverySlice(t *testing.T) {
	dir := t.TempDir()
	want := sliced(t, dir, 1)
	folds := 0
	beforeSlices = func() {
		if folds > 0 {
			return
		}
		folds++
		whole, err := Open(dir)
		if err != nil {
			t.Error(err)
			return
		}
		whole.Close()
		if js, _ := campaigndir.SliceJournals(dir); len(js) != 0 {
			t.Errorf("the fold left slice journals %v", js)
		}
	}
	defer func() { beforeSlices = nil }()
	all, err := ReadOnly(dir).LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	if folds != 1 {
		t.Fatalf("%d folds ran inside the read, want 1", folds)
	}
	if err := sameView(all, want); err != nil {
		t.Errorf("a reader across a fold: %v", err)
	}
}

// Readers running concurrently with folds (status while a campaign-scope slice opens the
// directory whole) never see fewer records than the journal and the slices hold together.
func TestReadersConcurrentWithFolds(t *testing.T) {
	dir := t.TempDir()
	const rounds = 40
	for round := range rounds {
		want := sliced(t, dir, round)
		done := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for stop := false; !stop; {
					select {
					case <-done:
						stop = true // one more read after the fold
					default:
					}
					all, err := ReadOnly(dir).LoadAll()
					if err == nil {
						err = sameView(all, want)
					}
					if err != nil {
						errs <- fmt.Errorf("round %d: %w", round, err)
						return
					}
				}
			}()
		}
		whole, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		whole.Close()
		close(done)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
}

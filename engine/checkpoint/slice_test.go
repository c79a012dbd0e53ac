package checkpoint

import (
	"os"
	"testing"

	"github.com/perfdag/perfdag/schema/campaigndir"
)

func mustSave(t *testing.T, s *Store, r *Record) {
	t.Helper()
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
}

// Slices of two cells write their own journals while both are open; every reader sees the
// journal and both slices merged (a slice's record over the journal's); the next whole
// opener folds them into the journal and removes them; a crash between that rewrite and the
// removal leaves duplicates that change nothing.
func TestSliceJournalsMerge(t *testing.T) {
	dir := t.TempDir()
	whole, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustSave(t, whole, &Record{Node: "deploy", Status: Succeeded, Digest: "d1"})
	mustSave(t, whole, &Record{Node: "run[a/c1]", Status: Failed})
	whole.Close()

	a, err := OpenSlice(dir, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenSlice(dir, "b")
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := a.Load("deploy"); r == nil || r.Digest != "d1" {
		t.Fatalf("slice a does not see the journal's deploy: %+v", r)
	}
	mustSave(t, a, &Record{Node: "run[a/c1]", Status: Running})
	mustSave(t, b, &Record{Node: "run[b/c1]", Status: Succeeded, Digest: "b1"})
	mustSave(t, a, &Record{Node: "run[a/c1]", Status: Succeeded, Digest: "a1"})
	a.Close()
	b.Close()
	for _, cell := range []string{"a", "b"} {
		if _, err := os.Stat(campaigndir.SliceJournal(dir, cell)); err != nil {
			t.Fatalf("slice journal of %s: %v", cell, err)
		}
	}
	want := map[string]string{"deploy": "d1", "run[a/c1]": "a1", "run[b/c1]": "b1"}
	check := func(when string) {
		t.Helper()
		all, err := ReadOnly(dir).LoadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != len(want) {
			t.Fatalf("%s: %d records, want %d", when, len(all), len(want))
		}
		for id, d := range want {
			if r := all[id]; r == nil || r.Status != Succeeded || r.Digest != d {
				t.Errorf("%s: %s = %+v, want succeeded %s", when, id, r, d)
			}
		}
	}
	check("slices open")

	// a crash after the merged journal was renamed into place, before the slices went
	sliceA, _ := os.ReadFile(campaigndir.SliceJournal(dir, "a"))
	whole, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	whole.Close()
	if js, _ := campaigndir.SliceJournals(dir); len(js) != 0 {
		t.Fatalf("slice journals left after a whole open: %v", js)
	}
	check("merged")
	if err := os.WriteFile(campaigndir.SliceJournal(dir, "a"), sliceA, 0o644); err != nil {
		t.Fatal(err)
	}
	check("merged, a slice journal left behind")
	whole, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustSave(t, whole, &Record{Node: "run[a/c1]", Status: Succeeded, Digest: "a2"})
	whole.Close()
	want["run[a/c1]"] = "a2"
	check("a later whole run")
}

package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Slices of cells share the directory; a whole holder (a run, a campaign-scope slice) excludes
// them and they it; a second attempt of one cell's slice waits for the first. A wait ends
// when its context does (a cancelled context only stops a wait: a free lock is still taken).
func TestLockSharing(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	done, cancel := context.WithCancel(ctx)
	cancel()

	s1, err := LockWait(ctx, dir, Shared)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := LockWait(done, dir, Shared)
	if err != nil {
		t.Fatalf("a second shared holder was refused: %v", err)
	}
	if _, err := LockWait(done, dir, Whole); err == nil {
		t.Fatal("the whole lock was taken while slices share the directory")
	}
	if _, err := Lock(dir); err == nil {
		t.Fatal("a run took the directory while slices share it")
	}
	if !Locked(dir) {
		t.Error("Locked says no while slices hold the directory")
	}
	cellA, err := LockSlice(ctx, dir, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockSlice(done, dir, "a"); err == nil {
		t.Fatal("two attempts of cell a's slice ran at once")
	}
	cellB, err := LockSlice(done, dir, "b")
	if err != nil {
		t.Fatalf("cell b's slice waited for cell a's: %v", err)
	}
	cellA()
	cellB()
	s1()
	if _, err := LockWait(done, dir, Whole); err == nil {
		t.Fatal("the whole lock was taken while one slice still holds the directory")
	}
	s2()
	w, err := LockWait(done, dir, Whole)
	if err != nil {
		t.Fatalf("the free directory was not taken whole: %v", err)
	}
	if _, err := LockWait(done, dir, Shared); err == nil {
		t.Fatal("a slice shared the directory with a whole holder")
	}
	w()
	if Locked(dir) {
		t.Error("Locked says yes after every holder left")
	}
}

// A directory holding only what may precede a first run — a calibration, the lock, a frozen
// file — takes a run; any other file refuses it, never overwritten.
func TestUsable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		ok    bool
	}{
		{"empty", nil, true},
		{"calibrated before the first run", []string{campaigndir.Calibration(), ".lock"}, true},
		{"someone's notes", []string{campaigndir.Calibration(), "notes.txt"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			existing, err := Usable(dir)
			if existing || (err == nil) != tc.ok {
				t.Errorf("Usable = %v, %v; want usable %v", existing, err, tc.ok)
			}
		})
	}
}

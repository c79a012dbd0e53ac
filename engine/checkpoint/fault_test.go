package checkpoint

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/perfdag/perfdag/engine/jsonl/faultfile"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// TestFullDisk: Save(A) ok, Save(B) fails on a faulty disk, the fault clears, Save(C) ok →
// a fresh Open loads A and C, never B, and the journal has no partial line. Covers a short
// write (ENOSPC), EIO, and an fsync that fails after the whole line was written.
func TestFullDisk(t *testing.T) {
	cases := []struct {
		name    string
		fault   func(d *faultfile.Disk)
		wantErr string
	}{
		{"ENOSPC short write", func(d *faultfile.Disk) { d.SetFree(20) }, "no space left on device"},
		{"EIO mid-line", func(d *faultfile.Disk) { d.FailWrite(9, syscall.EIO) }, "input/output error"},
		{"fsync fails after a whole write", func(d *faultfile.Disk) { d.FailSync(syscall.EIO) }, "sync"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			disk := &faultfile.Disk{}
			s, err := open(dir, disk.Open)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Save(&Record{Node: "A", Status: Succeeded}); err != nil {
				t.Fatal(err)
			}
			tc.fault(disk)
			err = s.Save(&Record{Node: "B", Status: Succeeded, Summary: strings.Repeat("b", 100)})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "save checkpoint B") {
				t.Fatalf("Save(B) = %v, want an error naming B and %q", err, tc.wantErr)
			}
			if r, _ := s.Load("B"); r != nil {
				t.Fatal("B counts as saved after its append failed")
			}
			// After the rollback the journal is whole lines only, readable as it stands.
			b, _ := os.ReadFile(campaigndir.Journal(dir))
			if len(b) == 0 || b[len(b)-1] != '\n' || strings.Contains(string(b), `"B"`) {
				t.Fatalf("journal after the failed save: %q", b)
			}
			if all, err := ReadOnly(dir).LoadAll(); err != nil || len(all) != 1 || all["A"] == nil {
				t.Fatalf("journal after the failed save reads %v, %v", all, err)
			}
			disk.SetFree(-1)
			if err := s.Save(&Record{Node: "C", Status: Succeeded}); err != nil {
				t.Fatal(err)
			}
			s.Close()
			s, err = Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			all, err := s.LoadAll()
			if err != nil || len(all) != 2 || all["A"] == nil || all["C"] == nil || all["B"] != nil {
				t.Fatalf("reopened journal: %v, %v; want A and C", all, err)
			}
		})
	}
}

// TestUnrecoverableAppendRefusesSaves: when the partial line cannot be truncated, later saves
// are refused with a clear error (writing after it would make those records unreadable), and
// the next Open trims it.
func TestUnrecoverableAppendRefusesSaves(t *testing.T) {
	dir := t.TempDir()
	disk := &faultfile.Disk{}
	s, err := open(dir, disk.Open)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(&Record{Node: "A", Status: Succeeded}); err != nil {
		t.Fatal(err)
	}
	disk.SetFree(10)
	disk.FailTruncate(syscall.EIO)
	if err := s.Save(&Record{Node: "B", Status: Succeeded}); err == nil {
		t.Fatal("Save(B) on a full disk succeeded")
	}
	disk.SetFree(-1)
	err = s.Save(&Record{Node: "C", Status: Succeeded})
	if err == nil || !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "could not be rolled back") {
		t.Fatalf("Save(C) after a failed rollback = %v, want refused", err)
	}
	s.Close()
	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(&Record{Node: "C", Status: Succeeded}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	all, err := ReadOnly(dir).LoadAll()
	if err != nil || len(all) != 2 || all["A"] == nil || all["C"] == nil {
		t.Fatalf("after reopen: %v, %v; want A and C", all, err)
	}
}

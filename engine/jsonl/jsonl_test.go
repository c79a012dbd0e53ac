package jsonl_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/perfdag/perfdag/engine/jsonl"
	"github.com/perfdag/perfdag/engine/jsonl/faultfile"
)

// TestAppendFaults: whatever goes wrong with the second append, the file afterwards holds
// exactly the whole lines that were acknowledged, and the third append (after the fault
// clears) lands right after the first — never after a partial line.
func TestAppendFaults(t *testing.T) {
	const a, b, c = "{\"n\":\"A\"}\n", "{\"n\":\"B\",\"pad\":\"xxxxxxxxxxxxxxxx\"}\n", "{\"n\":\"C\"}\n"
	cases := []struct {
		name    string
		sync    bool
		fault   func(d *faultfile.Disk)
		wantErr string
		short   bool // the fault produced a short write
	}{
		{"disk full mid-line", true, func(d *faultfile.Disk) { d.SetFree(7) }, "no space left on device", true},
		{"disk full, unsynced", false, func(d *faultfile.Disk) { d.SetFree(7) }, "no space left on device", true},
		{"disk full at a line boundary", true, func(d *faultfile.Disk) { d.SetFree(0) }, "no space left on device", true},
		{"EIO after 3 bytes", true, func(d *faultfile.Disk) { d.FailWrite(3, syscall.EIO) }, "input/output error", true},
		{"EIO after the whole line", true, func(d *faultfile.Disk) { d.FailWrite(1<<20, syscall.EIO) }, "input/output error", false},
		{"short write without an error", false, func(d *faultfile.Disk) { d.FailWrite(5, nil) }, "short write", true},
		{"fsync fails after a whole write", true, func(d *faultfile.Disk) { d.FailSync(syscall.EIO) }, "sync", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.jsonl")
			disk := &faultfile.Disk{}
			w, err := jsonl.Open(path, disk.Open)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := w.Append([]byte(a), tc.sync); err != nil {
				t.Fatal(err)
			}
			tc.fault(disk)
			err = w.Append([]byte(b), tc.sync)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "rolled back") {
				t.Fatalf("faulty append: %v, want %q, rolled back", err, tc.wantErr)
			}
			if got := disk.ShortWrites() > 0; got != tc.short {
				t.Fatalf("short writes %d, want short=%v: the fault did not fire as designed", disk.ShortWrites(), tc.short)
			}
			if got := read(t, path); got != a {
				t.Fatalf("after the fault the file holds %q, want %q", got, a)
			}
			disk.SetFree(-1)
			if err := w.Append([]byte(c), tc.sync); err != nil {
				t.Fatal(err)
			}
			if got := read(t, path); got != a+c || w.Size() != int64(len(a+c)) {
				t.Fatalf("file %q (size %d), want %q", got, w.Size(), a+c)
			}
		})
	}
}

// TestRollbackFailureRefusesAppends: when the partial line cannot be cut off, appending after
// it would hide every later line, so the writer refuses; reopening trims the partial line.
func TestRollbackFailureRefusesAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	disk := &faultfile.Disk{}
	w, err := jsonl.Open(path, disk.Open)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append([]byte("A\n"), true); err != nil {
		t.Fatal(err)
	}
	disk.SetFree(1)
	disk.FailTruncate(syscall.EROFS)
	if err := w.Append([]byte("BBBB\n"), true); err == nil || !strings.Contains(err.Error(), "could not be rolled back to byte 2") {
		t.Fatalf("append with a failed rollback: %v", err)
	}
	disk.SetFree(-1)
	disk.FailTruncate(nil)
	if err := w.Append([]byte("C\n"), true); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("append after a failed rollback: %v, want refused", err)
	}
	if got := read(t, path); got != "A\nB" {
		t.Fatalf("file %q, want the partial line left alone", got)
	}
	w.Close()
	w, data, err := jsonl.OpenRead(path, jsonl.OpenOS)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if string(data) != "A\n" || read(t, path) != "A\n" {
		t.Fatalf("reopen read %q, file %q; want the partial line trimmed", data, read(t, path))
	}
	if err := w.Append([]byte("C\n"), true); err != nil || read(t, path) != "A\nC\n" {
		t.Fatalf("append after reopen: %v, file %q", err, read(t, path))
	}
}

// TestOpenTrimsTornTail: a crash's torn last line is cut off on open, found by reading the
// tail backwards (also when it is longer than one read chunk).
func TestOpenTrimsTornTail(t *testing.T) {
	long := strings.Repeat("x", 10000)
	cases := []struct{ name, content, want string }{
		{"empty", "", ""},
		{"clean", "A\nB\n", "A\nB\n"},
		{"torn", "A\nB\n{\"n\":", "A\nB\n"},
		{"torn longer than a chunk", "A\n" + long, "A\n"},
		{"only a torn line", long, ""},
		{"long whole lines", long + "\n" + long + "\nC", long + "\n" + long + "\n"},
	}
	for _, tc := range cases {
		for _, read := range []bool{false, true} {
			path := filepath.Join(t.TempDir(), "log.jsonl")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			var w *jsonl.Writer
			var data []byte
			var err error
			if read {
				w, data, err = jsonl.OpenRead(path, jsonl.OpenOS)
			} else {
				w, err = jsonl.Open(path, jsonl.OpenOS)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Append([]byte("Z\n"), false); err != nil {
				t.Fatal(err)
			}
			w.Close()
			if got, _ := os.ReadFile(path); string(got) != tc.want+"Z\n" {
				t.Errorf("%s (read=%v): file %.40q…, want %.40q…", tc.name, read, got, tc.want+"Z\n")
			}
			if read && string(data) != tc.want {
				t.Errorf("%s: read %d bytes, want %d", tc.name, len(data), len(tc.want))
			}
		}
	}
}

func TestOpenErrors(t *testing.T) {
	_, err := jsonl.Open(filepath.Join(t.TempDir(), "missing", "log.jsonl"), jsonl.OpenOS)
	if err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("open in a missing dir: %v", err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Two shared writers on one file (two slices' event logs): appends interleave whole, and a
// failed append rolls back only its own bytes — the other writer's line after this writer's
// last one survives, where a rollback to this writer's own idea of the end would cut it.
func TestSharedWritersKeepEachOthersLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.jsonl")
	disk := &faultfile.Disk{}
	a, err := jsonl.OpenShared(path, disk.Open)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := jsonl.OpenShared(path, jsonl.OpenOS)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, step := range []struct {
		w    *jsonl.Writer
		line string
		fail bool
	}{
		{a, "{\"a\":1}\n", false},
		{b, "{\"b\":1}\n", false},
		{a, "{\"a\":2,\"pad\":\"xxxxxxxxxxxxxxxxxxxx\"}\n", true},
		{a, "{\"a\":3}\n", false},
		{b, "{\"b\":2}\n", false},
	} {
		if step.fail {
			disk.SetFree(5)
		}
		err := step.w.Append([]byte(step.line), true)
		if (err != nil) != step.fail {
			t.Fatalf("append %s: %v", step.line, err)
		}
		disk.SetFree(-1)
	}
	got, _ := os.ReadFile(path)
	if want := "{\"a\":1}\n{\"b\":1}\n{\"a\":3}\n{\"b\":2}\n"; string(got) != want {
		t.Fatalf("file holds\n%s\nwant\n%s", got, want)
	}
}

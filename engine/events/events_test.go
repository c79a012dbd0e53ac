package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/jsonl/faultfile"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

func ev(node string) Event {
	return Event{Time: time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC), Run: "r1", Type: NodeEnd, Node: node, Status: "succeeded"}
}

func nodes(evs []Event) string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Node)
	}
	return strings.Join(out, ",")
}

// TestFullDisk: Emit(A) ok, Emit(B) hits a faulty disk, space is freed, Emit(C) ok → the log
// reads A, B, C: the failed write was cut back off the file (no torn line before C) and B was
// kept for the next write rather than lost.
func TestFullDisk(t *testing.T) {
	cases := []struct {
		name  string
		fault func(d *faultfile.Disk)
		want  string
	}{
		{"ENOSPC short write", func(d *faultfile.Disk) { d.SetFree(30) }, "no space left on device"},
		{"EIO mid-line", func(d *faultfile.Disk) { d.FailWrite(12, syscall.EIO) }, "input/output error"},
		{"short write without an error", func(d *faultfile.Disk) { d.FailWrite(12, nil) }, "short write"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.jsonl")
			disk := &faultfile.Disk{}
			l, err := open(path, disk.Open)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Emit(ev("A")); err != nil {
				t.Fatal(err)
			}
			tc.fault(disk)
			if err := l.Emit(ev("B")); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "1 events kept") {
				t.Fatalf("Emit(B) = %v, want %q and B kept", err, tc.want)
			}
			if disk.ShortWrites() != 1 {
				t.Fatalf("%d short writes: the fault did not fire", disk.ShortWrites())
			}
			b, _ := os.ReadFile(path)
			if bytes.Count(b, []byte{'\n'}) != 1 || b[len(b)-1] != '\n' {
				t.Fatalf("after the failed write the log holds %q, want A's line only", b)
			}
			disk.SetFree(-1)
			if err := l.Emit(ev("C")); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			evs, err := Read(path)
			if err != nil || nodes(evs) != "A,B,C" {
				t.Fatalf("Read = %s, %v; want A,B,C", nodes(evs), err)
			}
		})
	}
}

// TestDiskFullTooLongDropsEvents: a disk that keeps failing does not make the log grow in
// memory forever: past maxPending the pending events are dropped, and the error counts them.
func TestDiskFullTooLongDropsEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	disk := &faultfile.Disk{}
	l, err := open(path, disk.Open)
	if err != nil {
		t.Fatal(err)
	}
	disk.SetFree(0)
	e := ev("A")
	e.Message = strings.Repeat("m", 64<<10)
	emitted := 0
	for err := error(nil); err == nil || !strings.Contains(err.Error(), "events dropped"); emitted++ {
		if emitted > maxPending/len(e.Message)+1 {
			t.Fatalf("%d events pending on a full disk and nothing dropped (last error %v)", emitted, err)
		}
		err = l.Emit(e)
		if err == nil {
			t.Fatal("Emit on a full disk succeeded")
		}
	}
	if len(l.pending) != 0 || emitted < maxPending/len(e.Message) {
		t.Fatalf("dropped after %d events, %d bytes still pending", emitted, len(l.pending))
	}
	disk.SetFree(-1)
	if err := l.Emit(ev("B")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if evs, err := Read(path); err != nil || nodes(evs) != "B" {
		t.Fatalf("Read = %s, %v; want B", nodes(evs), err)
	}
}

// TestOpenTrimsTornLine: a crash tore the last line; the next run's first event still gets a
// line of its own.
func TestOpenTrimsTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	a, _ := json.Marshal(ev("A"))
	if err := os.WriteFile(path, append(append(a, '\n'), `{"time":"2026-01-05T10:0`...), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Emit(ev("C")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	b, _ := os.ReadFile(path)
	if evs, err := Read(path); err != nil || nodes(evs) != "A,C" || bytes.Count(b, []byte{'\n'}) != 2 {
		t.Fatalf("Read = %s, %v; file %q", nodes(evs), err, b)
	}
}

// TestReadKeepsEventsAroundTornLines: whatever a crash left mid-file, Read keeps every whole
// event after it and never fails.
func TestReadKeepsEventsAroundTornLines(t *testing.T) {
	line := func(n string) string { b, _ := json.Marshal(ev(n)); return string(b) }
	torn := line("X")[:25]
	cases := []struct{ name, content, want string }{
		{"clean", line("A") + "\n" + line("B") + "\n", "A,B"},
		{"torn last line", line("A") + "\n" + torn, "A"},
		{"torn line glued to the next", line("A") + "\n" + torn + line("B") + "\n" + line("C") + "\n", "A,B,C"},
		{"two torn lines glued", torn + torn + line("B") + "\n", "B"},
		{"torn line on its own", line("A") + "\n" + torn + "\n" + line("B") + "\n", "A,B"},
		{"two whole events on one line", line("A") + line("B") + "\n", "A,B"},
		{"garbage and blank lines", "\n\x00\x00\n" + line("A") + "\n\n", "A"},
		{"a very long line", `{"time":"` + strings.Repeat("z", 20<<20) + "\n" + line("A") + "\n", "A"},
	}
	for _, tc := range cases {
		path := filepath.Join(t.TempDir(), "log.jsonl")
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		evs, err := Read(path)
		if err != nil || nodes(evs) != tc.want {
			t.Errorf("%s: Read = %s, %v; want %s", tc.name, nodes(evs), err, tc.want)
		}
	}
	if evs, err := Read(filepath.Join(t.TempDir(), "none")); evs != nil || err != nil {
		t.Errorf("missing log: %v, %v", evs, err)
	}
}

// TestRecordStart pins what decodeLine splits on: an encoded Event begins with recordStart,
// even when a string field contains it.
func TestRecordStart(t *testing.T) {
	e := ev("A")
	e.Message = `{"time":"inside"}`
	b, _ := json.Marshal(e)
	if !bytes.HasPrefix(b, recordStart) || bytes.Count(b, recordStart) != 1 {
		t.Fatalf("encoded event %s: want exactly one %s, at the start", b, recordStart)
	}
}

// A follower reads whole lines only: a line being written is read once it is complete, from
// where the last read ended; a trimmed log says so.
func TestReadFrom(t *testing.T) {
	path := campaigndir.Events(t.TempDir())
	if evs, off, err := ReadFrom(path, 0); err != nil || evs != nil || off != 0 {
		t.Fatalf("a missing log: %v %d %v", evs, off, err)
	}
	line := func(node string) []byte {
		b, _ := json.Marshal(Event{Type: NodeStart, Node: node})
		return append(b, '\n')
	}
	a, b := line("a"), line("b")
	if err := os.WriteFile(path, append(append([]byte{}, a...), b[:len(b)/2]...), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, off, err := ReadFrom(path, 0)
	if err != nil || len(evs) != 1 || evs[0].Node != "a" || off != int64(len(a)) {
		t.Fatalf("with a torn last line: %+v %d %v", evs, off, err)
	}
	all, size, err := ReadSize(path)
	if err != nil || len(all) != 1 || size != off {
		t.Fatalf("ReadSize: %+v %d %v", all, size, err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.Write(b[len(b)/2:])
	_ = f.Close()
	evs, off2, err := ReadFrom(path, off)
	if err != nil || len(evs) != 1 || evs[0].Node != "b" || off2 != int64(len(a)+len(b)) {
		t.Fatalf("once whole: %+v %d %v", evs, off2, err)
	}
	if evs, off3, err := ReadFrom(path, off2); err != nil || len(evs) != 0 || off3 != off2 {
		t.Fatalf("nothing new: %+v %d %v", evs, off3, err)
	}
	if err := os.WriteFile(path, a, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadFrom(path, off2); !errors.Is(err, ErrShrunk) {
		t.Fatalf("a trimmed log: %v", err)
	}
}

// An offset no read returned is refused, never read from: a negative one was the size of the
// buffer allocated (or a panic for the most negative). The check comes before any allocation.
func TestReadFromRefusesANegativeOffset(t *testing.T) {
	path := campaigndir.Events(t.TempDir())
	b, _ := json.Marshal(ev("a"))
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, from := range []int64{math.MinInt64, -1, -1 << 40} {
		evs, next, err := ReadFrom(path, from)
		if !errors.Is(err, ErrOffset) || evs != nil || next != from {
			t.Errorf("from %d: %v %d %v, want ErrOffset", from, evs, next, err)
		}
	}
}

// One read reads at most maxRead bytes: a follower far behind catches up over several reads,
// each whole lines, every event once.
func TestReadFromIsBounded(t *testing.T) {
	path := campaigndir.Events(t.TempDir())
	var all []byte
	n := 0
	for len(all) < 2*maxRead+maxRead/2 {
		b, _ := json.Marshal(ev("node-" + strings.Repeat("x", 200) + "-" + strconv.Itoa(n)))
		all = append(append(all, b...), '\n')
		n++
	}
	if err := os.WriteFile(path, all, 0o644); err != nil {
		t.Fatal(err)
	}
	var got int
	reads := 0
	for from := int64(0); from < int64(len(all)); reads++ {
		evs, next, err := ReadFrom(path, from)
		if err != nil || next <= from || next-from > maxRead {
			t.Fatalf("read %d from %d: next %d, %v", reads, from, next, err)
		}
		for i, e := range evs {
			if want := "node-" + strings.Repeat("x", 200) + "-" + strconv.Itoa(got+i); e.Node != want {
				t.Fatalf("event %d is %.30s…", got+i, e.Node)
			}
		}
		got += len(evs)
		from = next
	}
	if got != n || reads != 3 {
		t.Errorf("%d of %d events in %d reads, want all in 3", got, n, reads)
	}
}

// A line longer than one read is skipped, not a follower stuck on it: the events after it
// are read.
func TestReadFromSkipsAnOverlongLine(t *testing.T) {
	path := campaigndir.Events(t.TempDir())
	long, _ := json.Marshal(Event{Type: NodeStart, Node: strings.Repeat("y", maxRead+10)})
	after, _ := json.Marshal(ev("after"))
	if err := os.WriteFile(path, append(append(long, '\n'), append(after, '\n')...), 0o644); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for from := int64(0); ; {
		evs, next, err := ReadFrom(path, from)
		if err != nil {
			t.Fatal(err)
		}
		if next == from {
			break
		}
		for _, e := range evs {
			nodes = append(nodes, e.Node)
		}
		from = next
	}
	if len(nodes) != 1 || nodes[0] != "after" {
		t.Errorf("read %d events (%.20q), want the one after the overlong line", len(nodes), nodes)
	}
}

// A log that is not a regular file (a FIFO, a device behind a symlink) is refused: reading
// it would block forever or never end.
func TestReadRefusesANonRegularLog(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // release a reader left blocked on the FIFO
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	if _, _, err := ReadFrom(fifo, 0); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFrom a FIFO: %v", err)
	}
	if _, _, err := ReadSize(fifo); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadSize a FIFO: %v", err)
	}
	zero := filepath.Join(dir, "zero.jsonl")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadSize(zero); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadSize of /dev/zero: %v", err)
	}
}

// Package events is the campaign's append-only event log, events.jsonl: what ran, what was
// reused and why, what failed, every gate verdict. `perfdag status` renders it.
package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/perfdag/perfdag/engine/jsonl"
	"github.com/perfdag/perfdag/engine/redact"
)

// Event types.
const (
	RunStart    = "run_start"
	RunEnd      = "run_end"
	NodeStart   = "node_start"
	NodeEnd     = "node_end"
	NodeReused  = "node_reused"
	NodeSkipped = "node_skipped"
	Gate        = "gate"
	Progress    = "progress"
	// Expand says a fan-out node added nodes at run time (Total: how many), so a progress
	// line's total grows with a search.
	Expand = "expand"
)

// Event is one line of events.jsonl.
type Event struct {
	Time     time.Time `json:"time"`
	Run      string    `json:"run"`
	Type     string    `json:"type"`
	Node     string    `json:"node,omitempty"`
	Kind     string    `json:"kind,omitempty"`
	Status   string    `json:"status,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Message  string    `json:"message,omitempty"`
	Gate     string    `json:"gate,omitempty"`
	Severity string    `json:"severity,omitempty"`
	Seconds  float64   `json:"seconds,omitempty"`
	Done     int       `json:"done,omitempty"`
	Total    int       `json:"total,omitempty"`
	// Counts are a run's outcomes by name (run_end), e.g. {"ran": 12, "reused": 30}.
	Counts map[string]int `json:"counts,omitempty"`
}

// Log appends events; safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	w       *jsonl.Writer
	pending []byte // whole lines not yet written: batched, or kept after a failed write
}

// flushAt is how many batched bytes trigger a write; maxPending bounds what a failing disk
// makes the log hold in memory before it drops events (and says how many).
const (
	flushAt    = 64 << 10
	maxPending = 4 << 20
)

// Open appends to path, creating it; a line torn by a crash is trimmed first, so the next
// event starts on a line of its own.
func Open(path string) (*Log, error) {
	return open(path, jsonl.OpenOS)
}

// OpenShared appends to path alongside other processes (cell slices sharing a campaign
// directory): each write locks the file and lands whole at its end.
func OpenShared(path string) (*Log, error) {
	w, err := jsonl.OpenShared(path, jsonl.OpenOS)
	if err != nil {
		return nil, fmt.Errorf("open event log: %w", err)
	}
	return &Log{w: w}, nil
}

// open is Open through a chosen file opener (tests pass a faulty disk).
func open(path string, opener jsonl.Opener) (*Log, error) {
	w, err := jsonl.Open(path, opener)
	if err != nil {
		return nil, fmt.Errorf("open event log: %w", err)
	}
	return &Log{w: w}, nil
}

// Emit appends one event. Lines are written whole: a failed or short write is cut back off
// the file and its lines are kept for the next write, so the log never holds a partial line
// followed by good ones, and events are not lost to a disk that fills up and is freed.
func (l *Log) Emit(e Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	e.Reason, e.Message = redact.String(e.Reason), redact.String(e.Message)
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = append(append(l.pending, b...), '\n')
	if (e.Type == NodeReused || e.Type == Progress) && len(l.pending) < flushAt {
		return nil // batched: thousands arrive at once on a no-op resume
	}
	return l.flush()
}

// flush writes the pending lines with one append; on failure they stay pending, unless the
// disk has been failing for maxPending bytes, when they are dropped.
func (l *Log) flush() error {
	if len(l.pending) == 0 {
		return nil
	}
	if err := l.w.Append(l.pending, false); err != nil {
		if len(l.pending) < maxPending {
			return fmt.Errorf("write event log (%d events kept for the next write): %w", bytes.Count(l.pending, []byte{'\n'}), err)
		}
		n := bytes.Count(l.pending, []byte{'\n'})
		l.pending = l.pending[:0]
		return fmt.Errorf("write event log (%d events dropped): %w", n, err)
	}
	l.pending = l.pending[:0]
	return nil
}

// Close flushes and syncs the log.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.flush()
	if err == nil {
		err = l.w.Sync()
	}
	return errors.Join(err, l.w.Close())
}

// recordStart begins every encoded Event (Time is its first field): inside a line it can only
// start a record, since quotes within JSON strings are escaped.
var recordStart = []byte(`{"time":`)

// Read returns every complete event of a log. A torn line — the last one, or one a crash left
// mid-file before another run appended — is skipped, and whole events after it are kept.
func Read(path string) ([]Event, error) {
	evs, _, err := ReadSize(path)
	return evs, err
}

// ReadSize is Read that also returns the bytes of whole lines it read: where a reader that
// follows the log (perfdag serve) goes on, so a line being written is read once it is whole.
// A log that is not a regular file (a FIFO, a device) is refused with ErrNotRegular.
func ReadSize(path string) ([]Event, int64, error) {
	f, err := openLog(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, 0, fmt.Errorf("read event log %s: %w", path, err)
	}
	whole := int64(bytes.LastIndexByte(data, '\n') + 1)
	out := make([]Event, 0, bytes.Count(data, []byte{'\n'})+1)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		out = decodeLine(line, out)
	}
	return out, whole, nil
}

// openLog opens a log to read: without blocking on a FIFO, and only a regular file (a device
// such as /dev/zero would never end).
func openLog(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("read event log %s: %w", path, err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = ErrNotRegular
		}
		return nil, fmt.Errorf("read event log %s: %w", path, err)
	}
	return f, nil
}

// maxRead bounds one ReadFrom: a follower far behind catches up over several reads.
const maxRead = 4 << 20

// ReadFrom returns the whole events written at or after byte offset from and the offset after
// the last whole line: a follower's next read. A line still being written is left for the
// next read; a log shorter than from (trimmed by a new run after a crash) returns
// ErrShrunk, and the follower starts over. One read reads at most maxRead bytes (a follower
// reads again while next grows); a line longer than that is skipped. A negative from is
// refused (ErrOffset) before anything is read.
func ReadFrom(path string, from int64) ([]Event, int64, error) {
	if from < 0 {
		return nil, from, fmt.Errorf("read event log %s at %d: %w", path, from, ErrOffset)
	}
	f, err := openLog(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, from, nil
	}
	if err != nil {
		return nil, from, err
	}
	defer f.Close()
	return ReadFileFrom(f, from)
}

// ReadFileFrom is ReadFrom of a log its caller opened (perfdag serve opens it inside the
// campaign directory, and checks it is still the file it followed).
func ReadFileFrom(f *os.File, from int64) ([]Event, int64, error) {
	if from < 0 {
		return nil, from, fmt.Errorf("read event log %s at %d: %w", f.Name(), from, ErrOffset)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, from, fmt.Errorf("read event log %s: %w", f.Name(), err)
	}
	if !st.Mode().IsRegular() {
		return nil, from, fmt.Errorf("read event log %s: %w", f.Name(), ErrNotRegular)
	}
	if st.Size() < from {
		return nil, from, ErrShrunk
	}
	data := make([]byte, min(st.Size()-from, maxRead))
	n, err := f.ReadAt(data, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, from, fmt.Errorf("read event log %s: %w", f.Name(), err)
	}
	end := bytes.LastIndexByte(data[:n], '\n') + 1
	if end == 0 && n == maxRead {
		return nil, from + int64(n), nil // a line longer than one read: skipped (its tail fails to decode)
	}
	data = data[:end]
	var out []Event
	for rest := data; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		out, rest = decodeLine(rest[:i], out), rest[i+1:]
	}
	return out, from + int64(len(data)), nil
}

// ErrShrunk says the event log is shorter than a follower had read: it was trimmed.
var ErrShrunk = errors.New("the event log shrank")

// ErrOffset refuses a negative offset: no read ever returned one.
var ErrOffset = errors.New("a negative offset is no place in the event log")

// ErrNotRegular refuses a log that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// decodeLine appends the line's event; a line that does not decode is split where records
// start, keeping each whole one (a torn record glued to the next by a later append).
func decodeLine(line []byte, out []Event) []Event {
	if len(bytes.TrimSpace(line)) == 0 {
		return out
	}
	var e Event
	if json.Unmarshal(line, &e) == nil {
		return append(out, e)
	}
	for len(line) > 0 {
		part := line
		if i := bytes.Index(line[1:], recordStart); i >= 0 {
			part, line = line[:i+1], line[i+1:]
		} else {
			line = nil
		}
		e = Event{}
		if json.Unmarshal(part, &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

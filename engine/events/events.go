// Package events is the campaign's append-only event log, events.jsonl: what ran, what was
// reused and why, what failed, every gate verdict. `perfdag status` renders it.
package events

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

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
}

// Log appends events; safe for concurrent use.
type Log struct {
	mu sync.Mutex
	f  *os.File
	w  *bufio.Writer
}

// Open appends to path, creating it.
func Open(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open event log %s: %w", path, err)
	}
	return &Log{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// Emit appends one event, its reason and message redacted. Lines are flushed whole, so a crash can tear at most the last one,
// which Read skips.
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
	l.w.Write(b)
	l.w.WriteByte('\n')
	if e.Type == NodeReused || e.Type == Progress {
		return nil // batched: thousands arrive at once on a no-op resume
	}
	return l.w.Flush()
}

// Close flushes and syncs the log.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := errors.Join(l.w.Flush(), l.f.Sync())
	return errors.Join(err, l.f.Close())
}

// Read returns every complete event of a log; a torn last line is ignored.
func Read(path string) ([]Event, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open event log %s: %w", path, err)
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read event log %s: %w", path, err)
	}
	return out, nil
}

package webui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// hub shares one inotify watcher among every live stream: a directory is watched while some
// page follows it, and each write to its events.jsonl wakes that directory's streams. Nothing
// polls; a stream reads the log only when the kernel says it changed.
type hub struct {
	w      *fsnotify.Watcher
	mu     sync.Mutex
	subs   map[string]map[chan struct{}]struct{} // events.jsonl path → wake-ups
	done   chan struct{}
	closed bool
}

func newHub() (*hub, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch campaign directories: %w", err)
	}
	h := &hub{w: w, subs: map[string]map[chan struct{}]struct{}{}, done: make(chan struct{})}
	go h.loop()
	return h, nil
}

// loop wakes the streams of the events.jsonl a notification names. A wake-up is a one-slot
// channel: many writes before a stream reads coalesce into one read.
func (h *hub) loop() {
	for {
		select {
		case ev, ok := <-h.w.Events:
			if !ok {
				return
			}
			h.mu.Lock()
			for ch := range h.subs[ev.Name] {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
			h.mu.Unlock()
		case _, ok := <-h.w.Errors:
			if !ok {
				return
			}
		case <-h.done:
			return
		}
	}
}

// subscribe wakes ch on every change of dir's events.jsonl until cancel.
func (h *hub) subscribe(dir string) (ch chan struct{}, cancel func(), err error) {
	path := campaigndir.Events(dir)
	ch = make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, errors.New("the server is closing")
	}
	if len(h.subs[path]) == 0 {
		// the directory, not the file: the log may not exist yet, and a trimmed log is rewritten
		if err := h.w.Add(filepath.Dir(path)); err != nil {
			return nil, nil, fmt.Errorf("watch %s: %w", dir, err)
		}
		h.subs[path] = map[chan struct{}]struct{}{}
	}
	h.subs[path][ch] = struct{}{}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[path], ch)
		if len(h.subs[path]) == 0 {
			delete(h.subs, path)
			if !h.closed {
				_ = h.w.Remove(filepath.Dir(path))
			}
		}
	}, nil
}

func (h *hub) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	close(h.done)
	return h.w.Close()
}

// update is one live change as the page applies it to the node table.
type update struct {
	Type     string  `json:"type"`
	Node     string  `json:"node,omitempty"`
	Kind     string  `json:"kind,omitempty"`
	State    string  `json:"state,omitempty"`
	LastRun  string  `json:"last_run,omitempty"`
	Why      string  `json:"why,omitempty"`
	Seconds  float64 `json:"seconds,omitempty"`
	Gate     string  `json:"gate,omitempty"`
	Verdict  string  `json:"verdict,omitempty"`
	Message  string  `json:"message,omitempty"`
	Time     string  `json:"time,omitempty"`
	Severity string  `json:"severity,omitempty"`
	// Gates are the node's verdicts as its journal record holds them (node_end), passing ones
	// included: the events log names only those that did not pass.
	Gates []gateMark `json:"gates,omitempty"`
}

// gateMark is one verdict badge: its gate, ok/warned/failed, and the verdict's line.
type gateMark struct {
	Gate  string `json:"gate"`
	Class string `json:"class"`
	Tip   string `json:"tip"`
}

func markOf(v gate.Verdict) gateMark {
	c := "ok"
	switch {
	case v.Failing():
		c = "failed"
	case !v.Passed:
		c = "warned"
	}
	return gateMark{Gate: v.Gate, Class: c, Tip: redact.String(v.Line())}
}

// journalTail follows state/journal.jsonl from an offset, whole lines only, for the verdicts
// of the nodes that just ended.
type journalTail struct {
	path string
	off  int64
}

// verdicts reads the records appended since the last read: node → its verdicts.
func (j *journalTail) verdicts() map[string][]gateMark {
	f, err := os.Open(j.path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() <= j.off {
		if err == nil && st.Size() < j.off {
			j.off = st.Size()
		}
		return nil
	}
	b := make([]byte, st.Size()-j.off)
	n, _ := f.ReadAt(b, j.off)
	b = b[:bytes.LastIndexByte(b[:n], '\n')+1]
	j.off += int64(len(b))
	out := map[string][]gateMark{}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		var rec struct {
			Node  string         `json:"node"`
			Gates []gate.Verdict `json:"gates"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Node == "" {
			continue
		}
		marks := []gateMark{}
		for _, v := range rec.Gates {
			marks = append(marks, markOf(v))
		}
		out[rec.Node] = marks
	}
	return out
}

// updateOf turns an event into what changes on screen (ok false: nothing does).
func updateOf(e events.Event) (update, bool) {
	u := update{Type: e.Type, Node: e.Node, Kind: e.Kind, Why: redact.String(e.Reason), Message: redact.String(e.Message),
		Time: e.Time.UTC().Format("2006-01-02 15:04:05")}
	switch e.Type {
	case events.NodeStart:
		u.State, u.LastRun = run.StateRunning, campaign.LastRun(e)
	case events.NodeEnd:
		u.State, u.LastRun, u.Seconds = stateOf(e.Status), campaign.LastRun(e), e.Seconds
	case events.NodeReused:
		u.State, u.LastRun = run.StateSucceeded, campaign.LastRun(e)
	case events.NodeSkipped:
		u.State, u.LastRun = run.StateSkipped, campaign.LastRun(e)
	case events.Gate:
		u.Gate, u.Verdict, u.Severity = e.Gate, e.Status, e.Severity
	case events.RunStart, events.RunEnd, events.Progress, events.Expand:
		u.State = e.Status
	default:
		return u, false
	}
	return u, true
}

// stateOf is the state a node is left in by a run outcome (a node_end's status), as the
// journal records it and the status table shows it.
func stateOf(outcome string) string {
	switch outcome {
	case run.OutRan, run.OutReused, run.OutGateFailed:
		return run.StateSucceeded
	case run.OutFailed:
		return run.StateFailed
	case run.OutInterrupted:
		return run.StateInterrupted
	case run.OutBlocked:
		return run.StateBlocked
	case run.OutSkipped:
		return run.StateSkipped
	}
	return outcome
}

// live streams a campaign's changes as server-sent events, from the events.jsonl offset its
// page was rendered at (?from=, or Last-Event-ID on a reconnect): each message's id is the
// offset after it. Only whole lines are read, so a line being written is never sent torn.
func (s *Server) live(w http.ResponseWriter, r *http.Request) {
	e, ok := s.open(w, r)
	if !ok {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, http.StatusInternalServerError, errors.New("streaming is not supported by this connection"))
		return
	}
	from, _ := strconv.ParseInt(r.URL.Query().Get("from"), 10, 64)
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		from, _ = strconv.ParseInt(id, 10, 64)
	}
	wake, cancel, err := s.hub.subscribe(e.Dir)
	if err != nil {
		s.fail(w, http.StatusServiceUnavailable, err)
		return
	}
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	fl.Flush()
	path := campaigndir.Events(e.Dir)
	jt := &journalTail{path: campaigndir.Journal(e.Dir)}
	if st, err := os.Stat(jt.path); err == nil {
		jt.off = st.Size()
	}
	for {
		evs, next, err := events.ReadFrom(path, from)
		if errors.Is(err, events.ErrShrunk) {
			fmt.Fprint(w, "event: reload\ndata: {}\n\n") // the log was trimmed: the page reloads whole
			fl.Flush()
			return
		}
		if err == nil && next > from {
			if err := writeUpdates(w, evs, next, jt.verdicts()); err != nil {
				return
			}
			from = next
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case _, ok := <-wake:
			if !ok {
				return
			}
		case <-s.hub.done:
			return
		}
	}
}

// writeUpdates sends one message holding every update of a read (a burst of reused nodes is
// one message, not thousands).
func writeUpdates(w http.ResponseWriter, evs []events.Event, next int64, verdicts map[string][]gateMark) error {
	var us []update
	for _, e := range evs {
		if u, ok := updateOf(e); ok {
			if e.Type == events.NodeEnd {
				u.Gates = verdicts[e.Node]
			}
			us = append(us, u)
		}
	}
	if len(us) == 0 {
		_, err := fmt.Fprintf(w, "id: %d\n\n", next)
		return err
	}
	b, err := json.Marshal(us)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "id: %d\ndata: %s\n\n", next, b)
	return err
}

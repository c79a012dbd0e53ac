package webui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

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
// of the nodes that just ended; opened as a served file is, read at most maxJournalRead at a
// time (a node whose record lies beyond is shown with its verdicts when the page reloads).
type journalTail struct {
	dir string
	off int64
}

const maxJournalRead = 16 << 20

// verdicts reads the records appended since the last read: node → its verdicts.
func (j *journalTail) verdicts() map[string][]gateMark {
	f, err := openServed(j.dir, filepath.ToSlash(campaigndir.Journal("")))
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
	if st.Size()-j.off > maxJournalRead {
		j.off = st.Size() - maxJournalRead
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
// offset after it. Only whole lines are read, so a line being written is never sent torn. An
// offset that is not a whole number from 0 up is refused (400), before anything is read. The
// log is opened as every served file is (openServed); when it is no longer the file the
// stream began on (the directory was removed and written again), the page is told to reload.
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
	from, err := offset(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rel := filepath.Base(campaigndir.Events(e.Dir))
	log, err := followLog(e.Dir, rel, from)
	if err != nil {
		s.fail(w, http.StatusConflict, fmt.Errorf("campaign %s: %w", e.ID, err))
		return
	}
	defer log.close()
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
	jt := &journalTail{dir: e.Dir}
	if st, err := os.Lstat(campaigndir.Journal(e.Dir)); err == nil && st.Mode().IsRegular() {
		jt.off = st.Size()
	}
	for {
		evs, next, err := log.read(from)
		if errors.Is(err, events.ErrShrunk) || errors.Is(err, errReplaced) {
			fmt.Fprint(w, "event: reload\ndata: {}\n\n") // trimmed or replaced: the page reloads whole
			fl.Flush()
			return
		}
		if err == nil && next > from {
			if err := writeUpdates(w, evs, next, jt.verdicts()); err != nil {
				return
			}
			from = next
			fl.Flush()
			if r.Context().Err() == nil {
				continue // one read is bounded: read on until it brings nothing new
			}
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

// offset is where a live stream starts: ?from= (the size of the log its page was rendered
// from) or, on a reconnect, Last-Event-ID (an id this stream sent). Absent, 0; anything but
// one whole number from 0 up is refused.
func offset(r *http.Request) (int64, error) {
	name, vals := "from", r.URL.Query()["from"]
	if id := r.Header.Values("Last-Event-ID"); len(id) > 0 {
		name, vals = "Last-Event-ID", id
	}
	switch {
	case len(vals) == 0:
		return 0, nil
	case len(vals) > 1:
		return 0, fmt.Errorf("live: give one %s offset, not %d", name, len(vals))
	}
	v := vals[0]
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || v != strconv.FormatInt(n, 10) {
		return 0, fmt.Errorf("live: %s offset %.40q is not a byte offset in the event log (a whole number from 0 up)", name, v)
	}
	return n, nil
}

// errReplaced says the events.jsonl a stream followed is no longer the file at its path.
var errReplaced = errors.New("the event log was replaced")

// followedLog is the events.jsonl one stream follows. The stream holds it open: a file
// removed while followed keeps its inode, so the number cannot be given to a new file of the
// same path (which would then pass for the one followed) until the stream ends.
type followedLog struct {
	dir, rel string
	held     *os.File // nil until the log exists
	gone     bool     // the page read a log that is not there now
}

// followLog starts following rel in dir at offset from: the file there now is the one
// followed. An absent log is followed once it appears when from is 0 (a page rendered before
// it existed); with from past 0 the page read a log that is gone, and is told to reload.
func followLog(dir, rel string, from int64) (*followedLog, error) {
	l := &followedLog{dir: dir, rel: rel}
	f, err := openServed(dir, rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		l.gone = from > 0
		return l, nil
	case err != nil:
		return nil, err
	}
	l.held = f
	return l, nil
}

// close lets the followed file go.
func (l *followedLog) close() {
	if l.held != nil {
		l.held.Close()
	}
}

// read reads what was appended at or after from, refusing (errReplaced) a log that is not the
// file followed so far; a log that is not there yet, or not there for now (its directory being
// written again), reads as nothing new.
func (l *followedLog) read(from int64) ([]events.Event, int64, error) {
	if l.gone {
		return nil, from, errReplaced
	}
	f, err := openServed(l.dir, l.rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, from, nil
	}
	if err != nil {
		return nil, from, errReplaced // a symlink or a FIFO where the log was: not this log
	}
	if l.held == nil {
		l.held = f // the log appeared: follow this one
		return events.ReadFileFrom(f, from)
	}
	defer f.Close()
	now, err := f.Stat()
	if err != nil {
		return nil, from, err
	}
	was, err := l.held.Stat()
	if err != nil {
		return nil, from, err
	}
	if !os.SameFile(was, now) {
		return nil, from, errReplaced
	}
	return events.ReadFileFrom(f, from)
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

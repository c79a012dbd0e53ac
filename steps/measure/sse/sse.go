// Package sse reads a text/event-stream body the way the WHATWG HTML standard says a browser
// does, and stamps every message with the time its first byte came off the wire, so that
// TTFT and inter-chunk gaps measure the server and not the client's parsing.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// Message is one dispatched server-sent event.
type Message struct {
	Event  string // event type; "" when the stream named none (a plain "message")
	Data   string // the data lines joined with "\n"
	ID     string // last event ID in force when the message was dispatched
	TimeNs int64  // clock reading of the read that delivered the message's first field byte
}

// Done reports the OpenAI end-of-stream sentinel `data: [DONE]`.
func (m Message) Done() bool { return m.Data == "[DONE]" }

// Raw is a dispatched message as the Reader holds it (NextRaw): Data is the Reader's own
// buffer, valid only until the next call to Next or NextRaw, so a caller keeps what it
// needs by copying (several messages into one buffer of its own, say).
type Raw struct {
	Event  string
	Data   []byte
	ID     string
	TimeNs int64
}

// Done reports the OpenAI end-of-stream sentinel `data: [DONE]`.
func (m Raw) Done() bool { return string(m.Data) == "[DONE]" }

// ErrLineTooLong is returned when one line exceeds Reader.MaxLine bytes: a misbehaving server
// must not make the client buffer without bound.
var ErrLineTooLong = errors.New("sse: line too long")

// ErrEventTooLarge is returned when the data of one message (its data lines joined) would
// exceed Reader.MaxEvent bytes: `data:` lines with no blank line must not grow without bound.
var ErrEventTooLarge = errors.New("sse: event too large")

// DefaultMaxLine bounds one line (1 MiB: a chat-completion chunk is a few hundred bytes, a
// large tool-call argument a few tens of KiB). The read buffer never grows past twice this.
const DefaultMaxLine = 1 << 20

// DefaultMaxEvent bounds one message's data (1 MiB, like a line: a chat chunk is one data
// line), so a reader holds at most about 2×DefaultMaxLine + 2×DefaultMaxEvent bytes (the
// buffers grow by doubling) however hostile the stream: tens of MB at c = 8, not GBs.
const DefaultMaxEvent = 1 << 20

const initialBuf = 4 << 10

// mark says that buffered bytes from off onward were delivered by a read stamped ns.
type mark struct {
	off int
	ns  int64
}

// Reader parses messages from an io.Reader. Each Read is stamped the moment it returns,
// before any byte is looked at; the parser then works on the buffered bytes.
type Reader struct {
	src      io.Reader
	now      func() int64
	maxLine  int
	maxEvent int

	buf   []byte // buffered bytes; buf[start:end] are not consumed yet
	start int
	end   int
	marks []mark // read boundaries over buf[start:end], oldest first

	started   bool // the stream's first bytes were seen (BOM handling)
	skipLF    bool // the last line ended in CR: a leading LF belongs to it
	inMsg     bool // a field line of the current message has been seen
	msgNs     int64
	event     string
	data      []byte
	hasData   bool
	lastID    string
	readErr   error
	retryMs   int64
	hasRetry  bool
	scanStart int // bytes of buf[start:end] already searched for a line end
	empties   int // consecutive reads that returned no bytes and no error
}

// NewReader returns a Reader over src stamping reads with now (nil means Now). now is
// called once per read that delivered bytes, right after it returns; a caller that knows
// when those bytes really arrived (a kernel receive timestamp) can return that instead.
func NewReader(src io.Reader, now func() int64) *Reader {
	if now == nil {
		now = Now
	}
	return &Reader{src: src, now: now, maxLine: DefaultMaxLine, maxEvent: DefaultMaxEvent, buf: make([]byte, initialBuf)}
}

// maxKeptBuf bounds the buffers a Reset keeps: past it they are dropped, so a pooled Reader
// never holds on to what one long line or message made it grow to.
const maxKeptBuf = 64 << 10

// Reset makes r read src as NewReader(src, now) would, keeping its buffers (up to 64 KiB
// each) and its bounds: a client can reuse one Reader per stream in flight instead of
// allocating one per request.
func (r *Reader) Reset(src io.Reader, now func() int64) {
	if now == nil {
		now = Now
	}
	buf, marks, data := r.buf, r.marks[:0], r.data[:0]
	if cap(buf) > maxKeptBuf || len(buf) == 0 {
		buf = make([]byte, initialBuf)
	}
	if cap(data) > maxKeptBuf {
		data = nil
	}
	*r = Reader{src: src, now: now, maxLine: r.maxLine, maxEvent: r.maxEvent, buf: buf, marks: marks, data: data}
}

// SetMaxLine changes the longest line accepted (n ≤ 0 keeps the default).
func (r *Reader) SetMaxLine(n int) {
	if n > 0 {
		r.maxLine = n
	}
}

// SetMaxEvent changes the largest message data accepted (n ≤ 0 keeps the default).
func (r *Reader) SetMaxEvent(n int) {
	if n > 0 {
		r.maxEvent = n
	}
}

// Retry returns the last valid `retry:` value in milliseconds, and whether one was sent.
func (r *Reader) Retry() (int64, bool) { return r.retryMs, r.hasRetry }

// Next returns the next dispatched message. At the end of the stream it returns io.EOF; a
// message still incomplete then is discarded, as the standard requires. Any other read error
// is returned unchanged, after the complete messages before it.
func (r *Reader) Next() (Message, error) {
	m, err := r.NextRaw()
	if err != nil {
		return Message{}, err
	}
	return Message{Event: m.Event, Data: string(m.Data), ID: m.ID, TimeNs: m.TimeNs}, nil
}

// NextRaw is Next without a copy of the message's data: see Raw for how long it is valid.
func (r *Reader) NextRaw() (Raw, error) {
	for {
		for {
			line, lineNs, ok, err := r.line()
			if err != nil {
				return Raw{}, err
			}
			if !ok {
				break
			}
			m, dispatched, err := r.process(line, lineNs)
			if err != nil {
				return Raw{}, err
			}
			if dispatched {
				return m, nil
			}
		}
		if r.readErr != nil {
			return Raw{}, r.readErr
		}
		r.fill()
	}
}

// fill performs one read: the hot loop. It stamps the read before anything else and keeps
// only the boundary; parsing happens in line().
func (r *Reader) fill() {
	if r.end == len(r.buf) {
		r.compact()
	}
	n, err := r.src.Read(r.buf[r.end:])
	if n > 0 {
		ns := r.now()
		r.marks = append(r.marks, mark{off: r.end, ns: ns})
		r.end += n
	}
	switch {
	case err != nil:
		r.readErr = err
	case n == 0:
		// io.Reader discourages (0, nil); many in a row would spin forever.
		r.empties++
		if r.empties >= maxEmptyReads {
			r.readErr = io.ErrNoProgress
		}
	default:
		r.empties = 0
	}
}

// maxEmptyReads is how many (0, nil) reads in a row end the stream with io.ErrNoProgress.
const maxEmptyReads = 100

// compact moves unconsumed bytes to the front, growing the buffer when it is full of them.
func (r *Reader) compact() {
	pending := r.end - r.start
	if r.start > 0 {
		copy(r.buf, r.buf[r.start:r.end])
		for i := range r.marks {
			r.marks[i].off -= r.start
		}
		r.start, r.end = 0, pending
	}
	if pending == len(r.buf) {
		nb := make([]byte, 2*len(r.buf))
		copy(nb, r.buf[:pending])
		r.buf = nb
	}
}

// stampAt returns the stamp of the read that delivered buf[off].
func (r *Reader) stampAt(off int) int64 {
	ns := int64(0)
	for _, m := range r.marks {
		if m.off > off {
			break
		}
		ns = m.ns
	}
	return ns
}

// dropMarks forgets read boundaries that lie wholly before buf[r.start].
func (r *Reader) dropMarks() {
	i := 0
	for i+1 < len(r.marks) && r.marks[i+1].off <= r.start {
		i++
	}
	if i > 0 {
		r.marks = append(r.marks[:0], r.marks[i:]...)
	}
	if r.start == r.end {
		r.marks = r.marks[:0]
		r.start, r.end, r.scanStart = 0, 0, 0
	}
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// line returns the next complete line (without its end) and the stamp of its first byte.
func (r *Reader) line() (line []byte, ns int64, ok bool, err error) {
	if !r.started {
		avail := r.buf[r.start:r.end]
		if len(avail) < len(bom) && bytes.HasPrefix(bom, avail) && r.readErr == nil {
			return nil, 0, false, nil
		}
		r.started = true
		if bytes.HasPrefix(avail, bom) {
			r.start += len(bom)
		}
	}
	if r.skipLF && r.start < r.end {
		if r.buf[r.start] == '\n' {
			r.start++
		}
		r.skipLF = false
	}
	avail := r.buf[r.start:r.end]
	i := lineEnd(avail[r.scanStart:])
	if i < 0 {
		r.scanStart = len(avail)
		if len(avail) > r.maxLine {
			return nil, 0, false, fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, r.maxLine)
		}
		if r.start == r.end {
			r.dropMarks()
		}
		return nil, 0, false, nil
	}
	i += r.scanStart
	if i > r.maxLine {
		return nil, 0, false, fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, r.maxLine)
	}
	ns = r.stampAt(r.start)
	line = avail[:i]
	next := r.start + i + 1
	if avail[i] == '\r' {
		if next < r.end {
			if r.buf[next] == '\n' {
				next++
			}
		} else {
			r.skipLF = true
		}
	}
	r.start = next
	r.scanStart = 0
	r.dropMarks()
	return line, ns, true, nil
}

// lineEnd returns the index of the first CR or LF in b, or -1.
func lineEnd(b []byte) int {
	lf := bytes.IndexByte(b, '\n')
	scope := b
	if lf >= 0 {
		scope = b[:lf]
	}
	if cr := bytes.IndexByte(scope, '\r'); cr >= 0 {
		return cr
	}
	return lf
}

// process interprets one line; it returns a message when the line dispatches one, and
// ErrEventTooLarge when a data line would take the message past maxEvent.
func (r *Reader) process(line []byte, ns int64) (Raw, bool, error) {
	if len(line) == 0 {
		m, ok := r.dispatch()
		return m, ok, nil
	}
	if line[0] == ':' {
		return Raw{}, false, nil // comment or keep-alive
	}
	if !r.inMsg {
		r.inMsg = true
		r.msgNs = ns
	}
	field, value := line, []byte(nil)
	if c := bytes.IndexByte(line, ':'); c >= 0 {
		field, value = line[:c], line[c+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "event":
		r.event = string(value)
	case "data", "error":
		// `error:` is not an SSE field, but llama.cpp sends its failures that way (e.g. with
		// --no-context-shift); its value is kept as the data of an `error` event.
		if field[0] == 'e' && r.event == "" {
			r.event = "error"
		}
		size := len(r.data) + len(value)
		if r.hasData {
			size++ // the joining LF
		}
		if size > r.maxEvent {
			return Raw{}, false, fmt.Errorf("%w: more than %d bytes of data in one message", ErrEventTooLarge, r.maxEvent)
		}
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.hasData = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.lastID = string(value)
		}
	case "retry":
		if v, ok := digits(value); ok {
			r.retryMs, r.hasRetry = v, true
		}
	}
	return Raw{}, false, nil
}

// dispatch ends the current message block. The data it returns is r.data, which the next
// message overwrites.
func (r *Reader) dispatch() (Raw, bool) {
	ns, event, hasData := r.msgNs, r.event, r.hasData
	data := r.data
	r.inMsg, r.event, r.hasData, r.data = false, "", false, r.data[:0]
	if !hasData {
		return Raw{}, false
	}
	return Raw{Event: event, Data: data, ID: r.lastID, TimeNs: ns}, true
}

// digits parses a non-empty run of ASCII digits.
func digits(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// processStart anchors Now: a wall-clock reading taken once, advanced by the monotonic clock.
var processStart = time.Now()

// Now returns Unix nanoseconds derived from the monotonic clock, so stamps never jump when
// the wall clock is stepped mid-run; every perfdag timestamp uses it.
func Now() int64 { return At(time.Now()) }

// At is Now for a reading already taken: with the same time.Time, a caller can relate
// this clock to the wall clock (e.g. a kernel timestamp) without a gap between two reads.
func At(t time.Time) int64 {
	return processStart.UnixNano() + int64(t.Sub(processStart))
}

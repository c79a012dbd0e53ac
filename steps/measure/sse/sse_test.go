package sse

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// parts is an io.Reader that returns one element per Read, as a socket delivering packets.
type parts struct {
	p   [][]byte
	err error // returned after the last part (io.EOF when nil)
}

func (r *parts) Read(b []byte) (int, error) {
	for len(r.p) > 0 && len(r.p[0]) == 0 {
		r.p = r.p[1:]
	}
	if len(r.p) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		return 0, io.EOF
	}
	n := copy(b, r.p[0])
	r.p[0] = r.p[0][n:]
	return n, nil
}

func split(ss ...string) *parts {
	p := &parts{}
	for _, s := range ss {
		p.p = append(p.p, []byte(s))
	}
	return p
}

// counter is a fake clock: the k-th call returns k.
func counter() func() int64 {
	var n int64
	return func() int64 { n++; return n }
}

func readAll(t testing.TB, r *Reader) ([]Message, error) {
	t.Helper()
	var out []Message
	for {
		m, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
}

func TestReaderParsing(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []Message // TimeNs ignored here
	}{
		{"single", "data: hello\n\n", []Message{{Data: "hello"}}},
		{"no space after colon", "data:hello\n\n", []Message{{Data: "hello"}}},
		{"only one leading space removed", "data:  two\n\n", []Message{{Data: " two"}}},
		{"multi-line data joined with LF", "data: a\ndata: b\ndata:\n\n", []Message{{Data: "a\nb\n"}}},
		{"field without colon is empty value", "data\n\n", []Message{{Data: ""}}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []Message{{Data: "a"}, {Data: "b"}}},
		{"CR only", "data: a\r\rdata: b\r\r", []Message{{Data: "a"}, {Data: "b"}}},
		{"mixed endings", "data: a\r\ndata: b\rdata: c\n\r\n", []Message{{Data: "a\nb\nc"}}},
		{"comments and keep-alives", ": ping\n\n:\n\ndata: x\n: inside\n\n", []Message{{Data: "x"}}},
		{"event name", "event: error\ndata: {\"error\":1}\n\n", []Message{{Event: "error", Data: `{"error":1}`}}},
		{"event name resets", "event: error\ndata: a\n\ndata: b\n\n", []Message{{Event: "error", Data: "a"}, {Data: "b"}}},
		{"event without data dispatches nothing", "event: x\n\ndata: b\n\n", []Message{{Data: "b"}}},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", []Message{{ID: "7", Data: "a"}, {ID: "7", Data: "b"}, {ID: "", Data: "c"}}},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n", []Message{{ID: "1", Data: "a"}, {ID: "1", Data: "b"}}},
		{"unknown field ignored", "foo: bar\ndata: a\n\n", []Message{{Data: "a"}}},
		{"DONE", "data: {}\n\ndata: [DONE]\n\n", []Message{{Data: "{}"}, {Data: "[DONE]"}}},
		{"incomplete last message discarded", "data: a\n\ndata: b\n", []Message{{Data: "a"}}},
		{"unterminated last line discarded", "data: a\n\ndata: b", []Message{{Data: "a"}}},
		{"BOM stripped", "\xEF\xBB\xBFdata: a\n\n", []Message{{Data: "a"}}},
		{"second BOM kept", "\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n", nil},
		{"empty stream", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := readAll(t, NewReader(strings.NewReader(c.in), counter()))
			if !errors.Is(err, io.EOF) {
				t.Fatalf("err = %v, want io.EOF", err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %d messages %+v, want %d %+v", len(got), got, len(c.want), c.want)
			}
			for i := range got {
				got[i].TimeNs = 0
				if got[i] != c.want[i] {
					t.Errorf("message %d = %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestReaderStamps(t *testing.T) {
	// The fake clock returns k on the k-th read that delivered bytes, so a message's stamp
	// names the read that carried its first field byte.
	cases := []struct {
		name  string
		reads []string
		want  []int64
	}{
		{"one read", []string{"data: a\n\n"}, []int64{1}},
		{"two messages share a read", []string{"data: a\n\ndata: b\n\n"}, []int64{1, 1}},
		{"first byte decides", []string{"da", "ta: a\n\n"}, []int64{1}},
		{"one read each", []string{"data: a\n\n", "data: b\n\n"}, []int64{1, 2}},
		{"blank line in next read", []string{"data: a\n", "\ndata: b\n\n"}, []int64{1, 2}},
		{"keep-alive does not start a message", []string{": ping\n\n", "data: x\n\n"}, []int64{2}},
		{"comment before data in same block", []string{": c\n", "data: x\n\n"}, []int64{2}},
		{"CR then LF across reads", []string{"data: a\r", "\n\r\n", "data: b\n\n"}, []int64{1, 3}},
		{"tail of one read starts the next message", []string{"data: a\n\nda", "ta: b\n\n"}, []int64{1, 1}},
		{"event line starts the message", []string{"event: error\n", "data: x\n\n"}, []int64{1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := readAll(t, NewReader(split(c.reads...), counter()))
			if !errors.Is(err, io.EOF) {
				t.Fatalf("err = %v", err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %d messages, want %d: %+v", len(got), len(c.want), got)
			}
			for i := range got {
				if got[i].TimeNs != c.want[i] {
					t.Errorf("message %d stamp = %d, want %d", i, got[i].TimeNs, c.want[i])
				}
			}
		})
	}
}

func TestReaderErrors(t *testing.T) {
	boom := errors.New("connection reset")
	r := NewReader(&parts{p: [][]byte{[]byte("data: a\n\ndata: b")}, err: boom}, counter())
	got, err := readAll(t, r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the read error", err)
	}
	if len(got) != 1 || got[0].Data != "a" {
		t.Fatalf("messages before the error = %+v, want one with data a", got)
	}

	long := NewReader(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), counter())
	long.SetMaxLine(50)
	if _, err := long.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}

	var empty emptyReader
	if _, err := NewReader(&empty, counter()).Next(); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v, want io.ErrNoProgress for a reader that never returns bytes", err)
	}
}

type emptyReader struct{}

func (*emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderRetry(t *testing.T) {
	r := NewReader(strings.NewReader("retry: 1500\ndata: a\n\nretry: x1\n\n"), counter())
	if _, err := readAll(t, r); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if v, ok := r.Retry(); !ok || v != 1500 {
		t.Fatalf("Retry() = %d, %v; want 1500, true (the invalid x1 is ignored)", v, ok)
	}
}

func TestReaderLargeMessageGrowsBuffer(t *testing.T) {
	big := strings.Repeat("y", 3*initialBuf)
	got, err := readAll(t, NewReader(strings.NewReader("data: "+big+"\n\ndata: z\n\n"), counter()))
	if !errors.Is(err, io.EOF) || len(got) != 2 || got[0].Data != big || got[1].Data != "z" {
		t.Fatalf("got %d messages, err %v", len(got), err)
	}
}

func TestNowIsMonotonic(t *testing.T) {
	a := Now()
	b := Now()
	if b < a {
		t.Fatalf("Now went backwards: %d then %d", a, b)
	}
}

// reference is a direct transcription of the WHATWG event-stream algorithm over a whole
// input (plus the reader's documented `error:` extension), used as the fuzz oracle: normalise line ends, drop the unterminated tail, and
// interpret lines one by one.
func reference(in []byte) []Message {
	in = bytes.TrimPrefix(in, bom)
	var lines []string
	cur := []byte{}
	for i := 0; i < len(in); i++ {
		switch in[i] {
		case '\r':
			lines = append(lines, string(cur))
			cur = cur[:0]
			if i+1 < len(in) && in[i+1] == '\n' {
				i++
			}
		case '\n':
			lines = append(lines, string(cur))
			cur = cur[:0]
		default:
			cur = append(cur, in[i])
		}
	}
	var out []Message
	var event, lastID string
	var data strings.Builder
	for _, l := range lines {
		if l == "" {
			if data.Len() > 0 {
				out = append(out, Message{Event: event, Data: strings.TrimSuffix(data.String(), "\n"), ID: lastID})
			}
			data.Reset()
			event = ""
			continue
		}
		if l[0] == ':' {
			continue
		}
		field, value := l, ""
		if c := strings.IndexByte(l, ':'); c >= 0 {
			field, value = l[:c], strings.TrimPrefix(l[c+1:], " ")
		}
		switch field {
		case "event":
			event = value
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
		case "error":
			// not WHATWG: the reader's one extension, for llama.cpp's `error:` lines (sse.go)
			if event == "" {
				event = "error"
			}
			data.WriteString(value)
			data.WriteByte('\n')
		case "id":
			if !strings.Contains(value, "\x00") {
				lastID = value
			}
		}
	}
	return out
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("data: a\n\n"), []byte{3})
	f.Add([]byte("event: error\r\ndata: x\r\n\r\n: ka\n\ndata: [DONE]\n\n"), []byte{1, 2, 5, 9})
	f.Add([]byte("\xEF\xBB\xBFid: 1\rdata: a\rdata: b\r\r"), []byte{1, 1, 1})
	f.Add([]byte("data: a\r"), []byte{8})
	f.Fuzz(func(t *testing.T, in []byte, cuts []byte) {
		want := reference(in)
		var pieces []string
		rest := in
		for _, c := range cuts {
			if len(rest) == 0 {
				break
			}
			n := int(c) % (len(rest) + 1)
			pieces = append(pieces, string(rest[:n]))
			rest = rest[n:]
		}
		pieces = append(pieces, string(rest))
		whole, err := readAll(t, NewReader(bytes.NewReader(in), counter()))
		if !errors.Is(err, io.EOF) {
			t.Fatalf("whole: err %v", err)
		}
		// the chunked reading goes through a Reader reused after another stream (Reset)
		chunked, err := readAll(t, used(t, split(pieces...)))
		if !errors.Is(err, io.EOF) {
			t.Fatalf("chunked: err %v", err)
		}
		if len(whole) != len(want) || len(chunked) != len(want) {
			t.Fatalf("message counts: whole %d, chunked %d, reference %d", len(whole), len(chunked), len(want))
		}
		last := int64(0)
		for i := range want {
			if chunked[i].TimeNs < last {
				t.Fatalf("stamps go backwards at %d", i)
			}
			last = chunked[i].TimeNs
			whole[i].TimeNs, chunked[i].TimeNs = 0, 0
			if whole[i] != want[i] || chunked[i] != want[i] {
				t.Fatalf("message %d: whole %+v, chunked %+v, reference %+v", i, whole[i], chunked[i], want[i])
			}
		}
	})
}

// BenchmarkReader measures parsing of a vLLM-like stream of one-token chunks.
func BenchmarkReader(b *testing.B) {
	chunk := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}` + "\n\n"
	in := []byte(strings.Repeat(chunk, 1000))
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(in), Now)
		n := 0
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			n++
		}
		if n != 1000 {
			b.Fatalf("read %d messages", n)
		}
	}
}

// TestMessagesKeepTheirData: every message's Data stays as read while the reader goes on
// reusing its buffers, across small and large messages.
func TestMessagesKeepTheirData(t *testing.T) {
	var in strings.Builder
	var want []string
	for i := range 3000 {
		d := strings.Repeat(string(rune('a'+i%26)), 1+(i*37)%300)
		if i%500 == 0 {
			d = strings.Repeat("x", 64<<10+i)
		}
		want = append(want, d)
		in.WriteString("data: " + d + "\n\n")
	}
	r := NewReader(split(in.String()), counter())
	r.SetMaxLine(128 << 10)
	var got []Message
	for {
		m, err := r.Next()
		if err != nil {
			break
		}
		got = append(got, m)
	}
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d", len(got), len(want))
	}
	for i, m := range got {
		if m.Data != want[i] {
			t.Fatalf("message %d: data %.20q… (%d bytes), want %.20q… (%d bytes)", i, m.Data, len(m.Data), want[i], len(want[i]))
		}
	}
}

// TestNextRawAgreesWithNext: NextRaw dispatches what Next does (a copy of its data, taken
// before the next call, equals Next's), whole or a byte a read.
func TestNextRawAgreesWithNext(t *testing.T) {
	ins := []string{
		"\xEF\xBB\xBFdata: a\n\nevent: e\nid: 7\ndata: b\ndata: c\n\n: keep-alive\n\ndata: [DONE]\n\n",
		"data: a\r\n\r\nretry: 10\ndata\n\nerror: boom\n\nid\ndata: x\r\rdata: tail",
		strings.Repeat(`data: {"choices":[{"delta":{"content":" the"}}]}`+"\n\n", 50),
	}
	for _, in := range ins {
		for _, bytewise := range []bool{false, true} {
			src := func() io.Reader {
				if !bytewise {
					return strings.NewReader(in)
				}
				p := &parts{}
				for i := range len(in) {
					p.p = append(p.p, []byte{in[i]})
				}
				return p
			}
			want, werr := readAll(t, NewReader(src(), counter()))
			r := NewReader(src(), counter())
			var got []Message
			var gerr error
			for {
				m, err := r.NextRaw()
				if err != nil {
					gerr = err
					break
				}
				if m.Done() != (string(m.Data) == "[DONE]") {
					t.Fatalf("Done() %v for %q", m.Done(), m.Data)
				}
				got = append(got, Message{Event: m.Event, Data: string(m.Data), ID: m.ID, TimeNs: m.TimeNs})
			}
			if !errors.Is(gerr, werr) || len(got) != len(want) {
				t.Fatalf("%q: NextRaw gave %d messages, err %v; Next %d, err %v", in, len(got), gerr, len(want), werr)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%q: message %d: NextRaw %+v, Next %+v", in, i, got[i], want[i])
				}
			}
		}
	}
}

// used returns a Reader that read a stream leaving state behind (a last event ID, a retry, a
// message cut off, a grown buffer) and was then Reset onto src.
func used(t testing.TB, src io.Reader) *Reader {
	r := NewReader(strings.NewReader("id: stale\nretry: 5\nevent: x\ndata: "+strings.Repeat("y", 3*initialBuf)+"\n\n:\r"+"data: cut"), counter())
	if _, err := readAll(t, r); !errors.Is(err, io.EOF) {
		t.Fatalf("first stream: %v", err)
	}
	r.Reset(src, counter())
	return r
}

// TestResetReadsAsNew: a Reader Reset onto a stream reads it as a new one would — no last
// event ID, retry, event type or part of a message carried over, stamps from the new clock.
func TestResetReadsAsNew(t *testing.T) {
	in := "\xEF\xBB\xBFdata: a\n\ndata: b\r\nid: 2\r\n\r\n"
	want, err := readAll(t, NewReader(strings.NewReader(in), counter()))
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	r := used(t, strings.NewReader(in))
	got, err := readAll(t, r)
	if !errors.Is(err, io.EOF) || !slices.Equal(got, want) {
		t.Fatalf("after Reset: %+v (%v), want %+v", got, err, want)
	}
	if _, ok := r.Retry(); ok {
		t.Error("the retry of the stream before Reset carried over")
	}
	big := NewReader(strings.NewReader("data: "+strings.Repeat("z", 2*maxKeptBuf)+"\n\n"), counter())
	if _, err := readAll(t, big); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	big.Reset(strings.NewReader(""), nil)
	if cap(big.buf) > maxKeptBuf || cap(big.data) > maxKeptBuf {
		t.Errorf("Reset kept buffers of %d and %d bytes, want at most %d", cap(big.buf), cap(big.data), maxKeptBuf)
	}
}

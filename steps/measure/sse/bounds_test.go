package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// endless is a reader that repeats one line forever, as a hostile server would.
type endless struct {
	line []byte
	off  int
	n    int64 // bytes served
}

func (e *endless) Read(b []byte) (int, error) {
	k := 0
	for k < len(b) {
		c := copy(b[k:], e.line[e.off:])
		k += c
		e.off = (e.off + c) % len(e.line)
	}
	e.n += int64(k)
	return k, nil
}

func TestBoundsAtAndPast(t *testing.T) {
	const lim = 64
	cases := []struct {
		name    string
		in      string
		maxLine int
		maxEv   int
		want    error // nil: one message then EOF
	}{
		{"line at the bound", "data:" + strings.Repeat("x", lim-5) + "\n\n", lim, 1 << 20, nil},
		{"line one past the bound", "data:" + strings.Repeat("x", lim-4) + "\n\n", lim, 1 << 20, ErrLineTooLong},
		{"unterminated line past the bound", "data:" + strings.Repeat("x", lim), lim, 1 << 20, ErrLineTooLong},
		{"event at the bound", "data: " + strings.Repeat("x", 30) + "\ndata: " + strings.Repeat("y", 33) + "\n\n", 1 << 20, lim, nil},
		{"event one past the bound", "data: " + strings.Repeat("x", 30) + "\ndata: " + strings.Repeat("y", 34) + "\n\n", 1 << 20, lim, ErrEventTooLarge},
		{"single data line at the event bound", "data:" + strings.Repeat("x", lim) + "\n\n", 1 << 20, lim, nil},
		{"single data line past the event bound", "data:" + strings.Repeat("x", lim+1) + "\n\n", 1 << 20, lim, ErrEventTooLarge},
		{"many empty data lines past the bound", strings.Repeat("data:\n", lim+2) + "\n", 1 << 20, lim, ErrEventTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tc.in), counter())
			r.SetMaxLine(tc.maxLine)
			r.SetMaxEvent(tc.maxEv)
			got, err := readAll(t, r)
			if tc.want == nil {
				if !errors.Is(err, io.EOF) || len(got) != 1 {
					t.Fatalf("got %d messages, err %v; want one message then EOF", len(got), err)
				}
				return
			}
			if !errors.Is(err, tc.want) || len(got) != 0 {
				t.Fatalf("got %d messages, err %v; want %v", len(got), err, tc.want)
			}
		})
	}
}

// TestEndlessDataLinesAreBounded: `data:` lines with no blank line, forever, end with
// ErrEventTooLarge after about DefaultMaxEvent bytes, holding no more than the bounds.
func TestEndlessDataLinesAreBounded(t *testing.T) {
	src := &endless{line: []byte("data: " + strings.Repeat("z", 200) + "\n")}
	r := NewReader(src, counter())
	_, err := r.Next()
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("err = %v, want ErrEventTooLarge", err)
	}
	if src.n > DefaultMaxEvent+2*DefaultMaxLine {
		t.Fatalf("read %d bytes before failing; want at most %d", src.n, DefaultMaxEvent+2*DefaultMaxLine)
	}
	if cap(r.data) > 2*DefaultMaxEvent || len(r.buf) > 2*DefaultMaxLine {
		t.Fatalf("held data %d, buffer %d bytes: past the bounds", cap(r.data), len(r.buf))
	}

	one := &endless{line: []byte("x")} // one line with no end
	r = NewReader(one, counter())
	if _, err := r.Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}
	if len(r.buf) > 2*DefaultMaxLine {
		t.Fatalf("buffer grew to %d bytes, past 2×DefaultMaxLine", len(r.buf))
	}
}

// FuzzReaderBounded: with small random bounds, any input either reads exactly as the
// reference parser does or stops with a bound's error after a prefix of the reference's
// messages, and no message or buffer ever exceeds its bound.
func FuzzReaderBounded(f *testing.F) {
	f.Add([]byte("data: a\n\n"), uint8(4), uint8(4))
	f.Add([]byte("data: aaaa\ndata: bbbb\n\ndata: [DONE]\n\n"), uint8(16), uint8(6))
	f.Add([]byte("data:\ndata:\ndata:\n"), uint8(1), uint8(1))
	f.Add([]byte("\xEF\xBB\xBFevent: x\r\rdata: y\r\r"), uint8(9), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, maxLine, maxEvent uint8) {
		ml, me := int(maxLine)+1, int(maxEvent)+1
		want := reference(in)
		r := NewReader(bytes.NewReader(in), counter())
		r.SetMaxLine(ml)
		r.SetMaxEvent(me)
		got, err := readAll(t, r)
		if !errors.Is(err, io.EOF) && !errors.Is(err, ErrLineTooLong) && !errors.Is(err, ErrEventTooLarge) {
			t.Fatalf("err %v: want EOF or a bound's error", err)
		}
		if len(got) > len(want) || (errors.Is(err, io.EOF) && len(got) != len(want)) {
			t.Fatalf("%d messages, reference %d (err %v)", len(got), len(want), err)
		}
		for i := range got {
			if len(got[i].Data) > me {
				t.Fatalf("message %d holds %d bytes, past the bound %d", i, len(got[i].Data), me)
			}
			got[i].TimeNs = 0
			if got[i] != want[i] {
				t.Fatalf("message %d: %+v, reference %+v", i, got[i], want[i])
			}
		}
		if len(r.buf) > max(2*ml, initialBuf) {
			t.Fatalf("buffer %d bytes for a %d-byte line bound", len(r.buf), ml)
		}
	})
}

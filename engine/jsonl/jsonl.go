// Package jsonl appends whole lines to a file that must stay readable after a full disk or a
// failing one: the checkpoint journal and the event log. An append that fails — short write,
// ENOSPC, EIO, fsync error — is rolled back to the end of the last whole line, so a partial
// line is never followed by good ones; when even the rollback fails, the Writer refuses
// further appends instead of writing after the damage. A torn last line left by a crash is
// trimmed when the file is opened. The store writes through File, so tests inject faults
// (engine/jsonl/faultfile) instead of filling a real disk.
package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// File is what a Writer reads and writes through: an *os.File in production, a
// fault-injecting file in tests, so recovery from a full disk is tested rather than hoped for.
type File interface {
	io.Reader
	io.Writer
	io.Seeker
	Sync() error
	Truncate(size int64) error
	Close() error
}

// Opener opens path for reading and appending, creating it; swapping it is how tests
// put a faulty disk under a store.
type Opener func(path string) (File, error)

// OpenOS is the production Opener: a real file opened O_RDWR|O_CREATE|O_APPEND, mode 0644.
func OpenOS(path string) (File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Writer appends whole lines to one file. It is not safe for concurrent use: its owner
// serializes appends (the stores hold their own mutex).
type Writer struct {
	path   string
	f      File
	off    int64 // end of the last whole line: where a failed append is rolled back to
	broken error // set when a rollback failed; every later append is refused with it
	shared bool  // other processes append too: each append locks the file (OpenShared)
}

// OpenShared is Open for a file several processes append to at once (the event log of cell
// slices sharing a campaign directory): the torn-line trim and every append hold an exclusive
// flock on the file, and an append starts at the file's current end, so a rollback cuts off
// only this writer's bytes, never lines another process appended meanwhile.
func OpenShared(path string, open Opener) (*Writer, error) {
	f, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w := &Writer{path: path, f: f, shared: true}
	unlock, err := w.lock()
	if err != nil {
		f.Close()
		return nil, err
	}
	defer unlock()
	if _, err := w.trimTorn(false); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// lock takes the file's flock when it is shared and backed by a descriptor (an injected
// faulty file has none and is never shared between processes).
func (w *Writer) lock() (unlock func(), err error) {
	fd, ok := w.f.(interface{ Fd() uintptr })
	if !w.shared || !ok {
		return func() {}, nil
	}
	if err := flock(int(fd.Fd()), true); err != nil {
		return nil, fmt.Errorf("lock %s: %w", w.path, err)
	}
	return func() { _ = flock(int(fd.Fd()), false) }, nil
}

// Open opens path for appending, trimming a torn last line left by a crash.
func Open(path string, open Opener) (*Writer, error) {
	w, _, err := openWriter(path, open, false)
	return w, err
}

// OpenRead is Open that also returns the file's whole lines, read in one allocation sized
// from the file's length (a resume reads the journal once).
func OpenRead(path string, open Opener) (*Writer, []byte, error) {
	return openWriter(path, open, true)
}

func openWriter(path string, open Opener, read bool) (*Writer, []byte, error) {
	f, err := open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	w := &Writer{path: path, f: f}
	data, err := w.trimTorn(read)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return w, data, nil
}

// trimTorn finds the end of the last whole line (reading everything when read is set, else
// backwards from the end), cuts off what follows it and positions the writer there.
func (w *Writer) trimTorn(read bool) ([]byte, error) {
	size, err := w.f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("seek %s: %w", w.path, err)
	}
	var data []byte
	var keep int64
	if read {
		if _, err := w.f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("seek %s: %w", w.path, err)
		}
		data = make([]byte, size)
		n, err := io.ReadFull(w.f, data)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("read %s: %w", w.path, err)
		}
		keep = int64(bytes.LastIndexByte(data[:n], '\n') + 1)
		data = data[:keep]
	} else if keep, err = w.lastLineEnd(size); err != nil {
		return nil, err
	}
	if keep < size {
		// a line torn by a crash mid-append never counted: drop it so appends start clean
		if err := w.f.Truncate(keep); err != nil {
			return nil, fmt.Errorf("trim torn last line of %s: %w", w.path, err)
		}
	}
	if _, err := w.f.Seek(keep, io.SeekStart); err != nil {
		return nil, fmt.Errorf("seek %s: %w", w.path, err)
	}
	w.off = keep
	return data, nil
}

// lastLineEnd is the offset just past the file's last newline (0 when it has none), read
// backwards in chunks so opening a large log costs only its tail.
func (w *Writer) lastLineEnd(size int64) (int64, error) {
	const chunk = 4096
	buf := make([]byte, chunk)
	for end := size; end > 0; {
		start := max(0, end-chunk)
		if _, err := w.f.Seek(start, io.SeekStart); err != nil {
			return 0, fmt.Errorf("seek %s: %w", w.path, err)
		}
		part := buf[:end-start]
		if _, err := io.ReadFull(w.f, part); err != nil {
			return 0, fmt.Errorf("read the tail of %s: %w", w.path, err)
		}
		if i := bytes.LastIndexByte(part, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// Append writes p — whole lines, ending in a newline — with one write, then fsyncs when sync
// is set. On any failure the file is cut back to where it was, and the error says so; the
// lines count only when Append returns nil.
func (w *Writer) Append(p []byte, sync bool) error {
	if w.broken != nil {
		return fmt.Errorf("append to %s refused: %w", w.path, w.broken)
	}
	if w.shared {
		unlock, err := w.lock()
		if err != nil {
			return err
		}
		defer unlock()
		end, err := w.f.Seek(0, io.SeekEnd)
		if err != nil {
			return fmt.Errorf("seek %s: %w", w.path, err)
		}
		w.off = end // other processes appended since: a rollback must keep their lines
	}
	n, err := w.f.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return w.rollback(fmt.Errorf("append to %s (%d of %d bytes written): %w", w.path, n, len(p), err))
	}
	if sync {
		if err := w.f.Sync(); err != nil {
			// after a failed fsync the written bytes may or may not reach the disk: they
			// must not count, so they are cut off like a short write
			return w.rollback(fmt.Errorf("sync %s: %w", w.path, err))
		}
	}
	w.off += int64(n)
	return nil
}

// rollback truncates the file back to the last whole line and makes that durable; when it
// cannot, the writer is broken: appending after a partial line would hide every later line.
func (w *Writer) rollback(cause error) error {
	err := w.f.Truncate(w.off)
	if err == nil {
		_, err = w.f.Seek(w.off, io.SeekStart)
	}
	if err == nil {
		err = w.f.Sync()
	}
	if err != nil {
		w.broken = fmt.Errorf("a failed append could not be rolled back to byte %d (%w); "+
			"no further appends until it is reopened, which trims the partial line", w.off, err)
		return fmt.Errorf("%w; %w", cause, w.broken)
	}
	return fmt.Errorf("%w (rolled back to the last whole line)", cause)
}

// Size is the length of the file's whole lines: what a reader can trust.
func (w *Writer) Size() int64 { return w.off }

// Sync flushes the file to disk.
func (w *Writer) Sync() error {
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", w.path, err)
	}
	return nil
}

// Close releases the file.
func (w *Writer) Close() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", w.path, err)
	}
	return nil
}

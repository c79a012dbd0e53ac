package campaigndir

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// WriteFile replaces path atomically: a hidden temp file in the same directory, fsync, rename,
// then fsync of the directory so the rename itself survives a power cut. A reader (or a
// resumed run) sees the old file or the new one, never a torn one.
func WriteFile(path string, data []byte) error {
	return WriteWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith streams a file's content into a temp file beside path and renames it into place,
// with the same guarantees as WriteFile; the parent directory is created when missing.
func WriteWith(path string, fill func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 256<<10)
	if err = fill(bw); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err = os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
	d, derr := os.Open(dir)
	if derr != nil {
		return fmt.Errorf("open dir %s: %w", dir, derr)
	}
	defer d.Close()
	if err = d.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// EncodeJSON is indented, newline-terminated JSON that keeps "<", ">" and "&" readable: the
// small files of a campaign are read by people as much as by programs.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteJSON writes v as indented JSON at dir/rel atomically and returns rel, the form a step
// lists in its outputs.
func WriteJSON(dir, rel string, v any) (string, error) {
	b, err := EncodeJSON(v)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", rel, err)
	}
	return rel, WriteFile(Abs(dir, rel), b)
}

// WriteLines writes one compact JSON value per line at dir/rel atomically and returns rel.
func WriteLines[T any](dir, rel string, items []T) (string, error) {
	err := WriteWith(Abs(dir, rel), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for i := range items {
			if err := enc.Encode(&items[i]); err != nil {
				return fmt.Errorf("line %d: %w", i+1, err)
			}
		}
		return nil
	})
	return rel, err
}

// ReadJSON decodes dir/rel into v strictly (unknown fields are an error naming the file); a
// file that does not exist reports found=false and no error.
func ReadJSON(dir, rel string, v any) (found bool, err error) {
	b, err := ReadFile(dir, rel, "")
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, DecodeStrict(Abs(dir, rel), b, v)
}

// DecodeStrict decodes one JSON value, refusing unknown fields; name prefixes the error.
func DecodeStrict(name string, b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode %s: %w", name, err)
	}
	return nil
}

// ReadFile reads dir/rel; when digest is non-empty the content must hash to it (the digest the
// journal recorded when the step wrote the file), so a file edited or replaced after its step
// ended is never read as that step's output.
func ReadFile(dir, rel, digest string) ([]byte, error) { return readFileInto(dir, rel, digest, nil) }

// readFileInto is ReadFile reading into buf's storage when it is large enough (a pass over
// thousands of cells reuses one buffer).
func readFileInto(dir, rel, digest string, buf []byte) ([]byte, error) {
	if !Inside(rel) {
		return nil, fmt.Errorf("read %s: not a path inside the campaign directory", rel)
	}
	b, err := readAll(Abs(dir, rel), buf[:0])
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	if digest != "" {
		if got := Digest(b); got != digest {
			return nil, &ChangedError{Rel: rel}
		}
	}
	return b, nil
}

// readAll appends the content of path to b, as os.ReadFile does without a buffer of its own.
// It calls open, fstat, read and close directly: an *os.File would also make the descriptor
// non-blocking and offer it to the poller (three more system calls, a third of the cost of
// reading a small cell file).
func readAll(path string, b []byte) ([]byte, error) {
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) == nil && st.Size > 0 {
		b = slices.Grow(b, int(st.Size)+1) // +1: the read that sees EOF needs room
	}
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, 512)
		}
		var n int
		err := ignoringEINTR(func() (err error) {
			n, err = syscall.Read(fd, b[len(b):cap(b)])
			return err
		})
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// ignoringEINTR retries fn while a signal interrupts it.
func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != syscall.EINTR {
			return err
		}
	}
}

// ChangedError says a file no longer holds what its step wrote.
type ChangedError struct{ Rel string }

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s changed after the step that wrote it ended: re-run that step (perfdag run FILE --out DIR --force NODE)", e.Rel)
}

// Digest is the sha256 of a file's content, in the form the journal records.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// DigestFile hashes dir/rel without holding it in memory.
func DigestFile(dir, rel string) (string, error) {
	if !Inside(rel) {
		return "", fmt.Errorf("output %s: outputs must be paths inside the campaign directory", rel)
	}
	f, err := os.Open(Abs(dir, rel))
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ScanLines streams the JSON Lines file dir/rel into fn one decoded value at a time (strict;
// blank lines skipped). Errors name the file and line. maxLine bounds one line.
func ScanLines[T any](dir, rel string, maxLine int, fn func(line int, v *T) error) error {
	f, err := os.Open(Abs(dir, rel))
	if err != nil {
		return fmt.Errorf("read %s: %w", rel, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var v T
		if err := DecodeStrict(fmt.Sprintf("%s:%d", rel, line), b, &v); err != nil {
			return err
		}
		if err := fn(line, &v); err != nil {
			return fmt.Errorf("%s:%d: %w", rel, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", rel, line+1, err)
	}
	return nil
}

// AppendLine appends a timestamped line to dir/rel (a log such as settle.log) and fsyncs it.
func AppendLine(dir, rel, node, text string) error {
	path := Abs(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("append %s: %w", rel, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("append %s: %w", rel, err)
	}
	defer f.Close()
	line := fmt.Sprintf("%s %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), node, text)
	if _, err := f.WriteString(line); err != nil {
		return fmt.Errorf("append %s: %w", rel, err)
	}
	return f.Sync()
}

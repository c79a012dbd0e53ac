// Package bounded reads files named by campaign authors — datasets, frozen telemetry, roofline
// bundles, campaign files — with a size cap and only when they are regular files, so a path
// such as /dev/zero, a FIFO or a directory fails at once with a named error class instead of
// hanging or eating memory.
package bounded

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Error classes: match them with errors.Is.
var (
	// ErrTooLarge is a file past its documented size limit.
	ErrTooLarge = errors.New("too_large")
	// ErrNotRegular is a device, FIFO, socket or directory where a regular file was expected.
	ErrNotRegular = errors.New("not_regular_file")
)

// Error names the file, the limit and the class of a refused read.
type Error struct {
	What  string // what the file is for, e.g. "dataset"
	Path  string
	Limit int64 // bytes; 0 for ErrNotRegular
	Mode  fs.FileMode
	Err   error // ErrTooLarge or ErrNotRegular
}

func (e *Error) Error() string {
	if errors.Is(e.Err, ErrTooLarge) {
		return fmt.Sprintf("%s %s is larger than the %s limit (%s)", e.What, e.Path, Size(e.Limit), e.Err)
	}
	return fmt.Sprintf("%s %s is not a regular file (%s, %s): name a file", e.What, e.Path, kind(e.Mode), e.Err)
}

// Unwrap exposes the class.
func (e *Error) Unwrap() error { return e.Err }

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a plain file"
}

// Size prints a byte count the way limits are documented: 256 KiB, 64 MiB.
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Open opens path for reading only when it is a regular file (symlinks to one are fine). The
// open never blocks: a FIFO is refused before it is opened, and O_NONBLOCK covers a path
// swapped for one in between, which the check after the open then refuses.
func Open(what, path string) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if !st.Mode().IsRegular() {
		return nil, nil, &Error{What: what, Path: path, Mode: st.Mode(), Err: ErrNotRegular}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	st, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &Error{What: what, Path: path, Mode: st.Mode(), Err: ErrNotRegular}
	}
	return f, st, nil
}

// ReadFile reads a regular file of at most limit bytes; a larger one is an ErrTooLarge error
// without reading it (a file that grows while read is caught at limit+1 bytes).
func ReadFile(what, path string, limit int64) ([]byte, error) {
	f, st, err := Open(what, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, &Error{What: what, Path: path, Limit: limit, Err: ErrTooLarge}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	if int64(len(b)) > limit {
		return nil, &Error{What: what, Path: path, Limit: limit, Err: ErrTooLarge}
	}
	return b, nil
}

// Prefix reads at most limit+1 bytes of a regular file, for callers that report an oversized
// file themselves (with a position) and need to know only that it is past the limit.
func Prefix(what, path string, limit int64) ([]byte, error) {
	f, _, err := Open(what, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	return b, nil
}

// LimitReader reads r and fails with an ErrTooLarge error once more than limit bytes arrive,
// for streams whose size is not known up front (a file that grows while it is read).
func LimitReader(r io.Reader, what, path string, limit int64) io.Reader {
	return &limitReader{r: r, left: limit, err: &Error{What: what, Path: path, Limit: limit, Err: ErrTooLarge}}
}

type limitReader struct {
	r    io.Reader
	left int64
	err  error
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, l.err
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, l.err
	}
	return n, err
}

// ReadFileIn is ReadFile for a name inside root: a symlink or ".." that leaves the root is
// refused (os.Root), so a file said to be inside a campaign's directory really is.
func ReadFileIn(root *os.Root, what, name string, limit int64) ([]byte, error) {
	shown := filepath.Join(root.Name(), name)
	st, err := root.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{What: what, Path: shown, Mode: st.Mode(), Err: ErrNotRegular}
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{What: what, Path: shown, Mode: st.Mode(), Err: ErrNotRegular}
	}
	if st.Size() > limit {
		return nil, &Error{What: what, Path: shown, Limit: limit, Err: ErrTooLarge}
	}
	b, err := io.ReadAll(LimitReader(f, what, shown, limit))
	if err != nil {
		return nil, err
	}
	return b, nil
}

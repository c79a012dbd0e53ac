package bounded

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("a", n)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(write("target", 3), link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		limit      int64
		want       error // nil: read succeeds
		size       int
	}{
		{"at the limit", write("at", 100), 100, nil, 100},
		{"one byte past the limit", write("past", 101), 100, ErrTooLarge, 0},
		{"empty", write("empty", 0), 100, nil, 0},
		{"symlink to a regular file", link, 100, nil, 3},
		{"/dev/zero", "/dev/zero", 100, ErrNotRegular, 0},
		{"a FIFO (would block forever)", fifo, 100, ErrNotRegular, 0},
		{"a directory", dir, 100, ErrNotRegular, 0},
		{"missing", filepath.Join(dir, "nope"), 100, os.ErrNotExist, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ReadFile("dataset", tt.path, tt.limit)
			if tt.want == nil {
				if err != nil || len(b) != tt.size {
					t.Fatalf("ReadFile = %d bytes, %v; want %d bytes", len(b), err, tt.size)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("ReadFile error %v, want class %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), "dataset") || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q names neither the role nor the path", err)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	_, err := ReadFile("roofline bundle file", "/dev/zero", 1<<20)
	if got := err.Error(); got != "roofline bundle file /dev/zero is not a regular file (a character device, not_regular_file): name a file" {
		t.Errorf("not-regular text = %q", got)
	}
	e := &Error{What: "dataset", Path: "d.jsonl", Limit: 256 << 20, Err: ErrTooLarge}
	if got := e.Error(); got != "dataset d.jsonl is larger than the 256 MiB limit (too_large)" {
		t.Errorf("too-large text = %q", got)
	}
}

func TestPrefixStopsPastTheLimit(t *testing.T) {
	b, err := Prefix("campaign file", "/dev/zero", 10)
	if !errors.Is(err, ErrNotRegular) || b != nil {
		t.Fatalf("Prefix(/dev/zero) = %d bytes, %v", len(b), err)
	}
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, make([]byte, 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := Prefix("campaign file", p, 10); err != nil || len(b) != 11 {
		t.Fatalf("Prefix = %d bytes, %v; want 11", len(b), err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{256 << 10: "256 KiB", 64 << 20: "64 MiB", 1 << 30: "1 GiB", 1000: "1000 bytes", 1536: "1536 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLimitReader(t *testing.T) {
	for _, tt := range []struct {
		n, limit int
		want     error
	}{{10, 10, nil}, {11, 10, ErrTooLarge}, {0, 0, nil}, {1 << 20, 1000, ErrTooLarge}} {
		b, err := io.ReadAll(LimitReader(strings.NewReader(strings.Repeat("a", tt.n)), "stream", "s", int64(tt.limit)))
		if tt.want == nil && (err != nil || len(b) != tt.n) || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%d bytes, limit %d: read %d, %v", tt.n, tt.limit, len(b), err)
		}
		if len(b) > tt.limit+1 {
			t.Errorf("%d bytes, limit %d: read %d bytes past the limit", tt.n, tt.limit, len(b))
		}
	}
}

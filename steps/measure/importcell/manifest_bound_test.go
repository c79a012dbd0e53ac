package importcell

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/perfdag/perfdag/engine/bounded"
)

// TestBundleManifestIsBounded: bundle.yaml is a regular file of at most MaxManifestBytes —
// a FIFO is refused at once (never blocks), one byte past the limit before it is read.
func TestBundleManifestIsBounded(t *testing.T) {
	fifoDir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifoDir, ManifestFile), 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	if _, err := BuildBundle(fifoDir, BundleOptions{}); !errors.Is(err, bounded.ErrNotRegular) {
		t.Errorf("a FIFO manifest: %v, want not_regular_file", err)
	}
	bigDir := t.TempDir()
	f, err := os.Create(filepath.Join(bigDir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxManifestBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := BuildBundle(bigDir, BundleOptions{}); !errors.Is(err, bounded.ErrTooLarge) {
		t.Errorf("a manifest past %d bytes: %v, want too_large", MaxManifestBytes, err)
	}
}

// Package workspace lays out a campaign directory's life: the timestamped folder created whole,
// the frozen config a resume reads and the run record (written so that a crash at any moment
// leaves either a directory `run --out` completes or a complete one), and a lock so two runs
// never share one directory. File names and formats are the campaign directory contract's
// (schema/campaigndir).
package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Create makes root/<UTC timestamp>-<slug> with its frozen files already in place: it fills a
// hidden directory and renames it into place, so a crash never leaves a half-made campaign.
func Create(root, slug string, now time.Time, src []byte, info campaigndir.Info) (string, error) {
	if strings.ContainsAny(slug, `/\`) || slug == "" || slug == "." || slug == ".." {
		return "", fmt.Errorf("campaign slug %q cannot name a directory", slug)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", root, err)
	}
	tmp, err := os.MkdirTemp(root, ".new-"+slug+"-*")
	if err != nil {
		return "", fmt.Errorf("create campaign dir in %s: %w", root, err)
	}
	defer os.RemoveAll(tmp) // gone after the rename
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("create campaign dir: %w", err)
	}
	if err := Freeze(tmp, src, info); err != nil {
		return "", err
	}
	base := filepath.Join(root, now.UTC().Format("20060102T150405Z")+"-"+slug)
	dir := base
	for i := 2; ; i++ {
		// Rename refuses a non-empty target on Linux; an empty one left by a crash is reused.
		err := os.Rename(tmp, dir)
		if err == nil {
			return dir, syncDir(root)
		}
		if !errors.Is(err, fs.ErrExist) && !errors.Is(err, syscall.ENOTEMPTY) {
			return "", fmt.Errorf("create campaign dir %s: %w", dir, err)
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

// Freeze writes the campaign file as written and the run record, each atomically; run.json
// goes last, so its presence means the freeze completed. An earlier creation time is kept.
func Freeze(dir string, src []byte, info campaigndir.Info) error {
	if old, err := campaigndir.ReadInfo(dir); err == nil && !old.Created.IsZero() {
		info.Created = old.Created
	}
	if info.Created.IsZero() {
		info.Created = time.Now().UTC()
	}
	info.Updated = time.Now().UTC()
	if err := campaigndir.WriteFile(campaigndir.Config(dir), src); err != nil {
		return err
	}
	if err := campaigndir.WriteSource(dir, info); err != nil {
		return err
	}
	return campaigndir.WriteInfo(dir, info)
}

// Usable says whether dir can take a run: it does not exist, is empty, is a campaign
// directory, or is one whose freeze a crash interrupted (frozen files but no run record and
// no journal), which the next run completes. Anything else is refused, never overwritten.
func Usable(dir string) (existing bool, err error) {
	if _, err := campaigndir.ReadInfo(dir); err == nil {
		return true, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	base := func(path func(string) string) string { return filepath.Base(path("")) }
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasPrefix(name, "."): // the lock, or an atomic write's temp file
		case name == base(campaigndir.Config), name == base(campaigndir.Source):
		case name == campaigndir.Calibration(): // perfdag calibrate ran before the first run
		case name == base(campaigndir.StateDir):
			slices, _ := campaigndir.SliceJournals(dir)
			for _, j := range append([]string{campaigndir.Journal(dir)}, slices...) {
				if st, err := os.Stat(j); err == nil && st.Size() > 0 {
					return false, fmt.Errorf("%s has checkpoints but no run record: it was not made by perfdag run", dir)
				}
			}
		default:
			return false, fmt.Errorf("%s exists and is not a campaign directory (it holds %s)", dir, name)
		}
	}
	return false, nil
}

// Lock takes the campaign directory's lock, failing at once when another run holds it.
func Lock(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(campaigndir.Lock(dir), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("campaign %s is being run by another perfdag process", dir)
	}
	_ = f.Truncate(0)
	fmt.Fprintf(f, "%d\n", os.Getpid())
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// Sharing of the directory lock.
const (
	Whole  = syscall.LOCK_EX // a run, a campaign-scope slice: no other process in the directory
	Shared = syscall.LOCK_SH // a cell slice: alongside other cells' slices, never a whole holder
)

// LockWait takes the directory's lock (Whole or Shared), waiting while others hold it, as a
// task of an exported workflow does: its dependencies are done, but slices of other cells
// (or the campaign-scope step before it) may still be finishing. It polls, so ctx (a signal)
// ends the wait.
func LockWait(ctx context.Context, dir string, how int) (unlock func(), err error) {
	return lockWait(ctx, campaigndir.Lock(dir), how, dir)
}

// LockSlice takes the lock of one cell's slice (state/slices/<cell>.lock), waiting while
// another attempt of the same slice still runs; the slice journal has one writer.
func LockSlice(ctx context.Context, dir, cell string) (unlock func(), err error) {
	if err := os.MkdirAll(campaigndir.SlicesDir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("lock slice %s: %w", cell, err)
	}
	return lockWait(ctx, campaigndir.SliceLock(dir, cell), Whole, dir+" (cell "+cell+")")
}

// FreezeShared is Freeze for slices sharing the directory: one at a time, so run.json keeps
// the first creation time and no two rewrites interleave.
func FreezeShared(ctx context.Context, dir string, src []byte, info campaigndir.Info) error {
	unlock, err := lockWait(ctx, campaigndir.FreezeLock(dir), Whole, dir+" (frozen files)")
	if err != nil {
		return err
	}
	defer unlock()
	return Freeze(dir, src, info)
}

func lockWait(ctx context.Context, path string, how int, what string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", what, err)
	}
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", what, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the lock of %s: %w", what, ctx.Err())
		case <-time.After(delay):
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// Locked reports whether a run currently holds the directory.
func Locked(dir string) bool {
	f, err := os.Open(campaigndir.Lock(dir))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

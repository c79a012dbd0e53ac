// Package faultfile is a fake disk for tests of append-only stores: files opened through a
// Disk are real files, but writes stop short with ENOSPC when the disk's free space runs out,
// and the next write, fsync or every truncate can be made to fail. It lets the checkpoint
// journal and the event log rehearse a full or failing disk without filling a real one.
package faultfile

import (
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/perfdag/perfdag/engine/jsonl"
)

// Disk hands out files that share its free space and its queued faults.
type Disk struct {
	mu        sync.Mutex
	limited   bool
	free      int64
	writes    []writeFault
	syncs     []error
	truncErr  error
	shortened int // writes that stopped short
}

type writeFault struct {
	n   int
	err error
}

// SetFree sets the bytes writes may still add before ENOSPC; negative means unlimited
// (space freed).
func (d *Disk) SetFree(n int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.limited, d.free = n >= 0, n
}

// FailWrite makes the next write write at most n bytes, then return err (nil err: a short
// write without an error, which the writer must notice itself).
func (d *Disk) FailWrite(n int, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writes = append(d.writes, writeFault{n, err})
}

// FailSync makes the next fsync return err without syncing, as a disk that lost the write.
func (d *Disk) FailSync(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.syncs = append(d.syncs, err)
}

// FailTruncate makes every truncate fail with err until called with nil.
func (d *Disk) FailTruncate(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.truncErr = err
}

// ShortWrites counts writes that stopped before their end, so a test can prove its fault fired.
func (d *Disk) ShortWrites() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.shortened
}

// Open is a jsonl.Opener: a real file (O_RDWR|O_CREATE|O_APPEND) behind the disk's faults.
func (d *Disk) Open(path string) (jsonl.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &File{disk: d, f: f}, nil
}

// File is one file on a Disk.
type File struct {
	disk *Disk
	f    *os.File
}

// Write writes what the disk allows: a queued fault first, then the free space.
func (f *File) Write(p []byte) (int, error) {
	d := f.disk
	d.mu.Lock()
	defer d.mu.Unlock()
	want, fail := len(p), error(nil)
	if len(d.writes) > 0 {
		wf := d.writes[0]
		d.writes = d.writes[1:]
		want, fail = min(want, wf.n), wf.err
		if fail == nil && want == len(p) {
			want = max(0, len(p)-1) // a short write must be short
		}
	} else if d.limited && int64(want) > d.free {
		want, fail = int(d.free), &fs.PathError{Op: "write", Path: f.f.Name(), Err: syscall.ENOSPC}
	}
	n, err := f.f.Write(p[:want])
	if d.limited {
		d.free -= int64(n)
	}
	if err != nil {
		return n, err
	}
	if n < len(p) {
		d.shortened++
	}
	return n, fail
}

// Sync fsyncs unless a failure is queued.
func (f *File) Sync() error {
	d := f.disk
	d.mu.Lock()
	if len(d.syncs) > 0 {
		err := d.syncs[0]
		d.syncs = d.syncs[1:]
		d.mu.Unlock()
		return &fs.PathError{Op: "sync", Path: f.f.Name(), Err: err}
	}
	d.mu.Unlock()
	return f.f.Sync()
}

// Truncate cuts the file (giving its space back to the disk) unless truncates fail.
func (f *File) Truncate(size int64) error {
	d := f.disk
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.truncErr != nil {
		return &fs.PathError{Op: "truncate", Path: f.f.Name(), Err: d.truncErr}
	}
	st, err := f.f.Stat()
	if err != nil {
		return err
	}
	if err := f.f.Truncate(size); err != nil {
		return err
	}
	if d.limited && size < st.Size() {
		d.free += st.Size() - size
	}
	return nil
}

// Read reads from the real file.
func (f *File) Read(p []byte) (int, error) { return f.f.Read(p) }

// Seek moves the real file's offset.
func (f *File) Seek(off int64, whence int) (int64, error) { return f.f.Seek(off, whence) }

// Close closes the real file.
func (f *File) Close() error { return f.f.Close() }

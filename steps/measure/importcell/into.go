package importcell

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// SourceError is a campaign file that exists but cannot be read: nothing is written.
type SourceError struct {
	Path string
	Err  error
}

func (e *SourceError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }
func (e *SourceError) Unwrap() error { return e.Err }

// InvalidError is a campaign file that would not be valid with the cells added: nothing is
// written. Src is the refused text when the validator refused it (Err then holds its
// problems); it is nil when the cells could not be added to the text at all (a duplicate id).
type InvalidError struct {
	Path string
	Src  []byte
	Err  error
}

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

// AppendInto adds cells to the campaign file at path (creating it as a campaign of imported
// cells when it does not exist) and writes it only when validate accepts the new text. The
// write is atomic — a kill or a full disk mid-write leaves the file as it was — goes through
// a symlink to the file it names, and keeps the file's mode. created says the file was new.
func AppendInto(path string, cells []schema.Cell, validate func(src []byte) error) (created bool, err error) {
	src, err := load.ReadSource(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		src, created = NewCampaign(path), true
	case err != nil:
		return false, &SourceError{Path: path, Err: err}
	}
	out, err := Append(src, path, cells)
	if err != nil {
		return false, &InvalidError{Path: path, Err: err}
	}
	if err := validate(out); err != nil {
		return false, &InvalidError{Path: path, Src: out, Err: err}
	}
	perm := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	if created {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return false, fmt.Errorf("create %s: %w", path, err)
		}
	}
	target := path
	if t, err := filepath.EvalSymlinks(path); err == nil {
		target = t
	}
	if err := campaigndir.WriteFile(target, out); err != nil {
		return false, err
	}
	if err := os.Chmod(target, perm); err != nil {
		return false, fmt.Errorf("keep the mode of %s: %w", path, err)
	}
	return created, nil
}

// Validate checks cells as a new campaign of imported cells would hold them — what
// AppendInto checks before it creates a campaign file — so that printing cells refuses what
// writing them refuses, with the same problems. name is the file name the problems are
// positioned in. The endpoint a cell names is not checked: the campaign it is pasted into
// defines it.
func Validate(name string, cells []schema.Cell, validate func(src []byte) error) error {
	cs := slices.Clone(cells)
	for i := range cs {
		cs[i].Endpoint = ""
	}
	out, err := Append(NewCampaign(name), name, cs)
	if err != nil {
		return &InvalidError{Path: name, Err: err}
	}
	if err := validate(out); err != nil {
		return &InvalidError{Path: name, Src: out, Err: err}
	}
	return nil
}

package campaigndir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/perfdag/perfdag/schema"
)

// Target is what a path a user names for perfdag to write must be.
type Target int

const (
	// TargetFile is a file replaced atomically (report --out, dataset generate --out, ...):
	// its folder must exist, and what is there already must be a regular file.
	TargetFile Target = iota
	// TargetFolder is a folder perfdag writes files into (tpm --out, a baseline registry),
	// created with its parents when missing.
	TargetFolder
	// TargetCampaign is a campaign directory (run --out, calibrate --dir): it may be one, but
	// it may not lie inside another.
	TargetCampaign
)

// CheckTarget says why path may not be written as t, before anything is written: no path
// inside a campaign directory (it holds only what its steps record, and each is checked
// against the digest its step recorded), no empty path, no directory, FIFO, device or socket
// where a file goes, no file where a folder goes, no file in a folder that does not exist.
// Symbolic links are followed, the last one too, so a link into a campaign directory is
// refused as the directory itself is. An *InsideError says which campaign directory.
func CheckTarget(path string, t Target) error {
	if path == "" {
		return errors.New(`"" is not a path: name one`)
	}
	what := "file"
	if t != TargetFile {
		what = "folder"
	}
	st, err := os.Lstat(path)
	switch {
	case err == nil && t == TargetFile:
		if st.Mode()&fs.ModeSymlink != 0 { // written through (import --into) or replaced (a rename): judged by what it names
			to, _ := os.Readlink(path)
			if st, err = os.Stat(path); err != nil {
				return fmt.Errorf("%s is a symbolic link to %s, which cannot be used: %w", path, to, err)
			}
		}
		if err := regular(path, st); err != nil {
			return err
		}
	case err == nil:
		if st.Mode()&fs.ModeSymlink != 0 {
			st, err = os.Stat(path)
		}
		if err == nil && !st.IsDir() {
			return fmt.Errorf("%s exists and is not a folder: name a folder", path)
		}
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR): // ENOTDIR: a file on the way, said below
		return fmt.Errorf("cannot use %s: %w", path, err)
	}
	if t == TargetFile {
		if strings.HasSuffix(path, "/") || strings.HasSuffix(path, string(filepath.Separator)) {
			return fmt.Errorf("%s names a folder: name a file", path)
		}
		parent := filepath.Dir(path)
		pst, err := os.Stat(parent)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("the folder %s does not exist: create it first (mkdir -p %s), or name a file in a folder that exists", parent, parent)
		case err != nil:
			return fmt.Errorf("cannot use the folder of %s: %w", path, err)
		case !pst.IsDir():
			return fmt.Errorf("%s is not a folder, so %s cannot be a %s", parent, path, what)
		}
	}
	real, rest, err := resolve(path)
	if err != nil {
		return fmt.Errorf("cannot use %s: %w", path, err)
	}
	if t != TargetFile && rest != "" {
		if st, err := os.Stat(real); err == nil && !st.IsDir() {
			return fmt.Errorf("%s is a file, so %s cannot be a folder", real, path)
		}
	}
	full := filepath.Join(real, rest)
	dir := full
	if t != TargetFolder {
		dir = filepath.Dir(full) // a file, or a campaign directory, may be its own; not inside one
	}
	for {
		if campaign, ok := Owner(dir); ok {
			rel, _ := filepath.Rel(dir, full)
			return &InsideError{Path: path, Dir: dir, Campaign: campaign, Rel: filepath.ToSlash(rel)}
		}
		up := filepath.Dir(dir)
		if up == dir {
			return nil
		}
		dir = up
	}
}

// regular refuses anything but a regular file where a file is to be replaced.
func regular(path string, st fs.FileInfo) error {
	m := st.Mode()
	kind := "not a regular file"
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return fmt.Errorf("%s is a folder: name a file", path)
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Errorf("%s is %s, which perfdag would replace: name a regular file", path, kind)
}

// resolve splits path into the real path of its longest existing prefix (symbolic links
// followed) and the part that does not exist yet.
func resolve(path string) (real, rest string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	for p := abs; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return "", "", err
			}
			rest, _ := filepath.Rel(p, abs)
			if rest == "." {
				rest = ""
			}
			return real, rest, nil
		}
		if filepath.Dir(p) == p {
			return p, "", nil
		}
	}
}

// InsideError says a path lies inside a campaign directory.
type InsideError struct {
	Path     string // as the user named it
	Dir      string // the campaign directory (symbolic links resolved)
	Campaign string // its campaign's slug, "" when its record does not say
	Rel      string // the path relative to Dir, slash-separated
}

func (e *InsideError) Error() string {
	who := "a campaign directory "
	if e.Campaign != "" {
		who = "campaign " + e.Campaign + "'s directory "
	}
	where := "is inside " + who + e.Dir
	switch {
	case e.Rel == "." && filepath.Clean(e.Path) == e.Dir:
		where = "is " + strings.TrimSuffix(who, " ")
	case e.Rel == ".":
		where = "is " + who + e.Dir
	}
	msg := fmt.Sprintf("%s %s, which holds only what its steps recorded: write it elsewhere", e.Path, where)
	if e.Rel == reportFile {
		msg += ", or re-render the recorded report.pdf through its render step with 'perfdag report " + e.Dir + "' (no --out)"
	}
	return msg
}

// Owner says whether dir is a campaign directory, and whose: its run.json names a campaign,
// or its calibration.json is a calibration_v1 (perfdag calibrate before the first run), or it
// holds a frozen config.yaml beside a checkpoint journal (a run.json lost or garbled: no known
// campaign, ""). A run.json or calibration.json of another tool does not make one.
func Owner(dir string) (campaign string, ok bool) {
	var rec struct {
		Schema   string `json:"schema"`
		Campaign string `json:"campaign"`
	}
	if b, found := readSmall(RunInfo(dir)); found && json.Unmarshal(b, &rec) == nil && rec.Campaign != "" {
		return rec.Campaign, true
	}
	rec.Campaign = ""
	if b, found := readSmall(filepath.Join(dir, calibration)); found && json.Unmarshal(b, &rec) == nil && rec.Schema == schema.SchemaCalibration {
		return rec.Campaign, true
	}
	for _, p := range []string{Config(dir), Journal(dir)} {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return "", false
		}
	}
	return "", true
}

// maxRecord bounds what Owner reads of run.json or calibration.json (each a few KiB).
const maxRecord = 1 << 20

// readSmall reads up to maxRecord bytes of path when it is a regular file.
func readSmall(path string) ([]byte, bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO must not block the check
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, false
	}
	b, _ := io.ReadAll(io.LimitReader(f, maxRecord))
	return b, true
}

// CheckOwner refuses a campaign directory of another campaign than slug (a directory of no
// campaign yet, or of no known campaign, passes).
func CheckOwner(dir, slug string) error {
	if campaign, ok := Owner(dir); ok && campaign != "" && campaign != slug {
		return fmt.Errorf("%s is the directory of campaign %s, not of %s: give %s's own directory", dir, campaign, slug, slug)
	}
	return nil
}

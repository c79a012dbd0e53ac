package dcgmcorrelate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/telemetry/dcgm"
)

// ErrOutsideCampaign is the class of a frozen file outside the campaign file's directory tree
// that the step did not opt into with allow_outside_campaign.
var ErrOutsideCampaign = errors.New("outside_campaign")

// frozenFile is with.file for one cell, relative to the campaign file's directory.
func frozenFile(file, cellID string) string { return strings.ReplaceAll(file, CellPlaceholder, cellID) }

// inside reports whether a frozen file stays in the campaign file's directory tree as written
// (relative, no ".." leaving it); symlinks that leave it are refused when it is opened.
func inside(file string) bool { return filepath.IsLocal(file) }

// loadFrozen reads one cell's frozen file. A file inside the campaign's tree is opened through
// an os.Root, so a symlink cannot lead out of it. A file outside is read only when the step
// opts in with allow_outside_campaign, and then nothing of its text is echoed: a parse error
// says only that the file is not a dcgm_frozen_v1 file, and the source detail is its name.
func loadFrozen(baseDir string, p *Params, cellID string) (*dcgm.FrozenSource, error) {
	const what = "dcgm frozen file"
	file := frozenFile(p.File, cellID)
	if inside(file) {
		root, err := os.OpenRoot(baseDir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		defer root.Close()
		data, err := bounded.ReadFileIn(root, what, file, dcgm.MaxFrozenBytes)
		if err != nil {
			return nil, err
		}
		return dcgm.ParseFrozen(filepath.Join(baseDir, file), data)
	}
	path := frozenPath(baseDir, p.File, cellID)
	if !p.AllowOutsideCampaign {
		return nil, fmt.Errorf("%s %s lies outside the campaign file's directory (%w): copy it beside the campaign file, or set with.allow_outside_campaign: true", what, path, ErrOutsideCampaign)
	}
	data, err := bounded.ReadFile(what, path, dcgm.MaxFrozenBytes)
	if err != nil {
		return nil, err
	}
	src, err := dcgm.ParseFrozen(path, data)
	if err != nil {
		return nil, fmt.Errorf("%s %s is not a valid dcgm_frozen_v1 file (its problems are not shown: the file lies outside the campaign's directory; validate a copy inside it)", what, path)
	}
	return src.Sealed(), nil
}

// digestFrozen names the frozen file's size and content hash for the fingerprint, or why it
// cannot be read; a file outside the tree that the step may not read is not read here either.
func digestFrozen(baseDir string, p *Params, cellID string) string {
	file := frozenFile(p.File, cellID)
	var b []byte
	var err error
	switch {
	case inside(file):
		var root *os.Root
		if root, err = os.OpenRoot(baseDir); err == nil {
			b, err = bounded.ReadFileIn(root, "dcgm frozen file", file, dcgm.MaxFrozenBytes)
			root.Close()
		}
	case !p.AllowOutsideCampaign:
		return "outside the campaign directory"
	default:
		b, err = bounded.ReadFile("dcgm frozen file", frozenPath(baseDir, p.File, cellID), dcgm.MaxFrozenBytes)
	}
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return fmt.Sprintf("%d:%s", len(b), campaigndir.Digest(b))
}

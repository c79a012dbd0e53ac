package webui

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// maxServed bounds one file read for a page or a download.
const maxServed = 512 << 20

// openServed opens rel inside dir as every file this server reads from a campaign directory
// is opened: through an os.Root, so neither "..", an absolute path nor a symlinked folder
// pointing out of the directory reaches a file outside it; the file itself a regular file and
// not a symlink (even one to another file inside: a SOURCE.md pointing at config.yaml would
// serve the config); opened without blocking, so a FIFO put in its place cannot hang a page.
func openServed(dir, rel string) (*os.File, error) {
	if !campaigndir.Inside(rel) || strings.Contains(rel, "\\") {
		return nil, fmt.Errorf("read %s: %w", rel, errNotServed)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	defer root.Close()
	name := filepath.FromSlash(rel)
	lst, err := root.Lstat(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	if !lst.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: %w", rel, errNotRegular)
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || !os.SameFile(st, lst) {
		f.Close() // replaced between the two looks: by a symlink or something else
		return nil, fmt.Errorf("read %s: %w", rel, errNotRegular)
	}
	return f, nil
}

// errNotRegular refuses a symlink, a FIFO, a device or a folder where a campaign file was.
var errNotRegular = errors.New("not a regular file (serve reads only regular files of a campaign directory, never a symlink)")

// readServed reads rel inside dir through openServed, at most maxServed bytes. With a digest
// (a recorded step output) the content must hash to it: a file being rewritten, or changed
// since its step ended, is refused rather than shown torn or as evidence it no longer is.
func readServed(dir, rel, digest string) ([]byte, error) {
	f, err := openServed(dir, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxServed))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	if digest != "" && campaigndir.Digest(b) != digest {
		return nil, &campaigndir.ChangedError{Rel: rel}
	}
	return b, nil
}

// engineFiles are the files a campaign's people-facing record lives in that no step records
// (written atomically by the engine): served as they are, redacted.
func engineFiles(dir string) map[string]bool {
	return map[string]bool{
		filepath.Base(campaigndir.Source(dir)):  true,
		filepath.Base(campaigndir.Summary(dir)): true,
	}
}

// servedDigest says whether rel may be served and the digest its content must have ("" for an
// engine file). Only recorded outputs of finished steps and the engine's record are served:
// never config.yaml (it may hold a lake DSN), the journal, or a file nothing recorded.
func servedDigest(s *view, rel string) (string, bool) {
	if engineFiles(s.Dir)[rel] {
		return "", true
	}
	if s.Files.Digest == nil {
		return "", false
	}
	d, ok := s.Files.Digest(rel)
	return d, ok && d != ""
}

// file serves one recorded output (the PDF, the atlas, SOURCE.md, the lake receipt, a point's
// files) as a download or plain text: never as HTML, whatever its content.
func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	e, ok := s.open(w, r)
	if !ok {
		return
	}
	rel := r.PathValue("rel")
	v, err := s.view(e)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	digest, ok := servedDigest(v, rel)
	if !ok {
		s.fail(w, http.StatusNotFound, fmt.Errorf("%s: %w (only the recorded outputs of finished steps are)", rel, errNotServed))
		return
	}
	b, err := readServed(e.Dir, rel, digest)
	var changed *campaigndir.ChangedError
	switch {
	case errors.As(err, &changed):
		s.fail(w, http.StatusConflict, err)
		return
	case err != nil:
		s.fail(w, http.StatusNotFound, err)
		return
	}
	name := path.Base(rel)
	if strings.HasSuffix(name, ".pdf") {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `inline; filename="`+strings.ReplaceAll(name, `"`, "")+`"`)
		_, _ = w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, redact.String(string(b)))
}

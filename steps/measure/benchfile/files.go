package benchfile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// Files reads benchmark outputs for one caller, each vLLM/SGLang file indexed once: importcell
// builds a cell of one point per run of a multi-run file (an SGLang JSONL, a vLLM
// --append-result file) and checks it again, and a campaign run's import points share one
// (the run's environment holds it), so every run of a file comes from one pass over it
// instead of one per run, and each read holds one run in memory, not the file. A file changed
// on disk since (size or modification time) is indexed again. Safe for concurrent use; it
// keeps each file's index (where its runs are) and digest until it is dropped.
type Files struct {
	mu      sync.Mutex
	serve   map[string]*serveFile
	digests map[string]digest
	reads   int // vLLM/SGLang files read from disk, for tests
	hashes  int // outputs hashed (Digest), for tests
}

// NewFiles returns an empty Files.
func NewFiles() *Files { return &Files{serve: map[string]*serveFile{}, digests: map[string]digest{}} }

// run returns the parsed run of path an import at conc reads (serveFile.pick), reading the
// file on first use.
func (fs *Files) run(path string, l schema.Load) (*serveDoc, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f, err := fs.open(path)
	if err != nil {
		return nil, err
	}
	return f.pick(l)
}

// lastRun returns path's last run parsed, whatever it holds (Detect reads its keys).
func (fs *Files) lastRun(path string) (*serveDoc, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f, err := fs.open(path)
	if err != nil {
		return nil, err
	}
	return f.runs[len(f.runs)-1].doc()
}

// open returns path's runs, reading the file when it is new or changed; fs.mu is held.
func (fs *Files) open(path string) (*serveFile, error) {
	st, err := os.Stat(path)
	if f, ok := fs.serve[path]; ok && err == nil && st.Size() == f.size && st.ModTime().Equal(f.mtime) {
		return f, nil
	}
	fs.reads++
	f, err := openServe(path)
	if err != nil {
		return nil, err
	}
	if st != nil {
		f.size, f.mtime = st.Size(), st.ModTime()
	}
	fs.serve[path] = f
	return f, nil
}

// Read reads path as the given format (one of Formats).
func Read(format, path string, e Expect, o stats.Options) (*Result, error) {
	return NewFiles().Read(format, path, e, o)
}

// Read reads path as the given format (one of Formats); a vLLM/SGLang file read before is
// not read again.
func (fs *Files) Read(format, path string, e Expect, o stats.Options) (*Result, error) {
	switch format {
	case SourceAIPerf:
		return ReadAIPerf(path, e, o)
	case SourceVLLM:
		return fs.readVLLM(path, e, o)
	case SourceSGLang:
		return fs.readSGLang(path, e, o)
	}
	return nil, fmt.Errorf("import format %q: want aiperf, vllm-bench or sglang-bench", format)
}

// Runs lists the loads of the runs a vLLM or SGLang result file holds (a concurrency, or a
// request rate with its cap), in file order, each once (a load run twice counts once: an
// import reads its last run); nil for AIPerf, whose directory is always one run. A burst (an
// infinite rate without a max concurrency) is skipped.
func Runs(format, path string) ([]schema.Load, error) { return NewFiles().Runs(format, path) }

// Runs is the package's Runs reading through fs.
func (fs *Files) Runs(format, path string) ([]schema.Load, error) {
	if format != SourceVLLM && format != SourceSGLang {
		return nil, nil
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f, err := fs.open(path)
	if err != nil {
		return nil, err
	}
	return f.loads()
}

// digest is an output's content digest and the state of its files when it was taken.
type digest struct {
	sum   string
	state string
}

// Digest hashes an imported output — a file, or an AIPerf directory's two files, in name
// order, each as "name:size\n" and its bytes; a file that cannot be read as
// "name:missing\n"; "missing" when path does not exist — streaming each file, once per
// content: the import points of a file of a thousand runs share one hash. It is the import
// kind's fingerprint of what a point reads.
func (fs *Files) Digest(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "missing"
	}
	files := []string{path}
	if st.IsDir() {
		files = []string{filepath.Join(path, AIPerfAggregate), filepath.Join(path, AIPerfRecords)}
	}
	var state strings.Builder
	for _, f := range files {
		if fst, err := os.Stat(f); err == nil {
			fmt.Fprintf(&state, "%d %d %s;", fst.Size(), fst.ModTime().UnixNano(), fst.Mode())
		} else {
			state.WriteString("missing;")
		}
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if d, ok := fs.digests[path]; ok && d.state == state.String() {
		return d.sum
	}
	fs.hashes++
	h := sha256.New()
	for _, f := range files {
		hashFile(h, f)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	fs.digests[path] = digest{sum: sum, state: state.String()}
	return sum
}

// hashFile writes "name:size\n" and the file's bytes to h, streaming them ("name:missing\n"
// when it is not a regular file that can be read: a FIFO is not opened, so not waited on).
func hashFile(h io.Writer, path string) {
	f, st, err := bounded.Open(what, path)
	if err != nil {
		fmt.Fprintf(h, "%s:missing\n", filepath.Base(path))
		return
	}
	defer f.Close()
	fmt.Fprintf(h, "%s:%d\n", filepath.Base(path), st.Size())
	_, _ = io.CopyN(h, f, st.Size())
}

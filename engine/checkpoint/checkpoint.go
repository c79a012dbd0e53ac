// Package checkpoint stores one record per node under state/, written atomically (temp file,
// fsync, rename, directory fsync), so a crash at any moment leaves either the old record or the
// new one, never half of one — and a resume can trust what it reads back.
package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfdag/perfdag/engine/fingerprint"
	"github.com/perfdag/perfdag/engine/gate"
)

// Node states a record can hold.
const (
	Running     = "running"     // started; a crash leaves it here and it is never reused
	Succeeded   = "succeeded"   // result and outputs are complete
	Failed      = "failed"      // the step returned an error
	Interrupted = "interrupted" // cancelled by a signal
)

// Record is a node's checkpoint.
type Record struct {
	Node        string            `json:"node"`
	Step        string            `json:"step"`
	Kind        string            `json:"kind"`
	Status      string            `json:"status"`
	Fingerprint string            `json:"fingerprint"`
	Doc         fingerprint.Doc   `json:"fingerprint_doc"`
	Result      json.RawMessage   `json:"result,omitempty"`
	Outputs     map[string]string `json:"outputs,omitempty"` // path relative to the campaign dir → sha256
	Digest      string            `json:"digest,omitempty"`  // what downstream fingerprints read
	Summary     string            `json:"summary,omitempty"`
	Error       string            `json:"error,omitempty"`
	Gates       []gate.Verdict    `json:"gates,omitempty"`
	StartedAt   time.Time         `json:"started_at"`
	EndedAt     time.Time         `json:"ended_at,omitzero"`
	Attempt     int               `json:"attempt"`
	RunID       string            `json:"run_id"`
}

// Store is the state/ directory of one campaign.
type Store struct {
	dir string
}

// Open returns the store under campaignDir/state, creating it.
func Open(campaignDir string) (*Store, error) {
	dir := filepath.Join(campaignDir, "state")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create checkpoint dir %s: %w", dir, err)
	}
	return &Store{dir: dir}, nil
}

// ReadOnly returns the store under campaignDir/state without creating anything (status, dry runs).
func ReadOnly(campaignDir string) *Store {
	return &Store{dir: filepath.Join(campaignDir, "state")}
}

// fileName escapes a node id into one safe path element: anything outside [A-Za-z0-9._-]
// becomes %XX, so no id can name another directory.
func fileName(node string) string {
	var b strings.Builder
	for i := 0; i < len(node); i++ {
		c := node[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || (c == '.' && i > 0) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String() + ".json"
}

// Load reads a node's record; (nil, nil) when there is none.
func (s *Store) Load(node string) (*Record, error) {
	path := filepath.Join(s.dir, fileName(node))
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", path, err)
	}
	return decode(path, b)
}

func decode(path string, b []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("checkpoint %s is corrupt: %w", path, err)
	}
	return &r, nil
}

// LoadAll reads every record, by node id. A corrupt record is an error: it can only come from
// outside tampering, since writes are atomic.
func (s *Store) LoadAll() (map[string]*Record, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*Record{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list checkpoints %s: %w", s.dir, err)
	}
	out := make(map[string]*Record, len(entries))
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue // temp files of an interrupted write are invisible
		}
		path := filepath.Join(s.dir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read checkpoint %s: %w", path, err)
		}
		r, err := decode(path, b)
		if err != nil {
			return nil, err
		}
		out[r.Node] = r
	}
	return out, nil
}

// Save writes a record atomically.
func (s *Store) Save(r *Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode checkpoint %s: %w", r.Node, err)
	}
	return WriteFile(filepath.Join(s.dir, fileName(r.Node)), append(b, '\n'))
}

// WriteFile replaces path atomically: a hidden temp file in the same directory, fsync, rename,
// then fsync of the directory so the rename itself survives a power cut.
func WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
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

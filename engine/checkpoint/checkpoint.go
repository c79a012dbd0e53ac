// Package checkpoint stores one record per node in an append-only journal, state/journal.jsonl:
// each record is one line appended with a single write and fsynced before the step's outcome
// counts. A crash can tear only the last line, which readers ignore and the next writer trims,
// so a resume never trusts half of a record; a failed append (full disk, EIO, fsync error) is
// cut back off at once (engine/jsonl), so a partial line never sits before good ones. The newest line of a node wins; the journal is
// compacted (temp file, fsync, rename) when old lines pile up. One file instead of one file
// per node keeps a no-op resume of 10,000 nodes to one read.
package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/perfdag/perfdag/engine/fingerprint"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/jsonl"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Node states a record can hold.
const (
	Running     = "running"     // started; a crash leaves it here and it is never reused
	Succeeded   = "succeeded"   // result and outputs are complete
	Failed      = "failed"      // the step returned an error
	Interrupted = "interrupted" // cancelled by a signal
	Blocked     = "blocked"     // did not run in the latest run: a dependency failed or a fail gate stands
	Skipped     = "skipped"     // did not run in the latest run: a bracket half whose point was not measured
)

// Record is a node's checkpoint.
type Record struct {
	Node        string            `json:"node"`
	Step        string            `json:"step"`
	Kind        string            `json:"kind"`
	Status      string            `json:"status"`
	Fingerprint string            `json:"fingerprint,omitempty"`
	Doc         json.RawMessage   `json:"fingerprint_doc,omitempty"` // fingerprint.Doc, decoded only to explain a re-run
	Result      json.RawMessage   `json:"result,omitempty"`
	Outputs     map[string]string `json:"outputs,omitempty"` // path relative to the campaign dir → sha256
	Digest      string            `json:"digest,omitempty"`  // what downstream fingerprints read
	Summary     string            `json:"summary,omitempty"`
	Error       string            `json:"error,omitempty"`
	Refused     bool              `json:"refused,omitempty"` // failed by refusing (strict publish): a gate failure, not a broken step
	Gates       []gate.Verdict    `json:"gates,omitempty"`
	StartedAt   time.Time         `json:"started_at"`
	EndedAt     time.Time         `json:"ended_at,omitzero"`
	Attempt     int               `json:"attempt"`
	RunID       string            `json:"run_id"`
	// Fanout lists, in order, the points a fan-out node expanded into: a resume and a dry run
	// replay its point groups from it. Written as keys ("c9", "r2.5"); a record written before
	// points were keyed by load holds bare concurrencies, read as closed-loop points (a cell's
	// LegacyLoad says what they stand for).
	Fanout []schema.Load `json:"fanout,omitempty"`
}

// FingerprintDoc decodes what the fingerprint hashed, to explain why a node re-runs (or to
// re-hash it under other names). The record stores the document through json.Marshal, which
// escapes <, > and & in its raw parts; they are unescaped, so the document is byte for byte
// what was hashed and Sum gives the recorded fingerprint.
func (r *Record) FingerprintDoc() fingerprint.Doc {
	var d fingerprint.Doc
	_ = json.Unmarshal(r.Doc, &d)
	d.Params, d.Inputs, d.Gates = unescapeHTML(d.Params), unescapeHTML(d.Inputs), unescapeHTML(d.Gates)
	return d
}

// unescapeHTML undoes json.Marshal's HTML escaping (\u003c, \u003e, \u0026) of raw JSON, which
// fingerprint.Canonical never writes; an escaped backslash is kept as it is.
func unescapeHTML(raw json.RawMessage) json.RawMessage {
	if !bytes.Contains(raw, []byte(`\u00`)) {
		return raw
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			out = append(out, raw[i])
			continue
		}
		if raw[i+1] == 'u' && i+6 <= len(raw) {
			switch string(raw[i+2 : i+6]) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out, i = append(out, raw[i], raw[i+1]), i+1
	}
	return out
}

// SetDoc stores what the fingerprint hashed.
func (r *Record) SetDoc(d fingerprint.Doc) {
	r.Doc, _ = json.Marshal(d)
	r.Fingerprint = d.Sum()
}

// Store is the checkpoint journal of one campaign, seen whole: the journal merged with the
// journals of cell slices that ran concurrently (state/slices/<cell>.jsonl). A store writes
// to one of them: the journal when its process holds the whole directory, its cell's slice
// journal when it shares the directory with other cells' slices.
type Store struct {
	dir     string // the campaign directory
	path    string // the journal this store appends to (or, read-only, the main journal)
	open    jsonl.Opener
	mu      sync.Mutex
	w       *jsonl.Writer // appends whole lines; nil for a read-only store
	records map[string]*Record
	lines   int // lines of the file at path
	// read holds records as a reader reads them in place of the journal's (Overlay): records
	// of a directory written by an older perfdag, under the ids the nodes have today. A record
	// saved for the node replaces its entry.
	read map[string]*Record
}

// Overlay makes LoadAll and Load return recs in place of the records of the same ids (and
// beside them, for ids the journal lacks) until a record for the id is saved: how a runner
// reads a directory written before its nodes took today's ids, without rewriting the journal.
func (s *Store) Overlay(recs map[string]*Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.read == nil {
		s.read = map[string]*Record{}
	}
	for id, r := range recs {
		s.read[id] = r
	}
}

// Open opens the journal under campaignDir/state for writing; the caller holds the whole
// directory. It trims a torn last line left by a crash, loads every record, folds the
// journals of concurrent slices into the journal (rewritten atomically, then the slice
// journals removed: a crash in between leaves duplicates of equal records), and compacts
// when most lines are superseded.
func Open(campaignDir string) (*Store, error) {
	return open(campaignDir, jsonl.OpenOS)
}

// open is Open through a chosen file opener (tests pass a faulty disk).
func open(campaignDir string, opener jsonl.Opener) (*Store, error) {
	dir := campaigndir.StateDir(campaignDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create checkpoint dir %s: %w", dir, err)
	}
	s := &Store{dir: campaignDir, path: campaigndir.Journal(campaignDir), open: opener}
	w, data, err := jsonl.OpenRead(s.path, opener)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint journal: %w", err)
	}
	s.records, s.lines, err = parse(s.path, data)
	if err != nil {
		w.Close()
		return nil, err
	}
	s.w = w
	slices, err := s.mergeSlices(s.records)
	if err != nil {
		s.Close()
		return nil, err
	}
	if len(slices) > 0 || s.lines > 2*len(s.records)+64 {
		if err := s.compact(); err != nil {
			s.Close()
			return nil, err
		}
	}
	for _, p := range slices {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.Close()
			return nil, fmt.Errorf("remove merged slice journal: %w", err)
		}
	}
	return s, nil
}

// OpenSlice opens cell's slice journal for writing; the caller shares the directory with
// other cells' slices and holds the cell's slice lock. It sees every record (journal and all
// slice journals merged) and appends only to state/slices/<cell>.jsonl.
func OpenSlice(campaignDir, cell string) (*Store, error) {
	path := campaigndir.SliceJournal(campaignDir, cell)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create slice journal dir: %w", err)
	}
	s := &Store{dir: campaignDir, path: campaigndir.Journal(campaignDir), open: jsonl.OpenOS}
	recs, err := s.LoadAll() // the merged view, this slice's journal included
	if err != nil {
		return nil, err
	}
	w, err := jsonl.Open(path, jsonl.OpenOS) // trims a torn last line of this slice's journal
	if err != nil {
		return nil, fmt.Errorf("open slice journal: %w", err)
	}
	s.path, s.w, s.records = path, w, recs
	return s, nil
}

// mergeSlices reads the slice journals over recs, in cell order (a node is written by the
// slice of its cell, so the order only decides between equal records), and returns their
// paths.
func (s *Store) mergeSlices(recs map[string]*Record) ([]string, error) {
	paths, err := campaigndir.SliceJournals(s.dir)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read slice journal %s: %w", p, err)
		}
		sl, _, err := parse(p, data)
		if err != nil {
			return nil, err
		}
		for id, r := range sl {
			recs[id] = r
		}
	}
	return paths, nil
}

// ReadOnly reads the journal under campaignDir/state, merged with any slice journals,
// without creating or changing anything (status, dry runs); a missing journal is an empty
// store.
func ReadOnly(campaignDir string) *Store {
	return &Store{dir: campaignDir, path: campaigndir.Journal(campaignDir)}
}

// parse reads journal lines; the newest record of a node wins. Only the final line may be
// torn (a crash mid-append); a bad line anywhere else means the file was altered.
func parse(path string, data []byte) (map[string]*Record, int, error) {
	out := map[string]*Record{}
	lines := 0
	for len(data) > 0 {
		line := data
		rest := []byte(nil)
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, rest = data[:i], data[i+1:]
		} else if len(line) > 0 {
			break // torn final line: never completed, never counted
		}
		data = rest
		lines++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r := &Record{}
		if err := json.Unmarshal(line, r); err != nil {
			return nil, 0, fmt.Errorf("checkpoint journal %s is corrupt at line %d: %w", path, lines, err)
		}
		out[r.Node] = r
	}
	return out, lines, nil
}

// LoadAll returns every node's newest record.
func (s *Store) LoadAll() (map[string]*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.records == nil {
		recs, lines, err := s.readMerged()
		if err != nil {
			return nil, err
		}
		s.records, s.lines = recs, lines
	}
	out := make(map[string]*Record, len(s.records)+len(s.read))
	for k, v := range s.records {
		out[k] = v
	}
	for k, v := range s.read {
		out[k] = v
	}
	return out, nil
}

// maxRereads bounds how often a reader starts over because the journal was replaced while it
// read; a journal is replaced once per whole open (fold or compaction), so a few suffice.
const maxRereads = 8

// beforeSlices, when set (tests only), runs between reading the journal and the slice journals.
var beforeSlices func()

// readMerged reads the journal and the slice journals over it as one view. A whole opener
// folding the slices renames the merged journal into place and only then removes them, so a
// reader that read the journal before that rename and lists the slices after the removal
// would miss their records (status while a campaign-scope slice starts). The reader keeps the
// journal it read open and, once the slices are read, starts over if that is no longer the
// file in place: when it still is, no fold had renamed it, so no slice it needed was removed.
func (s *Store) readMerged() (map[string]*Record, int, error) {
	for attempt := 1; ; attempt++ {
		recs, lines, same, err := s.readOnce()
		if err != nil || same {
			return recs, lines, err
		}
		if attempt == maxRereads {
			return nil, 0, fmt.Errorf("checkpoint journal %s was replaced %d times while being read", s.path, attempt)
		}
	}
}

// readOnce reads the journal, then the slice journals over it, and reports whether the
// journal it read is still the one in place (both absent counts as the same).
func (s *Store) readOnce() (recs map[string]*Record, lines int, same bool, err error) {
	recs = map[string]*Record{}
	var held fs.FileInfo
	f, err := os.Open(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, 0, false, fmt.Errorf("read checkpoint journal %s: %w", s.path, err)
	default:
		defer f.Close()
		data, err := io.ReadAll(f)
		if err == nil {
			held, err = f.Stat()
		}
		if err != nil {
			return nil, 0, false, fmt.Errorf("read checkpoint journal %s: %w", s.path, err)
		}
		if recs, lines, err = parse(s.path, data); err != nil {
			return nil, 0, false, err
		}
	}
	if beforeSlices != nil {
		beforeSlices()
	}
	if _, err := s.mergeSlices(recs); err != nil {
		return nil, 0, false, err
	}
	now, err := os.Stat(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return recs, lines, held == nil, nil
	case err != nil:
		return nil, 0, false, fmt.Errorf("stat checkpoint journal %s: %w", s.path, err)
	}
	return recs, lines, held != nil && os.SameFile(held, now), nil
}

// Load returns a node's newest record; (nil, nil) when there is none.
func (s *Store) Load(node string) (*Record, error) {
	all, err := s.LoadAll()
	if err != nil {
		return nil, err
	}
	return all[node], nil
}

// Save appends a record with one write and fsyncs it; only then does it count. A failed
// write or fsync is cut back off the journal (or, if that fails, further saves are refused),
// so a full disk never leaves a partial line that would hide the records after it.
func (s *Store) Save(r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode checkpoint %s: %w", r.Node, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return fmt.Errorf("checkpoint store %s is read-only", s.path)
	}
	if err := s.w.Append(append(b, '\n'), true); err != nil {
		return fmt.Errorf("save checkpoint %s: %w", r.Node, err)
	}
	s.records[r.Node] = r
	delete(s.read, r.Node)
	s.lines++
	return nil
}

// Close releases the journal.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return nil
	}
	err := s.w.Close()
	s.w = nil
	return err
}

// compact rewrites the journal with one line per node, atomically.
func (s *Store) compact() error {
	ids := make([]string, 0, len(s.records))
	for id := range s.records {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var buf bytes.Buffer
	for _, id := range ids {
		b, err := json.Marshal(s.records[id])
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if err := WriteFile(s.path, buf.Bytes()); err != nil {
		return fmt.Errorf("compact checkpoint journal: %w", err)
	}
	s.w.Close()
	s.w = nil
	w, err := jsonl.Open(s.path, s.open)
	if err != nil {
		return fmt.Errorf("reopen checkpoint journal: %w", err)
	}
	s.w, s.lines = w, len(ids)
	return nil
}

// WriteFile replaces path atomically (the campaign directory contract's writer).
func WriteFile(path string, data []byte) error { return campaigndir.WriteFile(path, data) }

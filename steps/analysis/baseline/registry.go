package baseline

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Registry layout: <registry>/<family>/<measurement>/<UTC-ts>/{baseline.json,
// source-snapshot.json, source-snapshot.json.sha256}.
const (
	Family       = "inference"
	EntryFile    = "baseline.json"
	SnapshotFile = "source-snapshot.json"
	SumFile      = SnapshotFile + ".sha256"
	stampLayout  = "20060102T150405Z"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Entry is one registered baseline: its directory, metadata and snapshot.
type Entry struct {
	Dir  string
	Meta schema.BaselineEntry
	Doc  *schema.PerfBench
}

// RecordRequest says what to register and where.
type RecordRequest struct {
	Campaign campaigndir.Finished // the finished campaign to snapshot
	Registry string               // registry root (holds <family>/<measurement>/...)
	Name     string               // measurement name; empty means "<model>-perfbench-v1"
	Notes    string               // free text, e.g. "GPQA=71.2 MMLU-Pro=80.1"
	Cell     string               // cell to snapshot; empty means the only measured cell
	Now      time.Time            // registration time; zero means now
	Version  string               // perfdag version recorded in baseline.json
}

// Record snapshots a campaign cell and registers it under <registry>/inference/<name>/<UTC-ts>/.
// The entry is written into a hidden temp directory and renamed into place, so a reader sees
// a whole entry or none.
func Record(ctx context.Context, req RecordRequest) (*Entry, error) {
	var failing []string
	for _, v := range req.Campaign.Verdicts {
		if v.Failing() {
			failing = append(failing, fmt.Sprintf("gate %s on %s (%s)", v.Gate, v.Node, cmp.Or(v.Value, v.Rule)))
		}
	}
	if len(failing) > 0 {
		// A baseline is what later runs are judged against: promoting one acts on a pass.
		return nil, &engine.Refusal{Reasons: append(failing, "a campaign with fail-severity gate verdicts is not registered as a baseline: fix what the gates measure, or relax them and run the campaign again")}
	}
	d, err := readCampaign(ctx, req.Campaign)
	if err != nil {
		return nil, err
	}
	cell, err := d.chooseCell(req.Cell, "")
	if err != nil {
		return nil, err
	}
	doc, err := d.snapshot(cell)
	if err != nil {
		return nil, err
	}
	name := req.Name
	if name == "" {
		name = slug(doc.ModelPath) + "-perfbench-v1"
	}
	if !nameRE.MatchString(name) {
		return nil, fmt.Errorf("baseline name %q: use letters, digits, '.', '_' and '-' (it names a directory)", name)
	}
	body, err := campaigndir.EncodeJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("encode snapshot: %w", err)
	}
	sum := sha256.Sum256(body)
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	src, err := filepath.Abs(req.Campaign.Dir)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", req.Campaign.Dir, err)
	}
	meta := schema.BaselineEntry{
		Schema: schema.SchemaBaselineEntry, Family: Family, Measurement: name,
		Kind: schema.SchemaPerfBench, Unit: "structured-json",
		Created: now.UTC().Format(time.RFC3339), Notes: req.Notes,
		Source: src, Cell: cell, SourceSnapshot: SnapshotFile,
		SHA256: hex.EncodeToString(sum[:]), PerfdagVersion: req.Version,
	}
	metaBody, err := campaigndir.EncodeJSON(meta)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", EntryFile, err)
	}
	parent := filepath.Join(req.Registry, Family, name)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("create registry folder: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, ".tmp-")
	if err != nil {
		return nil, fmt.Errorf("create registry entry: %w", err)
	}
	defer os.RemoveAll(tmp) // gone after the rename
	files := []struct {
		name string
		data []byte
	}{
		{SnapshotFile, body},
		{SumFile, []byte(meta.SHA256 + "  " + SnapshotFile + "\n")},
		{EntryFile, metaBody},
	}
	for _, f := range files {
		if err := campaigndir.WriteFile(filepath.Join(tmp, f.name), f.data); err != nil {
			return nil, err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("create registry entry: %w", err)
	}
	dir, err := renameFree(tmp, filepath.Join(parent, now.UTC().Format(stampLayout)))
	if err != nil {
		return nil, err
	}
	return &Entry{Dir: dir, Meta: meta, Doc: doc}, nil
}

// renameFree renames tmp to base, or base-2, base-3, ... when an entry of the same second exists.
func renameFree(tmp, base string) (string, error) {
	dst := base
	for i := 2; i < 1000; i++ {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			if err := os.Rename(tmp, dst); err != nil {
				return "", fmt.Errorf("register %s: %w", dst, err)
			}
			if d, err := os.Open(filepath.Dir(dst)); err == nil {
				_ = d.Sync()
				_ = d.Close()
			}
			return dst, nil
		}
		dst = fmt.Sprintf("%s-%d", base, i)
	}
	return "", fmt.Errorf("register %s: too many entries in the same second", base)
}

// Resolve finds a baseline by reference: a directory holding baseline.json, or a name whose
// latest entry (by timestamp) under <registry>/inference/<name>/ is used. The snapshot's
// sha256 is verified against baseline.json, so a corrupted or edited snapshot is refused.
func Resolve(registry, ref string) (*Entry, error) {
	if ref == "" {
		return nil, fmt.Errorf("baseline reference is empty: give a name or a registry directory")
	}
	if st, err := os.Stat(ref); err == nil && st.IsDir() {
		if _, err := os.Stat(filepath.Join(ref, EntryFile)); err == nil {
			return Load(ref)
		}
		if !nameRE.MatchString(ref) {
			return nil, fmt.Errorf("%s has no %s: not a baseline entry (give a baseline name, or a <registry>/%s/<name>/<UTC-ts> directory)", ref, EntryFile, Family)
		}
	}
	if !nameRE.MatchString(ref) {
		return nil, fmt.Errorf("baseline %q: neither a baseline directory nor a name", ref)
	}
	parent := filepath.Join(registry, Family, ref)
	entries, err := os.ReadDir(parent)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read registry %s: %w", parent, err)
	}
	var stamps []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if _, err := os.Stat(filepath.Join(parent, e.Name(), EntryFile)); err == nil {
				stamps = append(stamps, e.Name())
			}
		}
	}
	if len(stamps) == 0 {
		return nil, &NotFoundError{Name: ref, Registry: registry, Known: Names(registry)}
	}
	slices.Sort(stamps)
	return Load(filepath.Join(parent, stamps[len(stamps)-1]))
}

// NotFoundError says no baseline of that name is registered (a scheduled sweep's first run).
type NotFoundError struct {
	Name, Registry string
	Known          []string
}

func (e *NotFoundError) Error() string {
	known := "none"
	if len(e.Known) > 0 {
		known = strings.Join(e.Known, ", ")
	}
	return fmt.Sprintf("no baseline named %q in %s (registered: %s); record one with 'perfdag baseline record DIR --name %s --registry %s'",
		e.Name, filepath.Join(e.Registry, Family), known, e.Name, e.Registry)
}

// Names lists the baseline names registered under <registry>/inference, sorted.
func Names(registry string) []string {
	entries, _ := os.ReadDir(filepath.Join(registry, Family))
	var names []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// Load reads one registry entry directory and verifies its snapshot digest.
func Load(dir string) (*Entry, error) {
	metaPath := filepath.Join(dir, EntryFile)
	b, err := os.ReadFile(metaPath)
	if err != nil {
		return nil, fmt.Errorf("read baseline: %w", err)
	}
	e := &Entry{Dir: dir}
	if err := json.Unmarshal(b, &e.Meta); err != nil {
		return nil, fmt.Errorf("decode %s: %w", metaPath, err)
	}
	switch {
	case e.Meta.Family != Family:
		return nil, fmt.Errorf("%s: family %q, want %q", metaPath, e.Meta.Family, Family)
	case e.Meta.Kind != schema.SchemaPerfBench:
		return nil, fmt.Errorf("%s: kind %q, want %s", metaPath, e.Meta.Kind, schema.SchemaPerfBench)
	case e.Meta.SourceSnapshot == "" || strings.ContainsAny(e.Meta.SourceSnapshot, `/\`):
		return nil, fmt.Errorf("%s: source_snapshot %q must name a file beside it", metaPath, e.Meta.SourceSnapshot)
	}
	snapPath := filepath.Join(dir, e.Meta.SourceSnapshot)
	body, err := os.ReadFile(snapPath)
	if err != nil {
		return nil, fmt.Errorf("read baseline snapshot: %w", err)
	}
	sum := sha256.Sum256(body)
	if got := hex.EncodeToString(sum[:]); got != e.Meta.SHA256 {
		return nil, fmt.Errorf("%s: sha256 %s does not match %s's sha256 %s: the snapshot changed after it was registered; record the baseline again", snapPath, got, metaPath, e.Meta.SHA256)
	}
	e.Doc = &schema.PerfBench{}
	if err := json.Unmarshal(body, e.Doc); err != nil {
		return nil, fmt.Errorf("decode %s: %w", snapPath, err)
	}
	if e.Doc.Schema != schema.SchemaPerfBench {
		return nil, fmt.Errorf("%s: schema %q, want %s", snapPath, e.Doc.Schema, schema.SchemaPerfBench)
	}
	return e, nil
}

// DiffDir snapshots a current campaign directory and diffs it against a registered baseline.
// The current cell is cell when set, else the baseline's cell when the campaign has it, else
// the campaign's only measured cell.
func DiffDir(ctx context.Context, base *Entry, current campaigndir.Finished, cell string, tol Tolerances) (*schema.BaselineDiff, error) {
	currentDir := current.Dir
	d, err := readCampaign(ctx, current)
	if err != nil {
		return nil, err
	}
	id, err := d.chooseCell(cell, base.Meta.Cell)
	if err != nil {
		return nil, err
	}
	cur, err := d.snapshot(id)
	if err != nil {
		return nil, err
	}
	diff, err := Diff(base.Doc, cur, tol)
	if err != nil {
		return nil, fmt.Errorf("diff %s against baseline %s: %w", currentDir, base.Dir, err)
	}
	diff.Baseline, diff.BaselineName, diff.BaselineSHA256 = base.Dir, base.Meta.Measurement, base.Meta.SHA256
	diff.Current, diff.CurrentCell = currentDir, id
	return diff, nil
}

// slug turns a model path into a name element: "moonshotai/Kimi-K2.6" → "moonshotai-kimi-k2.6".
func slug(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, s)
	s = strings.Trim(s, "-.")
	if s == "" {
		return "model"
	}
	return s
}

// Package workspace lays out a campaign directory: the timestamped folder, the frozen
// config.yaml a resume reads, run.json (where the file came from, so relative paths still
// resolve), SOURCE.md, summary.md, and a lock so two runs never share one directory.
package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/schema"
)

// Names of the files a campaign directory holds.
const (
	ConfigFile  = "config.yaml"
	RunFile     = "run.json"
	SourceFile  = "SOURCE.md"
	SummaryFile = "summary.md"
	EventsFile  = "events.jsonl"
	lockFile    = ".lock"
)

// Info is run.json: provenance of the frozen config.
type Info struct {
	Campaign   string    `json:"campaign"`
	SourcePath string    `json:"source_path"` // the campaign file as given to `perfdag run`
	BaseDir    string    `json:"base_dir"`    // where its relative paths resolve
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
	Version    string    `json:"perfdag_version"`
}

// Create makes root/<UTC timestamp>-<slug>; the slug was validated as one path element.
func Create(root, slug string, now time.Time) (string, error) {
	if strings.ContainsAny(slug, `/\`) || slug == "" || slug == "." || slug == ".." {
		return "", fmt.Errorf("campaign slug %q cannot name a directory", slug)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", root, err)
	}
	base := filepath.Join(root, now.UTC().Format("20060102T150405Z")+"-"+slug)
	dir := base
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("create campaign dir %s: %w", dir, err)
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

// Freeze writes the campaign file as written (config.yaml) and run.json, atomically.
func Freeze(dir string, src []byte, info Info) error {
	if old, err := ReadInfo(dir); err == nil && !old.Created.IsZero() {
		info.Created = old.Created
	}
	if info.Created.IsZero() {
		info.Created = time.Now().UTC()
	}
	info.Updated = time.Now().UTC()
	if err := checkpoint.WriteFile(filepath.Join(dir, ConfigFile), src); err != nil {
		return err
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return checkpoint.WriteFile(filepath.Join(dir, RunFile), append(b, '\n'))
}

// ReadInfo reads run.json.
func ReadInfo(dir string) (Info, error) {
	var info Info
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		return info, fmt.Errorf("read %s: %w (is %s a campaign directory?)", RunFile, err, dir)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("parse %s: %w", filepath.Join(dir, RunFile), err)
	}
	return info, nil
}

// Lock takes the campaign directory's lock, failing at once when another run holds it.
func Lock(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("campaign %s is being run by another perfdag process", dir)
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// Locked reports whether a run currently holds the directory.
func Locked(dir string) bool {
	f, err := os.Open(filepath.Join(dir, lockFile))
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

// WriteSource writes SOURCE.md: what was measured and with what, never a secret (only the
// names of environment variables, never their values; URLs through redact).
func WriteSource(dir string, c *schema.Campaign, version, host string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Source under test: %s\n\n", c.Campaign)
	fmt.Fprintf(&b, "- perfdag: %s\n- host: %s\n- kind: %s\n", version, host, c.Kind)
	if s := c.Source; s != nil {
		fmt.Fprintf(&b, "- engine: %s %s\n- commit: %s\n- delivery: %s\n- patch: %s\n- url: %s\n",
			s.Engine, s.EngineVersion, s.Commit, s.Delivery, s.Patch, redact.URL(s.URL))
	}
	names := make([]string, 0, len(c.Endpoints))
	for n := range c.Endpoints {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ep := c.Endpoints[n]
		fmt.Fprintf(&b, "\n## Endpoint %s\n\n- url: %s\n- model: %s\n", n, redact.URL(ep.URL), ep.Model)
		if ep.APIKeyEnv != "" {
			fmt.Fprintf(&b, "- api key: from $%s (value not recorded)\n", ep.APIKeyEnv)
		}
		if ep.MetricsURL != "" {
			fmt.Fprintf(&b, "- metrics: %s\n", redact.URL(ep.MetricsURL))
		}
	}
	deliveries := map[string]bool{}
	for _, cell := range c.Cells {
		if cell.Delivery != "" {
			deliveries[cell.Delivery] = true
		}
	}
	if len(deliveries) > 0 {
		var ds []string
		for d := range deliveries {
			ds = append(ds, d)
		}
		sort.Strings(ds)
		fmt.Fprintf(&b, "\n## Delivery\n\nResults are evidence for delivery %s only.\n", strings.Join(ds, ", "))
	}
	return checkpoint.WriteFile(filepath.Join(dir, SourceFile), []byte(b.String()))
}

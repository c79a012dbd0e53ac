package report

import (
	"sort"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/gate"

	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
)

// Files the report reads from a campaign directory.
const (
	ConfigFile   = "config.yaml"
	TPMFile      = "tpm_summary.json"
	ChampionFile = "champion.json"
	SourceFile   = "SOURCE.md"
	DCGMFile     = "dcgm_correlation.json"
	RooflineFile = "roofline_sweep.json"
)

// Load reads what a campaign directory holds. Every part is optional; a part that is present
// but malformed is an error naming its file (and line or field).
// gateVerdicts reads every gate verdict the campaign's checkpoints hold (the latest of each node).
func gateVerdicts(campaignDir string) ([]gate.Verdict, error) {
	recs, err := checkpoint.ReadOnly(campaignDir).LoadAll()
	if err != nil {
		return nil, err
	}
	var out []gate.Verdict
	for _, r := range recs {
		out = append(out, r.Gates...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Gate != out[j].Gate {
			return out[i].Gate < out[j].Gate
		}
		return out[i].Node < out[j].Node
	})
	return out, nil
}

func Load(campaignDir string) (Input, error) {
	in := Input{Dir: campaignDir}
	if st, err := os.Stat(campaignDir); err != nil {
		return in, fmt.Errorf("load campaign %s: %w", campaignDir, err)
	} else if !st.IsDir() {
		return in, fmt.Errorf("load campaign %s: not a directory", campaignDir)
	}

	if b, err := readOptional(filepath.Join(campaignDir, ConfigFile)); err != nil {
		return in, err
	} else if b != nil {
		var c schema.Campaign
		if err := yaml.Unmarshal(b, &c); err != nil {
			return in, fmt.Errorf("load %s: %w", filepath.Join(campaignDir, ConfigFile), err)
		}
		in.Campaign = &c
	}

	rows, err := loadAtlas(filepath.Join(campaignDir, atlas.AtlasFile))
	if err != nil {
		return in, err
	}
	in.Atlas = rows

	if err := loadJSON(filepath.Join(campaignDir, TPMFile), &in.TPM); err != nil {
		return in, err
	}
	if err := loadJSON(filepath.Join(campaignDir, ChampionFile), &in.Champion); err != nil {
		return in, err
	}
	if in.DCGM, err = loadEach[schema.DCGMCorrelation](campaignDir, filepath.Join("cells", "*", DCGMFile)); err != nil {
		return in, err
	}
	if in.Spec, err = loadEach[schema.SpecWindow](campaignDir, filepath.Join("cells", "*", "spec_metrics", "c*.json")); err != nil {
		return in, err
	}
	if in.Roofline, err = loadEach[schema.RooflineSweep](campaignDir, filepath.Join("cells", "*", RooflineFile)); err != nil {
		return in, err
	}
	if b, err := readOptional(filepath.Join(campaignDir, SourceFile)); err != nil {
		return in, err
	} else if b != nil {
		in.Source = parseSource(b)
	}
	if in.Gates, err = gateVerdicts(campaignDir); err != nil {
		return Input{}, err
	}
	return in, nil
}

// readOptional returns nil, nil when the file does not exist.
func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return b, nil
}

func loadAtlas(path string) ([]schema.AtlasRow, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	dec := atlas.NewDecoder(f, path)
	var rows []schema.AtlasRow
	for {
		var r schema.AtlasRow
		err := dec.Next(&r)
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("load atlas: %w", err)
		}
		rows = append(rows, r)
	}
}

// loadJSON decodes path into *dst (allocating it) when the file exists; unknown fields are errors.
func loadJSON[T any](path string, dst **T) error {
	b, err := readOptional(path)
	if err != nil || b == nil {
		return err
	}
	v := new(T)
	if err := decodeStrict(b, v); err != nil {
		return fmt.Errorf("load %s: %w", path, err)
	}
	*dst = v
	return nil
}

func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n")) + 1
			return fmt.Errorf("line %d: %w", line, err)
		}
		return err
	}
	return nil
}

// loadEach decodes every file matching pattern under dir, in path order.
func loadEach[T any](dir, pattern string) ([]T, error) {
	paths, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", pattern, err)
	}
	slices.Sort(paths)
	var out []T
	for _, p := range paths {
		var v *T
		if err := loadJSON(p, &v); err != nil {
			return nil, err
		}
		if v != nil {
			out = append(out, *v)
		}
	}
	return out, nil
}

// sourceLine matches "key: value", "- key: value" and "- **Key:** value" lines of SOURCE.md.
var sourceLine = regexp.MustCompile(`^\s*(?:[-*]\s+)?\**([A-Za-z][A-Za-z0-9 _/-]{0,40}?)\**\s*:\**\s*(.+?)\s*$`)

// parseSource reads the key/value lines of SOURCE.md; keys are lower-cased with spaces as
// underscores ("Engine version" → engine_version). Later lines do not override earlier ones.
func parseSource(b []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		m := sourceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		key := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(m[1])), " ", "_")
		key = strings.ReplaceAll(key, "-", "_")
		val := strings.Trim(strings.TrimSpace(m[2]), "`*")
		if val == "" || strings.HasPrefix(key, "http") {
			continue
		}
		if _, seen := out[key]; !seen {
			out[key] = val
		}
	}
	return out
}

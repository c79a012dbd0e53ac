package campaigndir

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/schema"
)

// What step results offer downstream. A step's result names the files it wrote; a downstream
// step finds them through these interfaces on its upstream results (never by scanning the
// directory, never by importing the kind that wrote them) and reads them through a Reader,
// which checks each file against the digest the journal recorded.

// PointFiles names what one measured point wrote.
type PointFiles struct {
	Cell           string      `json:"cell"`
	Load           schema.Load `json:"load,omitzero"`             // the point (absent in results recorded before points were keyed by load)
	Concurrency    int         `json:"concurrency"`               // its concurrency or in-flight cap
	Records        string      `json:"records,omitempty"`         // per-request records
	Point          string      `json:"point,omitempty"`           // point_v1 statistics
	MetricsSamples string      `json:"metrics_samples,omitempty"` // /metrics readings during the window
	DCGMSamples    string      `json:"dcgm_samples,omitempty"`    // DCGM exporter samples during the window
	Shards         []string    `json:"shards,omitempty"`          // clients: N — each client's records, on its own clock
}

// List is the files in the order a step lists them as outputs.
func (p PointFiles) List() []string {
	var out []string
	for _, f := range append(append([]string{p.MetricsSamples, p.DCGMSamples}, p.Shards...), p.Records, p.Point) {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// PointOutput is a result that measured one point (run-shape, an import).
type PointOutput interface{ PointFiles() PointFiles }

// SpecFiles names a point's server-metric window.
type SpecFiles struct {
	Cell        string      `json:"cell"`
	Load        schema.Load `json:"load,omitzero"`
	Concurrency int         `json:"concurrency"`
	Window      string      `json:"window"` // spec_window_v1
}

// SpecOutput is a result that closed a point's metric window (scrape-spec's second half); ok
// is false for results that did not (its first half).
type SpecOutput interface{ SpecFiles() (SpecFiles, bool) }

// DCGMFiles names a cell's DCGM correlation.
type DCGMFiles struct {
	Cell        string `json:"cell"`
	Correlation string `json:"correlation"` // dcgm_correlation_v1
}

// DCGMOutput is a result that correlated a cell with DCGM telemetry.
type DCGMOutput interface{ DCGMFiles() DCGMFiles }

// CellFiles names a cell some step wrote whole (a roofline import's decode and prefill cells).
type CellFiles struct {
	Cell       string `json:"cell"`
	Normalized string `json:"normalized"`       // the cell's atlas rows
	Status     string `json:"status"`           // full, partial or failed
	Sweep      string `json:"sweep,omitempty"`  // roofline_sweep_v1, when the cell carries one
	Source     string `json:"source,omitempty"` // what produced it (roofline-import, aiperf, ...)
}

// CellsOutput is a result that wrote whole atlas cells for aggregate to include.
type CellsOutput interface{ WrittenCells() []CellFiles }

// Evidence names the analysed files of a campaign: what aggregate wrote and read, and what
// champion-select decided. Steps that consume it (render, strict-publish) pass it on in their
// own results, so a step two hops away reads the same files, never a directory listing.
type Evidence struct {
	Atlas    string      `json:"atlas,omitempty"`
	TPM      string      `json:"tpm,omitempty"`
	Champion string      `json:"champion,omitempty"`
	Report   string      `json:"report,omitempty"`
	Spec     []SpecFiles `json:"spec,omitempty"`
	DCGM     []DCGMFiles `json:"dcgm,omitempty"`
	Cells    []CellFiles `json:"cells,omitempty"`  // whole cells (their sweeps feed the roofline page)
	Sweeps   []string    `json:"sweeps,omitempty"` // cells' sweep_probes.json (SLO searches, stopped lists)
}

// SettleOutput is a result of a step that held a point's endpoint before its run (settle):
// how many seconds it held it (its wall time) and how long it was asked to pause, which the
// point's measurement cost counts.
type SettleOutput interface {
	Settled() (heldS, pausedS float64)
}

// SweepOutput is a result that wrote a cell's sweep_probes.json.
type SweepOutput interface{ SweepFile() string }

// EvidenceOutput is a result that carries (part of) a campaign's evidence.
type EvidenceOutput interface{ Evidence() Evidence }

// Merge folds other into e: named files are taken when e has none, lists are unioned.
func (e Evidence) Merge(other Evidence) Evidence {
	pick := func(a, b string) string {
		if a != "" {
			return a
		}
		return b
	}
	e.Atlas, e.TPM = pick(e.Atlas, other.Atlas), pick(e.TPM, other.TPM)
	e.Champion, e.Report = pick(e.Champion, other.Champion), pick(e.Report, other.Report)
	for _, s := range other.Spec {
		if !slices.Contains(e.Spec, s) {
			e.Spec = append(e.Spec, s)
		}
	}
	for _, d := range other.DCGM {
		if !slices.Contains(e.DCGM, d) {
			e.DCGM = append(e.DCGM, d)
		}
	}
	for _, c := range other.Cells {
		if !slices.Contains(e.Cells, c) {
			e.Cells = append(e.Cells, c)
		}
	}
	for _, s := range other.Sweeps {
		if !slices.Contains(e.Sweeps, s) {
			e.Sweeps = append(e.Sweeps, s)
		}
	}
	return e
}

// Collect merges the evidence of every value that carries some (upstream results, in order).
func Collect(values []any) Evidence {
	var e Evidence
	for _, v := range values {
		if eo, ok := v.(EvidenceOutput); ok {
			e = e.Merge(eo.Evidence())
		}
	}
	return e
}

// Reader reads a campaign's files as its steps recorded them. Digest returns the sha256 the
// journal holds for a step output; a file it does not know was never a finished step's output
// and is refused, and a file whose content no longer matches is refused with ChangedError.
type Reader struct {
	Dir    string
	Digest func(rel string) (string, bool)
}

// ErrNotRecorded says a file is not the output of any finished step of the campaign.
var ErrNotRecorded = errors.New("not the output of any finished step of this campaign")

// Bytes reads one recorded output.
func (r Reader) Bytes(rel string) ([]byte, error) {
	digest, ok := "", false
	if r.Digest != nil {
		digest, ok = r.Digest(rel)
	}
	if !ok {
		return nil, fmt.Errorf("read %s: %w", rel, ErrNotRecorded)
	}
	return ReadFile(r.Dir, rel, digest)
}

// JSON decodes one recorded output strictly into v.
func (r Reader) JSON(rel string, v any) error {
	b, err := r.Bytes(rel)
	if err != nil {
		return err
	}
	return DecodeStrict(rel, b, v)
}

// Has reports whether rel is a recorded output.
func (r Reader) Has(rel string) bool {
	if r.Digest == nil || rel == "" {
		return false
	}
	_, ok := r.Digest(rel)
	return ok
}

// Missing reports whether err means the file is absent or was never recorded (as opposed to
// unreadable or changed).
func Missing(err error) bool {
	return errors.Is(err, ErrNotRecorded) || errors.Is(err, fs.ErrNotExist)
}

// Digests builds a Reader's lookup from output maps (path → sha256), later maps winning.
func Digests(outputs ...map[string]string) func(rel string) (string, bool) {
	all := map[string]string{}
	for _, m := range outputs {
		for k, v := range m {
			all[strings.TrimPrefix(k, "./")] = v
		}
	}
	return func(rel string) (string, bool) {
		d, ok := all[rel]
		return d, ok
	}
}

// Finished is a campaign directory as the verbs that read a finished campaign see it (report,
// publish, baseline, tpm): its campaign (defaults merged), the evidence its steps name, the
// verdicts standing on them, and a reader that checks files against their recorded digests.
// The campaign service builds one only from a directory whose results match its frozen file.
type Finished struct {
	Dir      string
	BaseDir  string // where the campaign file's relative paths resolve
	Spec     *schema.Campaign
	Files    Reader
	Evidence Evidence
	Verdicts []schema.GateVerdict
}

// Unrecorded reads files of a directory that has no journal (a checked-in fixture), trusting
// them as they are. Never use it for a campaign directory.
func Unrecorded(dir string) Reader {
	return Reader{Dir: dir, Digest: func(string) (string, bool) { return "", true }}
}

package campaigndir

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/perfdag/perfdag/schema"
)

// Info is run.json: where the frozen config came from (so relative paths still resolve on a
// resume) and what was measured with what. SOURCE.md is rendered from it for people; programs
// (the report's source page) read this, never the Markdown.
type Info struct {
	Campaign   string         `json:"campaign"`
	SourcePath string         `json:"source_path"` // the campaign file as given to `perfdag run`
	BaseDir    string         `json:"base_dir"`    // where its relative paths resolve
	Created    time.Time      `json:"created"`
	Updated    time.Time      `json:"updated"`
	Version    string         `json:"perfdag_version"`
	Host       string         `json:"host,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	Source     *schema.Source `json:"source,omitempty"`
	Endpoints  []EndpointInfo `json:"endpoints,omitempty"`
	Deliveries []string       `json:"deliveries,omitempty"`
}

// EndpointInfo is one endpoint as the record keeps it: addresses already redacted by the
// caller, the key's variable name only.
type EndpointInfo struct {
	Name       string `json:"name"`
	URL        string `json:"url"`
	Model      string `json:"model"`
	APIKeyEnv  string `json:"api_key_env,omitempty"`
	MetricsURL string `json:"metrics_url,omitempty"`
	Server     string `json:"server,omitempty"` // what the server reported of itself (version, build)
	// TokenBasis is the endpoint's token_basis as configured ("" = the default: server when
	// every valid request carried usage, else o200k_base; each point records the one it used).
	TokenBasis string `json:"token_basis,omitempty"`
	// TokenizerSHA256 is the SHA-256 of the tokenizer file a tokenizer:<file> basis counts with.
	TokenizerSHA256 string `json:"tokenizer_sha256,omitempty"`
}

// WriteInfo writes run.json atomically.
func WriteInfo(dir string, info Info) error {
	b, err := EncodeJSON(info)
	if err != nil {
		return fmt.Errorf("encode %s: %w", runFile, err)
	}
	return WriteFile(RunInfo(dir), b)
}

// ReadInfo reads run.json; its absence means dir is not (yet) a campaign directory.
func ReadInfo(dir string) (Info, error) {
	var info Info
	b, err := os.ReadFile(RunInfo(dir))
	if err != nil {
		return info, fmt.Errorf("read %s: %w (is %s a campaign directory?)", runFile, err, dir)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("parse %s: %w", RunInfo(dir), err)
	}
	return info, nil
}

// WriteSource renders SOURCE.md from run.json's record: what was measured and with what,
// never a secret (only the names of environment variables, never their values).
func WriteSource(dir string, info Info) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Source under test: %s\n\n", info.Campaign)
	fmt.Fprintf(&b, "- perfdag: %s\n- host: %s\n- kind: %s\n", info.Version, info.Host, info.Kind)
	if s := info.Source; s != nil {
		fmt.Fprintf(&b, "- engine: %s %s\n- commit: %s\n- delivery: %s\n- patch: %s\n- url: %s\n",
			s.Engine, s.EngineVersion, s.Commit, s.Delivery, s.Patch, s.URL)
	}
	for _, ep := range info.Endpoints {
		fmt.Fprintf(&b, "\n## Endpoint %s\n\n- url: %s\n- model: %s\n", ep.Name, ep.URL, ep.Model)
		if ep.APIKeyEnv != "" {
			fmt.Fprintf(&b, "- api key: from $%s (value not recorded)\n", ep.APIKeyEnv)
		}
		if ep.MetricsURL != "" {
			fmt.Fprintf(&b, "- metrics: %s\n", ep.MetricsURL)
		}
		basis := ep.TokenBasis
		if basis == "" {
			basis = "server usage when every request reports it, else o200k_base (default; each point.json says which)"
		}
		fmt.Fprintf(&b, "- token basis: %s\n", basis)
		if ep.TokenizerSHA256 != "" {
			fmt.Fprintf(&b, "- tokenizer file sha256: %s\n", ep.TokenizerSHA256)
		}
		if ep.Server != "" {
			fmt.Fprintf(&b, "- server: %s\n", ep.Server)
		}
	}
	if len(info.Deliveries) > 0 {
		fmt.Fprintf(&b, "\n## Delivery\n\nResults are evidence for delivery %s only.\n", strings.Join(info.Deliveries, ", "))
	}
	return WriteFile(Source(dir), []byte(b.String()))
}

// recordMu serialises RecordServer's read-modify-write of run.json within the process (steps
// of one run share it).
var recordMu sync.Mutex

// RecordServer notes what endpoint name's server reported of itself (its version or build, from
// the preflight) in run.json and SOURCE.md; a campaign directory without run.json (a step run
// on its own) or an unknown endpoint is left alone, and an unchanged value writes nothing.
func RecordServer(dir, endpoint, server string) error {
	if server == "" {
		return nil
	}
	recordMu.Lock()
	defer recordMu.Unlock()
	info, err := ReadInfo(dir)
	if err != nil {
		return nil //nolint:nilerr // no run record: nothing to annotate
	}
	changed := false
	for i := range info.Endpoints {
		if info.Endpoints[i].Name == endpoint && info.Endpoints[i].Server != server {
			info.Endpoints[i].Server, changed = server, true
		}
	}
	if !changed {
		return nil
	}
	if err := WriteSource(dir, info); err != nil {
		return err
	}
	return WriteInfo(dir, info)
}

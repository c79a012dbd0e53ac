// Package promscrape fetches and reads Prometheus /metrics endpoints (vLLM, SGLang, Dynamo, DCGM
// exporter): one scrape keeps its raw bytes and its parsed families, lookups go by ordered alias
// lists, counters are diffed per series with resets, and Window turns the scrapes around a point
// into a schema.SpecWindow (speculative-decoding acceptance and the server deltas baselines need).
//
// Parsing is prometheus/common/expfmt's text parser; nothing here parses the format by hand.
package promscrape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/perfdag/perfdag/engine/redact"
)

// AcceptText asks for the classic text format (0.0.4), which every exporter we read speaks and
// which expfmt's text parser reads; OpenMetrics is only a fallback for servers that insist.
const AcceptText = "text/plain;version=0.0.4;q=1.0,*/*;q=0.1"

// DefaultTimeout bounds one fetch when the Fetcher sets none, so a hung server cannot stall a point.
const DefaultTimeout = 10 * time.Second

// MaxBody caps a /metrics body: a larger one is a misconfigured endpoint, not a metrics page.
const MaxBody = 64 << 20

// Scrape is one /metrics capture: the raw bytes (saved beside the run as evidence) and the parsed
// families (what lookups read).
type Scrape struct {
	URL      string                       // redacted: user info is never kept
	At       time.Time                    // when the server answered (response headers arrived)
	Raw      []byte                       // body as received
	Families map[string]*dto.MetricFamily // by family name, as the text parser built them
}

// Parse reads text-format exposition bytes into a Scrape stamped with at.
func Parse(raw []byte, at time.Time) (*Scrape, error) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parse metrics text: %w", err)
	}
	return &Scrape{At: at, Raw: raw, Families: fams}, nil
}

// Fetcher fetches /metrics pages. The zero value works (DefaultClient: same-origin redirects only; DefaultTimeout).
type Fetcher struct {
	Client  *http.Client
	Timeout time.Duration // per fetch; 0 means DefaultTimeout
	// BearerToken, when set, is sent as an Authorization header (gateways in front of a server);
	// it comes from the environment and never appears in an error or a log.
	BearerToken string
}

// Fetch GETs url and parses the body; a non-2xx status, a non-text body or a parse error fails.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*Scrape, error) {
	shown := Redact(rawURL)
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", shown, redactErr(err))
	}
	req.Header.Set("Accept", AcceptText)
	if f.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+f.BearerToken)
	}
	client := f.Client
	if client == nil {
		client = DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", shown, redactErr(err))
	}
	defer resp.Body.Close()
	at := time.Now()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("scrape %s: HTTP %s", shown, resp.Status)
	}
	if err := checkTextFormat(resp.Header.Get("Content-Type")); err != nil {
		return nil, fmt.Errorf("scrape %s: %w", shown, err)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("scrape %s: read body: %w", shown, redactErr(err))
	}
	if len(raw) > MaxBody {
		return nil, fmt.Errorf("scrape %s: body larger than %d bytes", shown, MaxBody)
	}
	s, err := Parse(raw, at)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", shown, err)
	}
	s.URL = shown
	return s, nil
}

// checkTextFormat accepts the classic text format (or no declared type) and refuses the rest with
// the type named, so a protobuf or OpenMetrics body is not misread line by line.
func checkTextFormat(contentType string) error {
	if contentType == "" {
		return nil
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("content type %q: %w", contentType, err)
	}
	if mt != "text/plain" {
		return fmt.Errorf("content type %q is not the Prometheus text format (asked with Accept: %s)", contentType, AcceptText)
	}
	if v := params["version"]; v != "" && v != expfmt.TextVersion && v != expfmt.TextVersion_1_0_0 {
		return fmt.Errorf("content type %q: unknown text format version %s", contentType, v)
	}
	return nil
}

// Redact drops user info and the query from a URL so it can be shown in errors and records.
func Redact(rawURL string) string {
	u, err := url.Parse(redact.URL(rawURL))
	if err != nil {
		return "<unparseable url>"
	}
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	return u.String()
}

// redactErr unwraps a *url.Error, whose text repeats the URL (and any credentials in it): the
// caller's message already names the redacted URL.
func redactErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

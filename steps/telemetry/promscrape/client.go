package promscrape

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// MaxRedirects bounds the redirects a telemetry fetch follows (net/http's own default is 10).
const MaxRedirects = 3

// ErrCrossOrigin is returned when a telemetry endpoint redirects to another scheme, host or
// port: the fetch carries a bearer token that must stay with the configured origin.
var ErrCrossOrigin = errors.New("redirect to another origin refused")

// SameOrigin is a CheckRedirect that follows at most MaxRedirects redirects, and only those
// staying on the first request's scheme, host and port (e.g. /metrics → /metrics/).
func SameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return fmt.Errorf("more than %d redirects", MaxRedirects)
	}
	first := via[0].URL
	if !strings.EqualFold(req.URL.Scheme, first.Scheme) || !strings.EqualFold(canonicalHost(req), canonicalHost(via[0])) {
		return fmt.Errorf("%w: %s", ErrCrossOrigin, Redact(req.URL.Scheme+"://"+req.URL.Host))
	}
	return nil
}

// canonicalHost is host:port with the scheme's default port filled in.
func canonicalHost(r *http.Request) string {
	if p := r.URL.Port(); p != "" {
		return r.URL.Hostname() + ":" + p
	}
	port := "80"
	if strings.EqualFold(r.URL.Scheme, "https") {
		port = "443"
	}
	return r.URL.Hostname() + ":" + port
}

// DefaultClient is the client telemetry fetches use when none is given: net/http's default
// transport, same-origin redirects only.
var DefaultClient = &http.Client{CheckRedirect: SameOrigin}

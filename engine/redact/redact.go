// Package redact is the one place secrets are taken out of text perfdag writes or prints: URL
// userinfo passwords (also when they hold / # ? and so do not parse), password= in key=value
// DSNs and query strings, Authorization headers and bearer tokens, and secret values read from
// the environment (API keys) registered with Secret. Every writer of SOURCE.md, fingerprint
// documents, the journal, events, logs, errors and the CLI's output goes through String (or
// URL for a single value), so a new secret form is handled in one place.
package redact

import (
	"io"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Mask replaces every secret.
const Mask = "xxxxx"

// rule is a pattern, the group holding the secret it finds, and words the text must hold
// for the pattern to have a chance (checked first: most text holds no secret, and events are
// redacted one by one by the thousand).
type rule struct {
	re    *regexp.Regexp
	group int
	needs func(lower string) bool
}

func hasAll(subs ...string) func(lower string) bool {
	return func(lower string) bool {
		for _, sub := range subs {
			if !strings.Contains(lower, sub) {
				return false
			}
		}
		return true
	}
}

func hasAny(subs ...string) func(lower string) bool {
	return func(lower string) bool {
		for _, sub := range subs {
			if strings.Contains(lower, sub) {
				return true
			}
		}
		return false
	}
}

var rules = []rule{
	// scheme://user:password@ — the password runs to the last @ before whitespace or a quote,
	// so an unescaped / # ? @ in it is still covered (over-redacting a path that holds an @ is
	// the safe mistake).
	{regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:"'<>]*:([^\s"'<>]*)@`), 1, hasAll("://", "@")},
	// password=... in a key=value DSN (quoted or not) or a query string.
	{regexp.MustCompile(`(?i)\b(?:(?:ssl)?password|passwd|pwd)\s*=\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s&;,'"]*)`), 1, func(l string) bool {
		return strings.Contains(l, "=") && (strings.Contains(l, "pass") || strings.Contains(l, "pwd"))
	}},
	// ?token=... and friends, in query strings only.
	{regexp.MustCompile(`(?i)[?&](?:access_token|api_key|apikey|token|secret|key)=([^\s&#'"]*)`), 1, func(l string) bool { return strings.Contains(l, "=") && strings.ContainsAny(l, "?&") }},
	// Authorization: ... headers (the whole value) and bare bearer or basic credentials.
	{regexp.MustCompile(`(?i)\b(?:(?:proxy-)?authorization|x-api-key|api-key)\s*:\s*([^\r\n"]*)`), 1, hasAny("authorization", "api-key")},
	{regexp.MustCompile(`(?i)\b(?:bearer|basic)\s+([A-Za-z0-9\-._~+/]+=*)`), 1, hasAny("bearer", "basic")},
}

var (
	mu      sync.RWMutex
	secrets []string // longest first, so a secret containing another is masked whole
)

// MinSecret is the shortest registered value masked as it stands: shorter values would mask
// ordinary words and numbers.
const MinSecret = 6

// Secret registers a value read from the environment (an API key, a token, a password) so
// that every later String masks it wherever it appears. Short values are ignored.
func Secret(v string) {
	if len(v) < MinSecret {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range secrets {
		if s == v {
			return
		}
	}
	secrets = append(secrets, v)
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
}

// URLSecrets registers the password of a URL or DSN (raw and percent-decoded), so it is
// masked even where it appears without its URL, e.g. in a driver's error.
func URLSecrets(raw string) {
	for _, r := range rules[:2] {
		for _, m := range r.re.FindAllStringSubmatch(raw, -1) {
			pw := strings.Trim(m[r.group], `'"`)
			Secret(pw)
			if dec, err := url.PathUnescape(pw); err == nil {
				Secret(dec)
			}
		}
	}
}

// String masks every secret form in free text: errors, log lines, messages, documents.
func String(s string) string {
	return apply(s, func(secret string) string {
		if strings.Trim(secret, "*") == "" {
			return secret // nothing, or already masked by Line
		}
		return Mask
	})
}

// Line masks secrets with as many * as they have characters, so a source excerpt keeps its
// columns and a caret under it still points at the right place.
func Line(s string) string {
	return apply(s, func(secret string) string { return strings.Repeat("*", utf8.RuneCountInString(secret)) })
}

// URL masks a single URL or DSN value for display: the same rules as String.
func URL(raw string) string { return String(raw) }

func apply(s string, mask func(string) string) string {
	if s == "" {
		return s
	}
	lower := strings.ToLower(s)
	for _, r := range rules {
		if !r.needs(lower) {
			continue
		}
		idx := r.re.FindAllStringSubmatchIndex(s, -1)
		if idx == nil {
			continue
		}
		var b strings.Builder
		last := 0
		for _, m := range idx {
			from, to := m[2*r.group], m[2*r.group+1]
			b.WriteString(s[last:from])
			b.WriteString(mask(s[from:to]))
			last = to
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	mu.RLock()
	defer mu.RUnlock()
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, mask(sec))
		}
	}
	return s
}

// Suspect reports cheaply whether text may hold a secret String would mask; callers that
// must re-encode a document to redact it (fingerprints) skip the work when it cannot.
func Suspect(b []byte) bool {
	s := string(b)
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		return true
	}
	lower := strings.ToLower(s)
	for _, w := range []string{"passw", "pwd", "bearer", "basic ", "authorization", "api-key", "token=", "key=", "secret="} {
		if strings.Contains(lower, w) {
			return true
		}
	}
	mu.RLock()
	defer mu.RUnlock()
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			return true
		}
	}
	return false
}

// Error returns err with its text redacted; errors.Is and errors.As still see the original
// chain. Errors without secrets are returned as they are.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := String(msg); red != msg {
		return &redacted{msg: red, err: err}
	}
	return err
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }

// Writer redacts everything written through it, write by write: for streams written a line
// or a message at a time (the CLI's stdout and stderr, node logs).
func Writer(w io.Writer) io.Writer { return &writer{w: w} }

type writer struct{ w io.Writer }

// Underlying is the wrapped writer, for callers that ask whether it is a terminal.
func (r *writer) Underlying() io.Writer { return r.w }

func (r *writer) Write(p []byte) (int, error) {
	red := String(string(p))
	if red == string(p) {
		return r.w.Write(p)
	}
	if _, err := io.WriteString(r.w, red); err != nil {
		return 0, err
	}
	return len(p), nil
}

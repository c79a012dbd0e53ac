// Package webui is `perfdag serve`: a read-only web UI over campaign directories. The files
// are the truth: every page is read from a directory through the campaign-directory contract
// (the campaign service's status and inspection, the recorded outputs checked against their
// journal digests), never from a cache. Node states follow a running campaign live over
// server-sent events driven by file notifications on its events.jsonl, never a polling loop.
// Assets are embedded; nothing is fetched from the network at view time.
package webui

import (
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/steps/report/svgchart"
)

//go:embed assets/*.html assets/*.js assets/*.css
var assets embed.FS

// Options configure a Server.
type Options struct {
	// Roots are the directories served: each a campaign directory, or a folder holding them.
	Roots []string
	// Service reads campaigns (status, inspection) with the step registry.
	Service *campaign.Service
	// Token, when set, is required of every request (Authorization: Bearer, the cookie it sets,
	// or ?token= once); when empty, only loopback Host names are answered (no DNS rebinding).
	// It is trimmed and must be at least MinTokenLen characters (CheckToken).
	Token string
	// Registry is the baseline registry folder for the comparison with a named baseline.
	Registry string
}

// Server is the web UI's HTTP handler.
type Server struct {
	opts  Options
	pages *template.Template
	hub   *hub
	mux   *http.ServeMux
}

// cookieName carries the token after a ?token= link was followed once.
const cookieName = "perfdag_token"

// MinTokenLen is the shortest token serve accepts: a guessable one guards nothing.
const MinTokenLen = 16

// CheckToken trims a token as --token-file's content is and refuses one shorter than
// MinTokenLen; name is how the user gave it (a flag), for the message.
func CheckToken(name, token string) (string, error) {
	token = strings.TrimSpace(token)
	switch n := utf8.RuneCountInString(token); {
	case n == 0:
		return "", fmt.Errorf("%s is empty: give a token of at least %d characters (e.g. the output of openssl rand -hex 16)", name, MinTokenLen)
	case n < MinTokenLen:
		unit := "characters"
		if n == 1 {
			unit = "character"
		}
		return "", fmt.Errorf("%s is %d %s: give at least %d characters (spaces around it do not count; e.g. the output of openssl rand -hex 16)", name, n, unit, MinTokenLen)
	}
	return token, nil
}

// New builds the server; Close releases its file watcher.
func New(o Options) (*Server, error) {
	if o.Service == nil {
		return nil, errors.New("web UI: no campaign service to read campaigns with (Options.Service)")
	}
	if o.Token != "" {
		t, err := CheckToken("the token", o.Token)
		if err != nil {
			return nil, err
		}
		o.Token = t
	}
	pages, err := template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("parse page templates: %w", err)
	}
	h, err := newHub()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, pages: pages, hub: h, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /{$}", s.list)
	s.mux.HandleFunc("GET /c/{id}/{$}", s.campaign)
	s.mux.HandleFunc("GET /c/{id}/live", s.live)
	s.mux.HandleFunc("GET /c/{id}/nodes", s.nodes)
	s.mux.HandleFunc("GET /c/{id}/point/{cell}/{point}", s.point)
	s.mux.HandleFunc("GET /c/{id}/file/{rel...}", s.file)
	s.mux.HandleFunc("GET /c/{id}/baseline", s.baseline)
	s.mux.HandleFunc("GET /c/{id}/report", s.report)
	s.mux.HandleFunc("GET /c/{id}/verdict", s.verdict)
	s.mux.HandleFunc("GET /h/{id}/{$}", s.historyPage)
	s.mux.HandleFunc("GET /compare", s.compare)
	s.mux.HandleFunc("GET /static/{name}", s.static)
	return s, nil
}

// Close stops the file watcher; open live streams end.
func (s *Server) Close() error { return s.hub.close() }

// ServeHTTP answers one request: authorization, security headers, then the route.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	if !s.authorized(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// authorized checks the token (setting its cookie and dropping it from the address when it
// came as ?token=), or, without a token, that the Host is a loopback name.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.Token == "" {
		if !loopbackHost(r.Host) {
			http.Error(w, "this server answers loopback names only (serve with --token to listen elsewhere)", http.StatusForbidden)
			return false
		}
		return true
	}
	if q := r.URL.Query().Get("token"); q != "" && s.tokenIs(q) {
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		u := *r.URL
		v := u.Query()
		v.Del("token")
		u.RawQuery = v.Encode()
		loc := u.RequestURI()
		if !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") {
			loc = "/" // never a redirect off this server (//host is another site)
		}
		http.Redirect(w, r, loc, http.StatusSeeOther)
		return false
	}
	if tok, ok := bearer(r.Header.Get("Authorization")); ok && s.tokenIs(tok) {
		return true
	}
	if c, err := r.Cookie(cookieName); err == nil && s.tokenIs(c.Value) {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="perfdag"`)
	http.Error(w, "a token is required: open the address perfdag serve printed (it carries ?token=), or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
	return false
}

// bearer is the token of an Authorization header of the Bearer scheme, its name in any case
// (RFC 7235: the scheme is case-insensitive) followed by one or more spaces.
func bearer(auth string) (string, bool) {
	scheme, tok, ok := strings.Cut(auth, " ")
	tok = strings.TrimLeft(tok, " ")
	return tok, ok && strings.EqualFold(scheme, "Bearer") && tok != ""
}

func (s *Server) tokenIs(v string) bool {
	return subtle.ConstantTimeCompare([]byte(v), []byte(s.opts.Token)) == 1
}

// loopbackHost reports whether a Host header names this machine's loopback.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Loopback reports whether addr (host:port) listens on loopback only.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return loopbackHost(host)
}

// static serves an embedded asset.
func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, err := fs.ReadFile(assets, "assets/"+name)
	switch name { // the chart package's script and style, served as files: the CSP allows no inline ones
	case "svgchart.js":
		b, err = []byte(svgchart.Script), nil
	case "svgchart.css":
		b, err = []byte(svgchart.Style), nil
	}
	if err != nil || strings.HasSuffix(name, ".html") {
		http.NotFound(w, r)
		return
	}
	switch {
	case strings.HasSuffix(name, ".js"):
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case strings.HasSuffix(name, ".css"):
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	}
	w.Header().Set("Cache-Control", "max-age=300")
	_, _ = w.Write(b)
}

// render executes a page template; a failure is a plain-text 500, its text escaped by
// http.Error's content type.
func (s *Server) render(w http.ResponseWriter, name string, data any) {
	var b strings.Builder
	if err := s.pages.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

// fail shows an error page: the message (which may quote campaign files) is escaped.
func (s *Server) fail(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	var b strings.Builder
	if e := s.pages.ExecuteTemplate(&b, "error.html", map[string]any{"Code": code, "Error": err.Error()}); e != nil {
		return
	}
	_, _ = w.Write([]byte(b.String()))
}

// campaignURL is a campaign page's address.
func campaignURL(id string) string { return "/c/" + url.PathEscape(id) + "/" }

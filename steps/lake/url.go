package lake

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
)

// DefaultURL is the lake a campaign publishes to when its publish: block names none: an
// embedded SQLite file beside the campaign file.
const DefaultURL = "sqlite://lake.db"

// Drivers a lake URL can select.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// Location is a parsed lake URL. It never prints its password: String is the redacted form.
type Location struct {
	Driver string // sqlite or postgres
	Path   string // sqlite: the database file (absolute when a base directory was given)

	dsn      string // postgres: the URL as given, handed to pgx (may hold a password)
	password string // postgres: the URL's password, scrubbed from driver errors
	redacted string
}

// String is the URL without its password: safe for logs, errors and the receipt.
func (l Location) String() string { return l.redacted }

// userinfo matches the password part of a URL, for redacting text that failed to parse.
var userinfo = regexp.MustCompile(`(://[^:/@?#]*):[^@/?#]*@`)

// Redact removes a password from a lake URL (userinfo or a password= query parameter). It
// works on text that does not parse too, so error messages can quote what the user wrote.
func Redact(raw string) string {
	if loc, err := ParseURL(raw, ""); err == nil {
		return loc.redacted
	}
	return redactText(raw)
}

// redactText is Redact for text that does not parse: the password patterns are cut out.
func redactText(raw string) string {
	s := userinfo.ReplaceAllString(raw, "$1:xxxxx@")
	if i := strings.IndexAny(s, "?"); i >= 0 && strings.Contains(strings.ToLower(s[i:]), "password") {
		s = s[:i] + "?…"
	}
	return s
}

// ParseURL reads sqlite://path (relative paths resolve against baseDir when it is set) or
// postgres://user[:password]@host[:port]/db[?sslmode=...] (postgresql:// too; a password
// may also come from PGPASSWORD or ~/.pgpass, which pgx reads).
func ParseURL(raw, baseDir string) (Location, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	switch {
	case raw == "":
		return Location{}, fmt.Errorf("lake URL is empty: write sqlite://lake.db or postgres://user@host:5432/db")
	case !ok && strings.Contains(raw, "@"):
		return Location{}, fmt.Errorf("lake URL has no scheme: write postgres://user@host:5432/db (the password in PGPASSWORD)")
	case !ok:
		return Location{}, fmt.Errorf("lake URL %q has no scheme: write sqlite://%s or postgres://user@host:5432/db", raw, strings.TrimPrefix(raw, "sqlite:"))
	}
	switch strings.ToLower(scheme) {
	case "sqlite":
		return parseSQLite(raw, rest, baseDir)
	case "postgres", "postgresql":
		return parsePostgres(raw)
	}
	return Location{}, fmt.Errorf("lake URL %q: scheme %q is not supported: use sqlite:// (embedded) or postgres:// (a team's server)", redactText(raw), scheme)
}

func parseSQLite(raw, path, baseDir string) (Location, error) {
	switch {
	case path == "":
		return Location{}, fmt.Errorf("lake URL %q names no file: write sqlite://lake.db (beside the campaign file) or sqlite:///abs/path/lake.db", raw)
	case strings.ContainsAny(path, "?#"):
		return Location{}, fmt.Errorf("lake URL %q: a sqlite:// URL takes a file path only, no ?query or #fragment", raw)
	case strings.HasSuffix(path, "/"):
		return Location{}, fmt.Errorf("lake URL %q names a directory: add a file name, e.g. %slake.db", raw, raw)
	}
	if !filepath.IsAbs(path) && baseDir != "" {
		path = filepath.Join(baseDir, path)
	}
	path = filepath.Clean(path)
	return Location{Driver: DriverSQLite, Path: path, redacted: "sqlite://" + path}, nil
}

func parsePostgres(raw string) (Location, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the whole URL, password included: say what is wrong without it.
		var why string
		if ue, ok := err.(*url.Error); ok {
			why = ue.Err.Error()
		}
		return Location{}, fmt.Errorf("lake URL %q does not parse as a URL: %s", redactText(raw), why)
	}
	if u.Host == "" && u.Query().Get("host") == "" {
		return Location{}, fmt.Errorf("lake URL %q names no host: write postgres://user@host:5432/db", redactText(raw))
	}
	if strings.Trim(u.Path, "/") == "" && u.Query().Get("dbname") == "" {
		return Location{}, fmt.Errorf("lake URL %q names no database: write postgres://user@%s/lake", redactText(raw), u.Host)
	}
	loc := Location{Driver: DriverPostgres, dsn: raw}
	red := *u
	if u.User != nil {
		loc.password, _ = u.User.Password()
		red.User = url.User(u.User.Username())
	}
	q := u.Query()
	if pw := q.Get("password"); pw != "" {
		loc.password = pw
		q.Del("password")
		red.RawQuery = q.Encode()
	}
	loc.redacted = red.String()
	return loc, nil
}

// scrubbed is a driver error with the password taken out of its text.
type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }

// scrub removes the password from an error's text; drivers should not echo it, but a
// password in a log is a leak nobody can take back.
func (l Location) scrub(err error) error {
	if err == nil || l.password == "" || !strings.Contains(err.Error(), l.password) {
		return err
	}
	return &scrubbed{msg: strings.ReplaceAll(err.Error(), l.password, "xxxxx"), err: err}
}

package lake

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/perfdag/perfdag/engine/redact"
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
	redacted string
}

// String is the URL with its password masked: safe for logs, errors and the receipt.
func (l Location) String() string { return l.redacted }

// Redact masks the password of a lake URL or DSN in any form (userinfo, also holding / # ?,
// a password= query parameter or key=value pair): engine/redact's one rule set. It works on
// text that does not parse too, so error messages can quote what the user wrote.
func Redact(raw string) string { return redact.URL(raw) }

// ParseURL reads sqlite://path (relative paths resolve against baseDir when it is set) or
// postgres://user[:password]@host[:port]/db[?sslmode=...] (postgresql:// too; a password
// may also come from PGPASSWORD or ~/.pgpass, which pgx reads).
func ParseURL(raw, baseDir string) (Location, error) {
	redact.URLSecrets(raw) // whatever the form, its password is masked wherever it turns up
	scheme, rest, ok := strings.Cut(raw, "://")
	switch {
	case raw == "":
		return Location{}, fmt.Errorf("lake URL is empty: write sqlite://lake.db or postgres://user@host:5432/db")
	case !ok && (strings.Contains(raw, "@") || strings.Contains(raw, "=")):
		return Location{}, fmt.Errorf("lake URL has no scheme (a key=value DSN is not accepted): write postgres://user@host:5432/db (the password in PGPASSWORD)")
	case !ok:
		return Location{}, fmt.Errorf("lake URL %q has no scheme: write sqlite://%s or postgres://user@host:5432/db", redact.URL(raw), strings.TrimPrefix(raw, "sqlite:"))
	}
	switch strings.ToLower(scheme) {
	case "sqlite":
		return parseSQLite(raw, rest, baseDir)
	case "postgres", "postgresql":
		return parsePostgres(raw)
	}
	return Location{}, fmt.Errorf("lake URL %q: scheme %q is not supported: use sqlite:// (embedded) or postgres:// (a team's server)", redact.URL(raw), scheme)
}

func parseSQLite(raw, path, baseDir string) (Location, error) {
	raw = redact.URL(raw) // only quoted below, never opened
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
		// url.Error quotes the URL, and its reason quotes a piece of it ("invalid port
		// \":s3c\""), which may be half a password: say what to do instead.
		return Location{}, fmt.Errorf("lake URL %q does not parse as a URL: a password holding / # ? or @ must be percent-encoded (%%2F %%23 %%3F %%40), or set it in PGPASSWORD", redact.URL(raw))
	}
	if u.Host == "" && u.Query().Get("host") == "" {
		return Location{}, fmt.Errorf("lake URL %q names no host: write postgres://user@host:5432/db", redact.URL(raw))
	}
	if strings.Trim(u.Path, "/") == "" && u.Query().Get("dbname") == "" {
		return Location{}, fmt.Errorf("lake URL %q names no database: write postgres://user@%s/lake", redact.URL(raw), u.Host)
	}
	// The lake's name is its URL without the password (a receipt names the lake, not the
	// credential); whatever else could hold one goes through engine/redact.
	shown := *u
	if u.User != nil {
		shown.User = url.User(u.User.Username())
	}
	return Location{Driver: DriverPostgres, dsn: raw, redacted: redact.URL(shown.String())}, nil
}

// scrub masks the password in a driver's error: drivers should not echo it, but a password
// in a log is a leak nobody can take back. ParseURL registered it with engine/redact.
func (l Location) scrub(err error) error { return redact.Error(err) }

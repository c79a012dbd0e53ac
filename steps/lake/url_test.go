package lake_test

import (
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/lake"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		name, raw, base string
		driver, path    string
		redacted        string
		err             string // substring of the error; "" when valid
	}{
		{name: "relative sqlite resolves against the campaign dir", raw: "sqlite://lake.db", base: "/camp",
			driver: "sqlite", path: "/camp/lake.db", redacted: "sqlite:///camp/lake.db"},
		{name: "relative subdir", raw: "sqlite://data/lake.db", base: "/camp", driver: "sqlite", path: "/camp/data/lake.db", redacted: "sqlite:///camp/data/lake.db"},
		{name: "dot-dot", raw: "sqlite://../lakes/x.db", base: "/camp/a", driver: "sqlite", path: "/camp/lakes/x.db", redacted: "sqlite:///camp/lakes/x.db"},
		{name: "absolute sqlite", raw: "sqlite:///var/lake.db", base: "/camp", driver: "sqlite", path: "/var/lake.db", redacted: "sqlite:///var/lake.db"},
		{name: "no base keeps it relative", raw: "sqlite://lake.db", driver: "sqlite", path: "lake.db", redacted: "sqlite://lake.db"},
		{name: "postgres password is redacted", raw: "postgres://bench:s3cret@db.internal:5432/lake?sslmode=disable",
			driver: "postgres", redacted: "postgres://bench@db.internal:5432/lake?sslmode=disable"},
		{name: "postgresql scheme", raw: "postgresql://bench@db:5432/lake", driver: "postgres", redacted: "postgresql://bench@db:5432/lake"},
		{name: "password query parameter is redacted", raw: "postgres://db:5432/lake?user=bench&password=s3cret",
			driver: "postgres", redacted: "postgres://db:5432/lake?user=bench&password=xxxxx"},
		{name: "empty", raw: "", err: "lake URL is empty"},
		{name: "no scheme", raw: "lake.db", err: `has no scheme: write sqlite://lake.db`},
		{name: "no scheme with credentials does not echo them", raw: "bench:s3cret@db/lake", err: "has no scheme"},
		{name: "unknown scheme", raw: "mysql://db/lake", err: `scheme "mysql" is not supported`},
		{name: "sqlite without file", raw: "sqlite://", err: "names no file"},
		{name: "sqlite with query", raw: "sqlite://lake.db?mode=ro", err: "no ?query"},
		{name: "sqlite directory", raw: "sqlite://lakes/", err: "names a directory"},
		{name: "postgres without database", raw: "postgres://bench:s3cret@db:5432", err: "names no database"},
		{name: "postgres without host", raw: "postgres:///lake", err: "names no host"},
		{name: "bad port does not echo the password", raw: "postgres://bench:s3cret@db:port/lake", err: "does not parse as a URL"},
		{name: "a password holding / # ? is not echoed, even in part", raw: "postgres://bench:s3cret/#?x@db:5432/lake", err: `"postgres://bench:xxxxx@db:5432/lake" does not parse as a URL: a password holding / # ? or @ must be percent-encoded`},
		{name: "sqlite with a password query", raw: "sqlite://lake.db?password=s3cret", err: `"sqlite://lake.db?password=xxxxx": a sqlite:// URL takes a file path only`},
		{name: "key=value DSN", raw: "host=db user=bench password=s3cret dbname=lake", err: "a key=value DSN is not accepted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := lake.ParseURL(tt.raw, tt.base)
			if tt.err != "" {
				if err == nil {
					t.Fatalf("ParseURL(%q) = %v, want an error with %q", tt.raw, loc, tt.err)
				}
				if !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %q lacks %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "s3c") {
					t.Errorf("error leaks the password: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseURL(%q): %v", tt.raw, err)
			}
			if loc.Driver != tt.driver || loc.Path != tt.path || loc.String() != tt.redacted {
				t.Errorf("got driver %q path %q redacted %q, want %q %q %q", loc.Driver, loc.Path, loc.String(), tt.driver, tt.path, tt.redacted)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"postgres://u:pw@h:5432/db", "postgres://u:xxxxx@h:5432/db"},
		{"postgres://u:pw@h:bad/db", "postgres://u:xxxxx@h:bad/db"},
		{"postgres://h/db?password=pw", "postgres://h/db?password=xxxxx"},
		{"postgres://u:p/w#x?y@h:5432/db", "postgres://u:xxxxx@h:5432/db"},
		{"host=h user=u password=pw dbname=db", "host=h user=u password=xxxxx dbname=db"},
		{"sqlite:///tmp/lake.db?password=pw", "sqlite:///tmp/lake.db?password=xxxxx"},
		{"sqlite://lake.db", "sqlite://lake.db"},
		{"weird://u:pw@h/x?password=pw", "weird://u:xxxxx@h/x?password=xxxxx"},
	}
	for _, tt := range tests {
		if got := lake.Redact(tt.raw); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.raw, got, tt.want)
		}
		if strings.Contains(lake.Redact(tt.raw), "pw@") || strings.Contains(lake.Redact(tt.raw), "=pw") {
			t.Errorf("Redact(%q) keeps the password", tt.raw)
		}
	}
}

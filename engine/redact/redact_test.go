package redact

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://bench:s3cr3t@10.0.0.1:8000/v1", "http://bench:xxxxx@10.0.0.1:8000/v1"},
		{`Post "http://bench:s3cr3t@h/v1/chat/completions": dial tcp: refused`, `Post "http://bench:xxxxx@h/v1/chat/completions": dial tcp: refused`},
		{"postgres://bench:p/a#s?w@rd@db:5432/lake?sslmode=disable", "postgres://bench:xxxxx@db:5432/lake?sslmode=disable"},
		{"postgres://:only@db/lake", "postgres://:xxxxx@db/lake"},
		{"host=db user=bench password=s3cr3t dbname=lake", "host=db user=bench password=xxxxx dbname=lake"},
		{"host=db password='s3 cr\\'3t' dbname=lake", "host=db password=xxxxx dbname=lake"},
		{"PASSWORD = s3cr3t", "PASSWORD = xxxxx"},
		{"sqlite:///tmp/lake.db?password=s3cr3t", "sqlite:///tmp/lake.db?password=xxxxx"},
		{"postgres://db/lake?user=bench&password=s3cr3t&sslmode=disable", "postgres://db/lake?user=bench&password=xxxxx&sslmode=disable"},
		{"postgres://db/lake?sslpassword=s3cr3t", "postgres://db/lake?sslpassword=xxxxx"},
		{"http://prom:9090/api?access_token=s3cr3t&q=up", "http://prom:9090/api?access_token=xxxxx&q=up"},
		{"Authorization: Bearer sk-s3cr3t", "Authorization: xxxxx"},
		{"sent bearer sk-s3cr3t.x_y to h", "sent bearer xxxxx to h"},
		{"x-api-key: s3cr3t", "x-api-key: xxxxx"},
		// nothing to redact
		{"http://vllm.svc:8000/v1", "http://vllm.svc:8000/v1"},
		{"bench@host", "bench@host"},
		{"num_prompts=30 output_tokens: 64 tokens=5", "num_prompts=30 output_tokens: 64 tokens=5"},
		{"the password is read from PGPASSWORD", "the password is read from PGPASSWORD"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := String(String(tt.in)); got != tt.want {
			t.Errorf("String is not idempotent on %q: %q", tt.in, got)
		}
	}
}

func TestLineKeepsColumns(t *testing.T) {
	in := `  lake: "postgres://bench:s3cr3t@db/lake"  # password=hunter22`
	got := Line(in)
	if len(got) != len(in) || strings.Contains(got, "s3cr3t") || strings.Contains(got, "hunter22") {
		t.Fatalf("Line(%q) = %q", in, got)
	}
	if want := `  lake: "postgres://bench:******@db/lake"  # password=********`; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

func TestRegisteredSecrets(t *testing.T) {
	Secret("sk-perfdag-registered-0123")
	Secret("abc") // too short to mask safely: ignored
	URLSecrets("postgres://bench:p%2Fss-w0rd@db/lake")
	for in, want := range map[string]string{
		`{"error": "invalid key sk-perfdag-registered-0123"}`: `{"error": "invalid key xxxxx"}`,
		"abc stays":                           "abc stays",
		"driver said: bad password p/ss-w0rd": "driver said: bad password xxxxx",
		"escaped p%2Fss-w0rd too":             "escaped xxxxx too",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	if !Suspect([]byte("x sk-perfdag-registered-0123")) || Suspect([]byte(`{"concurrency": 8, "url": "http://h:8000"}`)) {
		t.Error("Suspect misjudges")
	}
}

func TestErrorKeepsTheChain(t *testing.T) {
	base := fmt.Errorf("open http://u:s3cr3t@h/x: %w", fs.ErrNotExist)
	err := Error(base)
	if err.Error() != "open http://u:xxxxx@h/x: file does not exist" || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Error = %q (is ErrNotExist: %v)", err, errors.Is(err, fs.ErrNotExist))
	}
	plain := errors.New("nothing secret")
	if Error(plain) != plain || Error(nil) != nil {
		t.Error("an error without secrets must come back as it is")
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := Writer(&b)
	in := "scrape http://u:s3cr3t@h/metrics failed\n"
	if n, err := fmt.Fprint(w, in); err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if b.String() != "scrape http://u:xxxxx@h/metrics failed\n" {
		t.Errorf("wrote %q", b.String())
	}
}

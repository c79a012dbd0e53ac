// Package laketest gives lake and publish tests a real PostgreSQL server and deterministic
// campaigns to publish. The server comes from Debian's postgresql package: the test starts its
// own on loopback and removes it afterwards; without the binaries the test skips (fails in CI).
package laketest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/testkit"
)

// PG is a running throwaway PostgreSQL server with one database.
type PG struct {
	Host     string
	Port     int
	User     string
	Password string
	DB       string
}

// URL is the lake URL with the password in it.
func (p *PG) URL() string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(p.User, p.Password),
		Host: net.JoinHostPort(p.Host, strconv.Itoa(p.Port)), Path: "/" + p.DB, RawQuery: "sslmode=disable"}
	return u.String()
}

// URLNoPassword is the lake URL without a password (it must come from PGPASSWORD).
func (p *PG) URLNoPassword() string {
	u := url.URL{Scheme: "postgres", User: url.User(p.User),
		Host: net.JoinHostPort(p.Host, strconv.Itoa(p.Port)), Path: "/" + p.DB, RawQuery: "sslmode=disable"}
	return u.String()
}

// serverBin finds the directory holding initdb and pg_ctl: Debian's versioned
// /usr/lib/postgresql/<v>/bin (newest first), else the PATH.
func serverBin() (string, bool) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d, true
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if isExec(filepath.Join(d, "pg_ctl")) {
			return d, true
		}
	}
	return "", false
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// Postgres starts a PostgreSQL server for the test on 127.0.0.1 (a free port, its socket in a
// temp directory), with password authentication (scram-sha-256) for a fresh user and one
// fresh database, and stops and removes it when the test ends. initdb refuses to run as root:
// as root the server runs as the postgres user (runuser), in a temp directory it owns.
func Postgres(t testing.TB) *PG {
	t.Helper()
	bin, ok := serverBin()
	if !ok {
		testkit.Unavailable(t, "PostgreSQL server binaries (initdb, pg_ctl) are not installed (Debian: apt-get install postgresql)")
		return nil
	}
	var wrap []string // prefix running a server binary as a non-root user
	var owner *user.User
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			testkit.Unavailable(t, "running as root, and there is no postgres user to run initdb as (Debian's postgresql package creates it)")
			return nil
		}
		runuser, err := exec.LookPath("runuser")
		if err != nil {
			testkit.Unavailable(t, "running as root, and runuser (util-linux) is missing to run initdb as the postgres user")
			return nil
		}
		wrap, owner = []string{runuser, "-u", "postgres", "--"}, u
	}
	dir, err := os.MkdirTemp("", "perfdag-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	pg := &PG{Host: "127.0.0.1", User: "perfdag", Password: randomHex(t, 12), DB: "perfdag_lake"}
	pwfile := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(pg.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if owner != nil {
		uid, _ := strconv.Atoi(owner.Uid)
		gid, _ := strconv.Atoi(owner.Gid)
		for _, p := range []string{dir, pwfile} {
			if err := os.Chown(p, uid, gid); err != nil {
				t.Fatalf("chown %s to postgres: %v", p, err)
			}
		}
	}
	data, logFile := filepath.Join(dir, "data"), filepath.Join(dir, "server.log")
	server := func(name string, args ...string) error {
		argv := append(slices.Clone(wrap), append([]string{filepath.Join(bin, name)}, args...)...)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			log, _ := os.ReadFile(logFile)
			return fmt.Errorf("%s %s: %v\n%s\n%s", name, strings.Join(args, " "), err, out, log)
		}
		return nil
	}
	if err := server("initdb", "-D", data, "-U", pg.User, "--pwfile="+pwfile, "--auth=scram-sha-256",
		"-E", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		t.Fatal(err)
	}
	pg.Port = freePort(t)
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off", pg.Port, dir)
	if err := server("pg_ctl", "-D", data, "-l", logFile, "-w", "-t", "60", "-o", opts, "start"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := server("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"); err != nil {
			t.Logf("stop PostgreSQL: %v", err)
		}
	})
	create := exec.Command(filepath.Join(bin, "createdb"), "-h", pg.Host, "-p", strconv.Itoa(pg.Port), "-U", pg.User, pg.DB)
	create.Env = append(os.Environ(), "PGPASSWORD="+pg.Password)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("createdb: %v\n%s", err, out)
	}
	return pg
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

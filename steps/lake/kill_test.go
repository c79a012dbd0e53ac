package lake_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfdag/perfdag/steps/lake"
	"github.com/perfdag/perfdag/steps/testkit/laketest"
)

// Environment of the child process the kill test re-executes this test binary as.
const (
	childEnv  = "PERFDAG_LAKE_KILL_CHILD" // the lake URL to publish into
	midwayMsg = "MIDWAY"
)

// killSpec is the large campaign the child publishes: 1200 cells × 8 points + a roofline
// import = 9608 atlas rows, tens of MB of row data, more than SQLite's page cache holds,
// so the transaction has spilled pages into the database file when it is killed.
var killSpec = laketest.Spec{Campaign: "kimi", Cells: 1200, Concs: 8, Variant: 5, Grounded: true, Roofline: true}

func TestMain(m *testing.M) {
	if url := os.Getenv(childEnv); url != "" {
		os.Exit(killChild(url))
	}
	os.Exit(m.Run())
}

// killChild publishes the large campaign; once half of the atlas is inserted (the old rows
// are deleted, the new ones half written, nothing committed) it says so and waits to be killed.
func killChild(url string) int {
	ctx := context.Background()
	l, err := lake.Open(ctx, url, "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	half := len(laketest.Atlas(killSpec)) / 2
	said := false
	_, err = l.Publish(ctx, laketest.Publication("20261202T130455Z-kimi", killSpec), func(table string, rows int) {
		if table == lake.AtlasTable && rows >= half && !said {
			said = true
			fmt.Println(midwayMsg)
			time.Sleep(2 * time.Minute) // the parent SIGKILLs us here
		}
	})
	fmt.Fprintln(os.Stderr, "child was not killed:", err)
	return 3
}

// TestKillMidPublish SIGKILLs a process in the middle of publishing a large campaign into
// SQLite and checks that the lake is exactly as it was before that publish began.
func TestKillMidPublish(t *testing.T) {
	if testing.Short() {
		t.Skip("publishes ~10k rows in a child process")
	}
	dir := t.TempDir()
	url := "sqlite://" + filepath.Join(dir, "lake.db")
	id := "20261202T130455Z-kimi"
	func() {
		l := openLake(t, url)
		publish(t, l, laketest.Publication(id, fullSpec))
		publish(t, l, laketest.Publication("other", laketest.Spec{Campaign: "other", Cells: 3, Concs: 2}))
	}()
	before := func() map[string][][]any {
		l := openLake(t, url)
		defer l.Close(context.Background())
		return snapshot(t, l, id, "other")
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != midwayMsg {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child did not reach the middle of its publish: %q %s", sc.Text(), stderr.String())
	}
	// Proof the kill lands inside a write transaction: SQLite's rollback journal is live.
	if _, err := os.Stat(filepath.Join(dir, "lake.db-journal")); err != nil {
		t.Errorf("no rollback journal while the child is mid-transaction: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	werr := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL: %v %s", werr, stderr.String())
	}

	l := openLake(t, url) // opening rolls the hot journal back
	sameSnapshot(t, "after a publish was killed midway", snapshot(t, l, id, "other"), before)
	counts, err := l.Count(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := countsOf(counts), expected(fullSpec); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the kill the campaign holds %v, want the earlier publish %v", got, want)
	}
	// And the next publish succeeds.
	publish(t, l, laketest.Publication(id, laketest.Spec{Campaign: "kimi", Cells: 2, Concs: 2}))
}

// tamperSignature rewrites a table's recorded column signature, as an older perfdag would
// have left it.
func tamperSignature(url, table string) error {
	loc, err := lake.ParseURL(url, "")
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", loc.Path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec("UPDATE lake_tables SET columns_sha256 = 'older' WHERE table_name = ?", table)
	return err
}

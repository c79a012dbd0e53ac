package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/load"
)

// head is a valid campaign the hostile files build on (six lines).
const head = `version: 1
campaign: hostile
endpoints:
  main: {url: "http://127.0.0.1:8000", model: m}
cells:
  - {id: a, workload: {shape: aa-1k}, concurrencies: [1, 8]}
`

// laughs is a billion-laughs document: nine levels of nine aliases each, expanded in extra and
// extra_body.
func laughs() string {
	var b strings.Builder
	b.WriteString("version: 1\ncampaign: hostile\nendpoints:\n  main: {url: \"http://127.0.0.1:8000\", model: m}\nx-l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "x-l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9), ", "))
	}
	b.WriteString("cells:\n  - {id: a, workload: {shape: aa-1k, extra_body: {x: *l9}}, concurrencies: [1], extra: {x: *l9}}\n")
	return b.String()
}

// TestValidateHostileFiles: every hostile campaign file of issue 11 is refused by `validate`
// with exactly its mistakes, each at file:line:col with the limit or range it breaks.
func TestValidateHostileFiles(t *testing.T) {
	tests := []struct {
		name string
		src  string
		size int64 // when set, the file is extended (sparsely) to this size
		want []string
	}{
		{"a 50 MB file", head + "# padding\n", 50 << 20, []string{
			fmt.Sprintf("8:%d: the campaign file is larger than the 256 KiB limit (262144 bytes); it passes the limit here", load.MaxFileBytes-len(head)-len("# padding\n")+1),
		}},
		{"100k-deep brackets", head + "x-deep: " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "\n", 0, []string{
			"7:108: nesting deeper than the limit of 100 levels",
		}},
		{"billion laughs in extra and extra_body", laughs(), 0, []string{
			"10:12: alias *l4 takes the document past the limit of 10000 expanded aliases",
		}},
		{"alias cycle", head + "x-loop: &loop {self: [*loop]}\n", 0, []string{
			"7:23: alias *loop is inside its own anchor &loop: the value would be infinite",
		}},
		{"numbers out of range", `version: 1
campaign: hostile
endpoints:
  main: {url: "http://127.0.0.1:8000", model: m, request_timeout_s: -1}
cells:
  - {id: a, workload: {shape: aa-1k}, concurrencies: [1], requests_per_point: 4000000000}
  - {id: b, workload: {shape: aa-1k}, concurrencies: [1000000000]}
  - {id: c, workload: {shape: aa-1k}, concurrencies: [1], requests_per_point: "9999999999x", warmup_requests: 2000000000}
  - {id: d, workload: {shape: aa-1k, request_rate: .nan}, concurrencies: [1], gpus: -3, tensor_parallel: -4}
  - {id: e, workload: {shape: aa-1k, request_rate: .inf}, concurrencies: [50000]}
settle: {settle_s: -5}
`, 0, []string{
			"4:69: endpoints.main.request_timeout_s must be between 0 and 86400, got -1",
			"6:79: cells[0].requests_per_point: requests_per_point 4000000000: at most 100000 requests per point",
			"7:55: cells[1].concurrencies[0] must be between 1 and 100000, got 1000000000",
			`8:79: cells[2].requests_per_point: requests_per_point "9999999999x": the multiple is at most 1000x`,
			"8:111: cells[2].warmup_requests must be between 0 and 100000, got 2000000000",
			"9:52: cells[3].workload.request_rate must be a finite number, got NaN",
			"9:85: cells[3].gpus must be between 0 and 100000, got -3",
			"9:106: cells[3].tensor_parallel must be between 0 and 1024, got -4",
			"10:5: cell e sends 150000 requests at +Inf req/s (cap 50000) (the default 3x); a point sends at most 100000",
			"10:52: cells[4].workload.request_rate must be a finite number, got +Inf",
			"11:20: settle.settle_s must be between 0 and 86400, got -5",
		}},
		{"three mistakes, no cascade", head + `  - {id: b, workload: {shape: aa-1k}, concurrencies: 8}
  - {id: c, workload: {shape: aa-1k}, concurrencies: [1], warmup_requests: many}
  - {id: d, workload: {shape: aa-1k}, concurency: [1]}
`, 0, []string{
			"7:54: cells[1].concurrencies: want a list, got the integer 8",
			`8:76: cells[2].warmup_requests: want an integer, got the string "many"`,
			`9:39: unknown key "concurency" in cells[3]`,
		}},
		{"cron zone twice", head + "schedule: {cron: \"TZ=Asia/Tokyo 0 3 * * 1\", timezone: America/New_York}\n", 0, []string{
			`7:18: schedule.cron "TZ=Asia/Tokyo 0 3 * * 1": the expression names zone Asia/Tokyo and timezone: names America/New_York: keep one (write the zone in timezone: and drop the TZ= prefix)`,
		}},
		{"cron that never fires", head + "schedule: {cron: \"0 0 30 2 *\"}\n", 0, []string{
			`7:18: schedule.cron "0 0 30 2 *": "0 0 30 2 *" never fires (no date matches it in the next five years, e.g. 30 February)`,
		}},
		{"frozen DCGM file outside the campaign", head + "pipeline:\n  - {id: run, kind: run-shape}\n  - {id: dcgm, kind: dcgm-correlate, needs: [run], with: {file: /etc/passwd}}\n", 0, []string{
			"9:65: pipeline[1].with.file: step dcgm: file /etc/passwd lies outside the campaign file's directory",
		}},
		{"lake passwords in every form", head + `publish: {lake: "postgres://bench:p/ss#w?rd@db:5432/lake"}
`, 0, []string{
			`7:17: publish.lake: lake URL "postgres://bench:xxxxx@db:5432/lake" does not parse as a URL: a password holding / # ? or @ must be percent-encoded (%2F %23 %3F %40), or set it in PGPASSWORD`,
		}},
		{"a key=value DSN", head + "publish: {lake: \"host=db user=bench password=hunter22 dbname=lake\"}\n", 0, []string{
			"7:17: publish.lake: lake URL has no scheme (a key=value DSN is not accepted): write postgres://user@host:5432/db (the password in PGPASSWORD)",
		}},
		{"sqlite with a password", head + "publish: {lake: \"sqlite://lake.db?password=hunter22\"}\n", 0, []string{
			`7:17: publish.lake: lake URL "sqlite://lake.db?password=xxxxx": a sqlite:// URL takes a file path only, no ?query or #fragment`,
		}},
		{"a merged block carries its mistake where it is written", `version: 1
campaign: hostile
x-cell: &cell {workload: {shape: aa-1k}, concurrencies: [1], gpus: -3}
endpoints:
  main: {url: "http://127.0.0.1:8000", model: m}
cells:
  - {<<: *cell, id: a}
`, 0, []string{
			"3:68: cells[0].gpus must be between 0 and 100000, got -3",
		}},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("hostile-%02d.yaml", i))
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.size > 0 {
				if err := os.Truncate(path, tt.size); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := testApp().compile(path, nil, "")
			var l diag.List
			if !errors.As(err, &l) {
				t.Fatalf("compile: %v, want positioned problems", err)
			}
			got := make([]string, len(l))
			for j, d := range l {
				got[j] = strings.TrimPrefix(d.Error(), path+":")
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

package scrapespec

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
)

// TestScrapeErrorNamesURLOnce: a /metrics that cannot be reached fails the step with one
// "scrape URL: …" (the URL redacted), not the same prefix twice.
func TestScrapeErrorNamesURLOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: the dial is refused
	metrics := "http://user:hunter2@" + addr + "/metrics"
	task := &engine.Task{Node: "scrape-spec:before[a/c1]", Dir: t.TempDir(), EndpointKey: "main", Phase: "before",
		Endpoint: &schema.Endpoint{URL: "http://" + addr, Model: "m", MetricsURL: metrics},
		Cell:     &schema.Cell{ID: "a"}, Load: schema.Conc(1)}
	_, err = run(context.Background(), task)
	if err == nil {
		t.Fatal("a refused /metrics did not fail the step")
	}
	msg := err.Error()
	if n := strings.Count(msg, "scrape "); n != 1 || !strings.HasPrefix(msg, "scrape http://") || !strings.Contains(msg, addr+"/metrics: ") {
		t.Errorf("error names the scrape %d times, want once with the URL: %s", n, msg)
	}
	if strings.Contains(msg, "hunter2") {
		t.Errorf("error leaks the password: %s", msg)
	}
}

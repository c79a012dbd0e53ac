package shard

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/perfdag/perfdag/schema"
)

// Spec is what a child needs to measure its part: the first line the coordinator writes to
// its stdin. It holds no secret: the API key is read from the environment variable the
// endpoint names, which the child inherits.
type Spec struct {
	Dir         string          `json:"dir"`      // campaign directory (absolute)
	BaseDir     string          `json:"base_dir"` // directory of the campaign file
	Cell        string          `json:"cell"`
	Load        schema.Load     `json:"load"`
	EndpointKey string          `json:"endpoint_key"`
	Endpoint    schema.Endpoint `json:"endpoint"`
	BaseURL     string          `json:"base_url"` // where the endpoint listens during this run
	Workload    schema.Workload `json:"workload"`
	Salt        string          `json:"salt"` // the point's, so the child's prompts are those one client would send
	Phase       string          `json:"phase"`
	Of          int             `json:"of"` // N: the clients of the point
	Part        PartSpec        `json:"part"`
	Records     string          `json:"records"` // where the child writes its records, relative to Dir
}

// PartSpec is a Part and the point's arrival process, as the child receives them.
type PartSpec struct {
	Index       int     `json:"index"`
	From        int     `json:"from"`
	Requests    int     `json:"requests"`
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate,omitempty"`
	Arrival     string  `json:"arrival,omitempty"`
	Burstiness  float64 `json:"burstiness,omitempty"`
	Seed        int64   `json:"seed,omitempty"`
}

// down is a message from the coordinator after the spec: a ping, or the start.
type down struct {
	Ping    *int   `json:"ping,omitempty"`     // answer with a pong carrying the child's clock
	StartNs *int64 `json:"start_ns,omitempty"` // begin at this instant of the child's clock
}

// up is a message from a child.
type up struct {
	Ready bool  `json:"ready,omitempty"` // its connections are open: it waits for pings and the start
	Pong  *int  `json:"pong,omitempty"`
	NowNs int64 `json:"now_ns,omitempty"` // the child's clock when it answered the ping
	Done  *Done `json:"done,omitempty"`
	// Progress is the child's live count while it measures (every quarter second).
	Progress *Progress `json:"progress,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// Done is what a child reports when its records are written.
type Done struct {
	Records     int                 `json:"records"`
	StartLateNs int64               `json:"start_late_ns"`
	ClientBound *schema.ClientBound `json:"client_bound,omitempty"`
	WarmOpened  int                 `json:"warm_opened"`     // connections opened before its window
	WarmConnect []int64             `json:"warm_connect_ns"` // their set-up times
}

// Progress is a child's count so far.
type Progress struct {
	Done   int `json:"done"`
	Errors int `json:"errors"`
}

// lineWriter writes one JSON value per line (from the measuring goroutine and the progress
// feed both).
type lineWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func newLineWriter(w io.Writer) *lineWriter { return &lineWriter{w: bufio.NewWriter(w)} }

func (l *lineWriter) send(v any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := l.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write to the pipe: %w", err)
	}
	return l.w.Flush()
}

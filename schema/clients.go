package schema

// MaxClients is the most client processes one point's load may be split over (cells[].clients).
const MaxClients = 64

// Clients says how a point's load was split over client processes (cells[].clients > 1) and
// how their records were brought onto one clock: each shard's records are its own client's
// stamps, shifted by the shard's clock offset onto the coordinator's clock before the point's
// window (their union) is taken. Durations inside one request never cross clients.
type Clients struct {
	N int `json:"n"`
	// Method names how the clock offsets were measured.
	Method string `json:"method"`
	// StartNs is the start every shard waited for, on the coordinator's clock.
	StartNs int64   `json:"start_ns"`
	Shards  []Shard `json:"shards"`
}

// ClockMethodPipePing is Clients.Method for offsets measured by timestamp exchanges over each
// child's stdin/stdout pipe: offset = child stamp − midpoint of the coordinator's send and
// receive, taken from the exchange with the shortest round trip.
const ClockMethodPipePing = "pipe-ping-min-rtt"

// Shard is one client's share of a point and what it did.
type Shard struct {
	Index       int     `json:"index"`
	Records     string  `json:"records"`    // the shard's records, on its own clock
	IndexFrom   int     `json:"index_from"` // its requests are [index_from, index_from + requests)
	Requests    int     `json:"requests"`
	Concurrency int     `json:"concurrency"` // closed loop: its streams; open loop: its share of the cap (0: none)
	RequestRate float64 `json:"request_rate,omitempty"`
	Seed        int64   `json:"seed,omitempty"` // open loop: its arrival stream's seed
	// ClockOffsetNs is the shard's clock minus the coordinator's; its records are shifted by
	// −ClockOffsetNs. ClockRTTNs is the round trip of the exchange it comes from: the offset is
	// known within ± half of it (if the pipe's delay is the same both ways, exactly).
	ClockOffsetNs int64 `json:"clock_offset_ns"`
	ClockRTTNs    int64 `json:"clock_rtt_ns"`
	// StartLateNs is how long after the agreed start the shard's first request could leave.
	StartLateNs int64        `json:"start_late_ns"`
	ClientBound *ClientBound `json:"client_bound,omitempty"`
}

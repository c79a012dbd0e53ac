package schema

// ClientBound says whether a point's client was its bottleneck, from three signs over its
// window: the client process's CPU against the cores it may use, its sends late against their
// schedule (an open loop), and its reads lagging the kernel's receive stamps. Kernel stamps
// keep a busy client's lateness out of each latency, but a client that cannot keep up holds
// fewer streams than asked, sends late, and measures itself, not the server.
type ClientBound struct {
	// CPUPct is the client process's CPU time (user + system) over the window, in percent of
	// Cores × the window: 100 is every core it may use busy all along.
	CPUPct float64 `json:"cpu_pct"`
	Cores  int     `json:"cores"` // GOMAXPROCS: the cores the process may use (a CPU quota lowers it)
	// LateSends counts open-loop sends that went out more than LateSendMs after their
	// schedule with an in-flight slot free (cap-delayed sends are the cap's, not the
	// client's); Sends is how many were scheduled (0 on a closed loop).
	LateSends int `json:"late_sends"`
	Sends     int `json:"sends"`
	// Reads counts the window's reads that carried a kernel receive stamp; ReadLagP50Ms,
	// ReadLagP99Ms and ReadLagMaxMs are how long after that stamp they returned (each the
	// upper bound of a bucket within 12.5 %). Without kernel stamps Reads is 0.
	Reads        int64   `json:"reads"`
	ReadLagP50Ms float64 `json:"read_lag_p50_ms"`
	ReadLagP99Ms float64 `json:"read_lag_p99_ms"`
	ReadLagMaxMs float64 `json:"read_lag_max_ms"`
	// ReadLagBoundMs is the lag p99 past which the reads were behind: the larger of
	// schema.ReadLagBoundMs and the point's typical time between tokens (the median of its
	// answers' mean gaps between chunks), so reads a token behind or more.
	ReadLagBoundMs float64 `json:"read_lag_bound_ms"`
	// Verdict is "ok" or "client_bound"; Why names each sign past its bound.
	Verdict string   `json:"verdict"`
	Why     []string `json:"why,omitempty"`
}

// Verdicts of ClientBound.
const (
	VerdictClientOK    = "ok"
	VerdictClientBound = "client_bound"
)

// Bounds of the signs: past any one, the point's client was its bottleneck.
const (
	// ClientCPUBoundPct: the client process kept at least this share of its cores busy.
	ClientCPUBoundPct = 90.0
	// LateSendMs is how late past its schedule an open-loop send counts as late, and
	// LateSendsBoundPct the share of sends late that bounds the point.
	LateSendMs        = 5.0
	LateSendsBoundPct = 1.0
	// ReadLagBoundMs bounds the read lag's p99 from below: reads behind their data by more than
	// that and more than the point's time between tokens are a client working through a
	// backlog, not a machine's scheduling noise.
	ReadLagBoundMs = 10.0
)

// Bound reports whether the verdict is client_bound (false for a nil ClientBound).
func (c *ClientBound) Bound() bool { return c != nil && c.Verdict == VerdictClientBound }

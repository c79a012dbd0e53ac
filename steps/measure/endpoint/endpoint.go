// Package endpoint resolves where a node's endpoint really listens (a sim:// endpoint gets a
// loopback address at run time) and reads its API key from the environment, so that no step
// ever puts a run-time address or a secret into a fingerprint, a file or a log.
package endpoint

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/schema"
)

// Env is the resolved addresses by endpoint name the steps' Setup hook hands the engine, on
// its own or inside a run environment that returns it from EndpointEnv.
type Env struct {
	Endpoints map[string]Resolved
}

// Resolved is where an endpoint is reachable during this run.
type Resolved struct {
	BaseURL    string // e.g. http://127.0.0.1:41234 (no trailing slash, no /v1)
	MetricsURL string // server /metrics, empty when not exported
	DCGMURL    string // DCGM exporter /metrics, empty when not exported
	Sim        bool   // served by the in-process simulator
	// Virtual, when set, answers requests instead of the network: the simulator's
	// deterministic mode (a test double; see sim.Virtual). Arguments: cell, phase,
	// concurrency, request index, prompt tokens, output budget.
	Virtual func(cell, phase string, concurrency, index, inputTokens, outputTokens int) schema.RequestRecord
	// VirtualOpen answers an open-loop request of the same deterministic mode (sim.Virtual's
	// OpenRecord): its user arrives at arrivals[index] of the point's schedule, cap is the
	// in-flight cap (0: none). Nil: an open-loop point is answered by Virtual as a closed loop.
	VirtualOpen func(cell, phase string, arrivals []time.Duration, cap, index, inputTokens, outputTokens int) schema.RequestRecord
}

// IsSim reports whether an endpoint URL asks for the built-in simulator.
func IsSim(url string) bool { return strings.HasPrefix(url, "sim://") }

// Static resolves an endpoint that is not a simulator: its URLs as configured.
func Static(ep schema.Endpoint) Resolved {
	return Resolved{BaseURL: strings.TrimSuffix(strings.TrimSuffix(ep.URL, "/"), "/v1"), MetricsURL: ep.MetricsURL, DCGMURL: ep.DCGMURL}
}

// Resolve returns where the task's endpoint listens during this run.
func Resolve(t *engine.Task) (Resolved, error) {
	if t.Endpoint == nil {
		return Resolved{}, fmt.Errorf("node %s has no endpoint", t.Node)
	}
	env, _ := t.Env.(*Env)
	if h, ok := t.Env.(interface{ EndpointEnv() *Env }); ok { // a run environment holding more than endpoints
		env = h.EndpointEnv()
	}
	if env != nil {
		if r, ok := env.Endpoints[t.EndpointKey]; ok {
			return r, nil
		}
	}
	if IsSim(t.Endpoint.URL) {
		return Resolved{}, fmt.Errorf("endpoint %s is sim:// but no simulator was started for this run", t.EndpointKey)
	}
	return Static(*t.Endpoint), nil
}

// APIKey reads the endpoint's key from the environment variable it names ("" when none).
// The value must only ever go into an Authorization header.
func APIKey(ep *schema.Endpoint) string {
	if ep == nil || ep.APIKeyEnv == "" {
		return ""
	}
	key := os.Getenv(ep.APIKeyEnv)
	redact.Secret(key) // masked in any text perfdag writes, should a server echo it
	return key
}

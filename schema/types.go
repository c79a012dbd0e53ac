package schema

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Count is requests_per_point: an absolute count, a multiple of the concurrency ("3x"), or
// {auto: {...}}: as many as a metric's interval needs (AutoCount).
type Count struct {
	N        int        `yaml:"-" json:"-"` // absolute count, when set
	Multiple int        `yaml:"-" json:"-"` // N× concurrency, when set
	Auto     *AutoCount `yaml:"-" json:"-"` // measure until precise enough, when set
}

// Bounds of requests_per_point: a point is held in memory request by request, so its size is
// capped whatever the form (an absolute count, N × concurrency, or the default 3×).
const (
	MaxRequestsPerPoint = 100_000
	MaxRequestsMultiple = 1000
)

// ParseCount reads "12" or "3x", within MaxRequestsPerPoint and MaxRequestsMultiple.
func ParseCount(s string) (Count, error) {
	s = strings.TrimSpace(s)
	if m, ok := strings.CutSuffix(s, "x"); ok {
		n, err := strconv.Atoi(m)
		switch {
		case err != nil && !isDigits(m) || err == nil && n <= 0:
			return Count{}, fmt.Errorf("requests_per_point %q: want a positive integer or \"Nx\" (N times the concurrency), e.g. 3x", s)
		case err != nil || n > MaxRequestsMultiple:
			return Count{}, fmt.Errorf("requests_per_point %q: the multiple is at most %dx", s, MaxRequestsMultiple)
		}
		return Count{Multiple: n}, nil
	}
	n, err := strconv.Atoi(s)
	switch {
	case err != nil && !isDigits(s) || err == nil && n <= 0:
		return Count{}, fmt.Errorf("requests_per_point %q: want a positive integer or \"Nx\" (N times the concurrency), e.g. 3x", s)
	case err != nil || n > MaxRequestsPerPoint:
		return Count{}, fmt.Errorf("requests_per_point %s: at most %d requests per point", s, MaxRequestsPerPoint)
	}
	return Count{N: n}, nil
}

// isDigits reports a non-empty run of ASCII digits (a number too large for an int).
func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// IsZero reports an unset count.
func (c Count) IsZero() bool { return c.N == 0 && c.Multiple == 0 && c.Auto == nil }

// For resolves the count at a concurrency; unset means max(10, 3 × concurrency); auto means
// its minimum (what every auto point sends at least, and what a burn-in pass sends).
func (c Count) For(concurrency int) int {
	switch {
	case c.Auto != nil:
		return c.Auto.MinFor(concurrency)
	case c.N > 0:
		return c.N
	case c.Multiple > 0:
		return c.Multiple * concurrency
	}
	return max(10, 3*concurrency)
}

func (c Count) String() string {
	switch {
	case c.Auto != nil:
		return c.Auto.String()
	case c.N > 0:
		return strconv.Itoa(c.N)
	case c.Multiple > 0:
		return strconv.Itoa(c.Multiple) + "x"
	}
	return ""
}

// UnmarshalYAML accepts an integer, an "Nx" string or {auto: {...}}.
func (c *Count) UnmarshalYAML(unmarshal func(any) error) error {
	var v any
	if err := unmarshal(&v); err != nil {
		return err
	}
	parsed, err := countOf(v)
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}

// countOf reads a decoded value (YAML's or JSON's) as a Count: {auto: {...}}, else an integer
// or an "Nx" string.
func countOf(v any) (Count, error) {
	if m, ok := v.(map[string]any); ok {
		a, err := parseAuto(m)
		if err != nil {
			return Count{}, err
		}
		return Count{Auto: a}, nil
	}
	return ParseCount(fmt.Sprint(v))
}

// MarshalYAML writes the form the user wrote.
func (c Count) MarshalYAML() (any, error) {
	if c.Auto != nil {
		return map[string]any{"auto": c.Auto}, nil
	}
	if c.N > 0 {
		return c.N, nil
	}
	return c.String(), nil
}

// MarshalJSON writes an integer, "Nx" or {"auto": {...}}.
func (c Count) MarshalJSON() ([]byte, error) {
	if c.Auto != nil {
		return json.Marshal(map[string]any{"auto": c.Auto})
	}
	if c.N > 0 {
		return []byte(strconv.Itoa(c.N)), nil
	}
	return json.Marshal(c.String())
}

// UnmarshalJSON reads an integer, "Nx" or {"auto": {...}}.
func (c *Count) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v == nil || v == "" {
		*c = Count{}
		return nil
	}
	parsed, err := countOf(v)
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}

// JSONSchema describes Count for editors.
func (Count) JSONSchema() map[string]any {
	return map[string]any{"oneOf": []any{
		map[string]any{"type": "integer", "minimum": 1, "maximum": MaxRequestsPerPoint},
		map[string]any{"type": "string", "pattern": "^([1-9][0-9]{0,2}|1000)x$"},
		map[string]any{"type": "object", "additionalProperties": false, "required": []any{"auto"}, "properties": map[string]any{
			"auto": map[string]any{"type": "object", "additionalProperties": false,
				"oneOf":       []any{map[string]any{"required": []any{"metric", "rel_ci"}}, map[string]any{"required": []any{"decide"}}},
				"description": "measure in batches until the 95 % interval of metric is within ±rel_ci of its estimate, or (decide) until an SLO's verdict is known at 95 % (docs/measurement.md)",
				"properties": map[string]any{
					"metric": map[string]any{"type": "string", "enum": autoMetricsAny()},
					"rel_ci": map[string]any{"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
					"decide": map[string]any{"type": "string", "minLength": 1,
						"description": "slo: decide the cell's search.slo; or an SLO rule (ttft_p50_ms <= 250 && error_count == 0) for a cell without a search"},
					"min": map[string]any{"type": "integer", "minimum": 1, "maximum": MaxRequestsPerPoint},
					"max": map[string]any{"type": "integer", "minimum": 1, "maximum": MaxRequestsPerPoint},
				}},
		}},
	}}
}

// Duration is a time.Duration written as "30s", "24h", "1h30m".
type Duration struct{ time.Duration }

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		return fmt.Errorf("want a duration such as 30s or 24h: %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("duration %q: want a non-negative duration such as 30s, 15m or 24h", s)
	}
	d.Duration = v
	return nil
}

// MarshalYAML writes the duration string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// IsZero reports an unset duration.
func (d Duration) IsZero() bool { return d.Duration == 0 }

// JSONSchema describes Duration for editors.
func (Duration) JSONSchema() map[string]any {
	return map[string]any{"type": "string", "pattern": `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`}
}

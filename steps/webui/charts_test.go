package webui

import (
	"fmt"
	"strings"
	"testing"
)

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 2.283, "[0 0.5 1 1.5 2]"},
		{0, 8, "[0 2 4 6 8]"},
		{0, 100, "[0 20 40 60 80 100]"},
		{3, 3, "[3]"},
		{0.1, 0.13, "[0.1 0.105 0.11 0.115 0.12 0.125 0.13]"},
	} {
		if got := fmt.Sprint(niceTicks(tc.lo, tc.hi)); got != tc.want {
			t.Errorf("niceTicks(%v, %v) = %s, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// A server's error text on the timeline is text in the tooltip, never markup.
func TestTimelineEscapes(t *testing.T) {
	out := string(timeline([]reqSpan{{Index: 1, Start: 0, End: 1, Error: `dropped: <script>alert("x")</script>`}, {Index: 2, Start: 0.5, First: 0.6, End: 2, TTFTms: 100, LatencyMs: 1500}}))
	if strings.Contains(out, "<script") || !strings.Contains(out, `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`) {
		t.Errorf("timeline:\n%s", out)
	}
	if !strings.Contains(out, `data-tip="request 2: start +0.5 s, TTFT 100 ms, latency 1500 ms"`) {
		t.Errorf("the tooltip of a request lacks its exact values:\n%s", out)
	}
}

func TestFig(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{48.300000000000004, "48.30"}, {123.02645068689769, "123.0"}, {1234.6, "1235"}, {33, "33"}, {0.12345, "0.123"}, {-5.5, "-5.500"}, {0.000123456, "0.000123"}, {0, "0"}, {11.61609663550437, "11.62"}, {41.115097500000005, "41.12"}} {
		if got := fig(tc.v); got != tc.want {
			t.Errorf("fig(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

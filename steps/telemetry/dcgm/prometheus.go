package dcgm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/telemetry/promscrape"
)

// PrometheusSource reads DCGM exporter series from a Prometheus server with one range query per
// point. It fetches the per-GPU series and averages them here rather than with PromQL avg(), so a
// DCGM blank sentinel stored in the TSDB is dropped instead of poisoning the mean, and so all three
// sources reduce samples with the same code.
type PrometheusSource struct {
	URL         string        // server base URL, e.g. http://prometheus:9090
	Host        string        // node whose GPUs to read, matched on Hostname or hostname; empty: every node
	Matcher     string        // further matchers, PromQL without braces: pod=~"vllm-.*", gpu=~"0|1"
	Step        time.Duration // query step; 0 chooses window/300, at least 1 s
	Timeout     time.Duration // per query; 0 means 30 s
	Client      *http.Client
	BearerToken string // sent as Authorization; from the environment, never shown
}

// Name is the record's source.
func (p *PrometheusSource) Name() string { return "prometheus" }

// Detail names the server and the series selection.
func (p *PrometheusSource) Detail() string {
	return promscrape.Redact(p.URL) + " " + strings.Join(p.selectors(), " or ")
}

// selectors builds the series selection: every DCGM field name, the host under either label
// spelling, and the user's matcher.
func (p *PrometheusSource) selectors() []string {
	var names []string
	for _, ef := range exporterFields {
		names = append(names, ef.names...)
	}
	base := []string{`__name__=~"` + strings.Join(names, "|") + `"`}
	if m := strings.TrimSpace(p.Matcher); m != "" {
		base = append(base, m)
	}
	if p.Host == "" {
		return []string{"{" + strings.Join(base, ",") + "}"}
	}
	var out []string
	for _, l := range []string{"Hostname", "hostname"} {
		out = append(out, "{"+strings.Join(append([]string{l + "=" + strconv.Quote(p.Host)}, base...), ",")+"}")
	}
	return out
}

// step is the configured step, else window/300 rounded up to whole seconds (at least 1 s).
func (p *PrometheusSource) step(window time.Duration) time.Duration {
	if p.Step > 0 {
		return p.Step
	}
	s := (window / 300).Round(time.Second)
	if s < time.Second {
		s = time.Second
	}
	return s
}

// Point runs the range query over [w.Start, w.End] and averages each GPU's values over the
// steps, then over GPUs. At each step Prometheus returns the latest sample at or before it, so a
// window shorter than the exporter's collect interval mostly repeats one sample.
func (p *PrometheusSource) Point(ctx context.Context, w Window) (schema.DCGMPoint, error) {
	if w.Start.IsZero() || !w.End.After(w.Start) {
		return schema.DCGMPoint{}, fmt.Errorf("%s: window %v – %v is empty; a Prometheus query needs the run's start and end", w.Load.Key(), w.Start, w.End)
	}
	query := strings.Join(p.selectors(), " or ")
	matrix, err := p.queryRange(ctx, query, w.Start, w.End, p.step(w.End.Sub(w.Start)))
	if err != nil {
		return schema.DCGMPoint{}, err
	}
	// Per GPU and field, the values of the most canonical metric name that has any.
	type pick struct {
		alias int
		vals  []float64
	}
	picks := map[string]map[slot]*pick{}
	for _, ss := range matrix {
		name := string(ss.Metric[model.MetricNameLabel])
		s, alias, ok := fieldByName(name)
		if !ok {
			continue
		}
		label := func(names ...string) string {
			for _, n := range names {
				if v := ss.Metric[model.LabelName(n)]; v != "" {
					return string(v)
				}
			}
			return ""
		}
		k := gpuKey(label)
		if picks[k] == nil {
			picks[k] = map[slot]*pick{}
		}
		cur := picks[k][s]
		if cur == nil || alias < cur.alias {
			cur = &pick{alias: alias}
			picks[k][s] = cur
		} else if alias > cur.alias {
			continue
		}
		for _, sp := range ss.Values {
			cur.vals = append(cur.vals, float64(sp.Value))
		}
	}
	acc := newAccumulator(true)
	for k, bySlot := range picks {
		for s, pk := range bySlot {
			for _, v := range pk.vals {
				acc.add(k, s, v)
			}
		}
	}
	if len(acc.gpus) == 0 {
		return schema.DCGMPoint{}, fmt.Errorf("prometheus %s returned no DCGM series for %s (query %s): %w", promscrape.Redact(p.URL), w.Load.Key(), query, ErrNoData)
	}
	return acc.point(), nil
}

// fieldByName finds the slot a DCGM metric name feeds and the name's rank among its aliases.
func fieldByName(name string) (slot, int, bool) {
	for _, ef := range exporterFields {
		for i, n := range ef.names {
			if n == name {
				return ef.slot, i, true
			}
		}
	}
	return 0, 0, false
}

// apiResponse is the Prometheus HTTP API envelope.
type apiResponse struct {
	Status string `json:"status"`
	Data   struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
}

// queryRange runs GET /api/v1/query_range and returns its matrix.
func (p *PrometheusSource) queryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	shown := promscrape.Redact(p.URL)
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	q := url.Values{
		"query": {query},
		"start": {unixSeconds(start)},
		"end":   {unixSeconds(end)},
		"step":  {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(p.URL, "/")+"/api/v1/query_range?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", shown, err)
	}
	if p.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+p.BearerToken)
	}
	client := p.Client
	if client == nil {
		client = promscrape.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err // its text repeats the URL, which may carry credentials
		}
		return nil, fmt.Errorf("prometheus %s query_range: %w", shown, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("prometheus %s query_range: read: %w", shown, err)
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("prometheus %s query_range: HTTP %s, not an API response: %w", shown, resp.Status, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("prometheus %s query_range: HTTP %s: %s: %s (query %s)", shown, resp.Status, r.ErrorType, r.Error, query)
	}
	if r.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("prometheus %s query_range: result type %q, want matrix", shown, r.Data.ResultType)
	}
	var m model.Matrix
	if err := json.Unmarshal(r.Data.Result, &m); err != nil {
		return nil, fmt.Errorf("prometheus %s query_range: decode matrix: %w", shown, err)
	}
	return m, nil
}

func unixSeconds(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64)
}

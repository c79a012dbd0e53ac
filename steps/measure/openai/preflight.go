package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/perfdag/perfdag/engine/redact"
)

// ModelNotServedError says the server's /v1/models does not list the endpoint's model.
type ModelNotServedError struct {
	Model  string
	Served []string
}

func (e *ModelNotServedError) Error() string {
	return fmt.Sprintf("model %q is not served here; /v1/models lists %s (fix the endpoint's model:)", e.Model, quoteList(e.Served))
}

func quoteList(ids []string) string {
	if len(ids) == 0 {
		return "no model"
	}
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}

// Preflight is what the server says before a window: the models it lists (nil when it does
// not offer /v1/models) and its version or build, when it reports one.
type Preflight struct {
	Models []string
	Server string // e.g. "llama.cpp build b4677", "vllm 0.11.0"; "" when unknown
}

// Check runs the preflight for model: GET /v1/models must list it when the server answers the
// route with 200 (anything else skips the check: the window records failures per request); a
// list without the model is an error naming the served ones. Then the server's version is read from vLLM/SGLang's
// GET /version or llama.cpp's GET /props build_info, best effort.
func (c *Client) Check(ctx context.Context, model string) (Preflight, error) {
	var p Preflight
	status, body, err := c.get(ctx, "/v1/models")
	switch {
	case err != nil || status != http.StatusOK:
		// No route, an unhealthy or unreachable server: no check here; the window's requests
		// record what goes wrong, per request and class.
		return p, nil
	default:
		var list struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			return p, fmt.Errorf("GET %s/v1/models: decode: %w", redact.URL(c.base), err)
		}
		p.Models = []string{}
		for _, m := range list.Data {
			p.Models = append(p.Models, m.ID)
		}
		if model != "" && !slices.Contains(p.Models, model) {
			return p, fmt.Errorf("preflight %s: %w", redact.URL(c.base), &ModelNotServedError{Model: model, Served: p.Models})
		}
	}
	p.Server = c.serverVersion(ctx)
	return p, nil
}

// serverVersion asks the places servers report themselves; "" when none answers.
func (c *Client) serverVersion(ctx context.Context) string {
	if status, body, err := c.get(ctx, "/version"); err == nil && status == http.StatusOK {
		var v struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(body, &v) == nil && v.Version != "" {
			return "version " + c.redact(v.Version)
		}
	}
	if status, body, err := c.get(ctx, "/props"); err == nil && status == http.StatusOK {
		var p struct {
			BuildInfo string `json:"build_info"`
		}
		if json.Unmarshal(body, &p) == nil && p.BuildInfo != "" {
			return "llama.cpp build " + c.redact(p.BuildInfo)
		}
	}
	return ""
}

// get fetches path with a bounded time and body.
func (c *Client) get(ctx context.Context, path string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, min(c.timeout, 30*time.Second))
	defer cancel()
	req, err := c.newRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("GET %s%s: %w", redact.URL(c.base), path, c.redactErr(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("GET %s%s: read body: %w", redact.URL(c.base), path, c.redactErr(err))
	}
	return resp.StatusCode, body, nil
}

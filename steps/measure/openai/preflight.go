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
	// ContextLen is the context one request may fill, in the server's tokens: llama.cpp's
	// per-slot n_ctx (GET /props default_generation_settings.n_ctx), vLLM's max_model_len
	// (GET /v1/models); 0 when the server does not say. The client's truncation rule reads it.
	ContextLen int
}

// Check runs the preflight for model: GET /v1/models must list it when the server answers the
// route with 200 (anything else skips the check: the window records failures per request); a
// list without the model is an error naming the served ones. Then the server's version is read from vLLM/SGLang's
// GET /version or llama.cpp's GET /props build_info, best effort, and its context per request
// (vLLM's max_model_len, llama.cpp's per-slot n_ctx), which the client keeps for the truncation
// rule of the records it makes from then on (see PromptTruncated).
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
				ID          string `json:"id"`
				MaxModelLen int    `json:"max_model_len"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			return p, fmt.Errorf("GET %s/v1/models: decode: %w", redact.URL(c.base), err)
		}
		p.Models = []string{}
		for _, m := range list.Data {
			p.Models = append(p.Models, m.ID)
			if m.ID == model && m.MaxModelLen > 0 {
				p.ContextLen = m.MaxModelLen
			}
		}
		if model != "" && !slices.Contains(p.Models, model) {
			return p, fmt.Errorf("preflight %s: %w", redact.URL(c.base), &ModelNotServedError{Model: model, Served: p.Models})
		}
	}
	c.serverProps(ctx, &p)
	if p.ContextLen > 0 {
		c.contextLen.Store(int64(p.ContextLen))
		if p.Server != "" {
			p.Server += fmt.Sprintf(", context %d tokens per request", p.ContextLen)
		}
	}
	return p, nil
}

// serverProps asks the places servers report themselves (version or build, llama.cpp's
// per-slot context), best effort: what no route answers stays empty.
func (c *Client) serverProps(ctx context.Context, p *Preflight) {
	if status, body, err := c.get(ctx, "/version"); err == nil && status == http.StatusOK {
		var v struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(body, &v) == nil && v.Version != "" {
			p.Server = "version " + c.redact(v.Version)
		}
	}
	if p.Server != "" && p.ContextLen > 0 {
		return
	}
	if status, body, err := c.get(ctx, "/props"); err == nil && status == http.StatusOK {
		var props struct {
			BuildInfo string `json:"build_info"`
			Settings  struct {
				NCtx int `json:"n_ctx"`
			} `json:"default_generation_settings"`
		}
		if json.Unmarshal(body, &props) == nil {
			if p.Server == "" && props.BuildInfo != "" {
				p.Server = "llama.cpp build " + c.redact(props.BuildInfo)
			}
			if p.ContextLen == 0 && props.Settings.NCtx > 0 {
				p.ContextLen = props.Settings.NCtx
			}
		}
	}
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

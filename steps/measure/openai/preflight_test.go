package openai

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPreflight(t *testing.T) {
	llama := func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"tiny-llama","object":"model","owned_by":"llamacpp"}]}`))
		case "/props":
			_, _ = w.Write([]byte(`{"default_generation_settings":{"id":0,"n_ctx":4096,"params":{"n_predict":-1}},"total_slots":4,"build_info":"b4677-c392e50"}`))
		default:
			http.NotFound(w, r)
		}
	}
	vllm := func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			_, _ = w.Write([]byte(`{"data":[{"id":"meta/llama-3-8b","max_model_len":131072},{"id":"lora-a","max_model_len":8192}]}`))
		case "/version":
			_, _ = w.Write([]byte(`{"version":"0.11.0"}`))
		default:
			http.NotFound(w, r)
		}
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		model   string
		server  string
		models  []string
		ctx     int
		err     string // substring; "" = no error
	}{
		{"llama.cpp lists the model", llama, "tiny-llama", "llama.cpp build b4677-c392e50, context 4096 tokens per request", []string{"tiny-llama"}, 4096, ""},
		{"vLLM lists the model", vllm, "lora-a", "version 0.11.0, context 8192 tokens per request", []string{"meta/llama-3-8b", "lora-a"}, 8192, ""},
		{"misspelt model names the served ones", vllm, "meta/llama-3-8B", "", nil, 0,
			`model "meta/llama-3-8B" is not served here; /v1/models lists "meta/llama-3-8b", "lora-a"`},
		{"no /v1/models route skips the check", http.NotFound, "anything", "", nil, 0, ""},
		{"server error skips the check", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }, "m", "", nil, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			c, err := New(Options{BaseURL: srv.URL + "/v1"})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			p, err := c.Check(context.Background(), tc.model)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Server != tc.server || strings.Join(p.Models, ",") != strings.Join(tc.models, ",") || p.ContextLen != tc.ctx {
				t.Fatalf("preflight = %+v, want server %q models %v context %d", p, tc.server, tc.models, tc.ctx)
			}
			if got := int(c.contextLen.Load()); got != tc.ctx {
				t.Errorf("client keeps context %d, want %d", got, tc.ctx)
			}
		})
	}
	var nse *ModelNotServedError
	srv := httptest.NewServer(http.HandlerFunc(vllm))
	defer srv.Close()
	c, _ := New(Options{BaseURL: srv.URL})
	defer c.Close()
	if _, err := c.Check(context.Background(), "x"); !errors.As(err, &nse) || len(nse.Served) != 2 {
		t.Fatalf("err = %v, want a ModelNotServedError listing 2 models", err)
	}
}

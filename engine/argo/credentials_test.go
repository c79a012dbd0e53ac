package argo

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/enginetest"
	"github.com/perfdag/perfdag/engine/plan"
)

// probeParams is a step that reaches a service by URL and may read its token from the
// environment, like a Prometheus query.
type probeParams struct {
	URL      string `yaml:"url,omitempty"`
	TokenEnv string `yaml:"token_env,omitempty"`
}

// probeKinds is a registry with a run-shape that holds the endpoint, a probe whose token
// comes from an environment variable, and a shell step that has no such parameter.
func probeKinds(t *testing.T) *engine.Registry {
	t.Helper()
	run := func(context.Context, *engine.Task) (engine.Result, error) { return engine.Result{}, nil }
	reg, err := engine.NewRegistry(
		engine.Kind{Name: "run-shape", Scope: engine.ScopePoint, Version: "1", HoldsEndpoint: true, Run: run},
		engine.Kind{Name: "probe", Scope: engine.ScopeCampaign, Version: "1", Run: run,
			Params:    func() any { return &probeParams{} },
			SecretEnv: func(p any) map[string]string { return map[string]string{"token_env": p.(*probeParams).TokenEnv} }},
		engine.Kind{Name: "shell", Scope: engine.ScopeCampaign, Version: "1", Run: run,
			Params: func() any {
				return &struct {
					Command []string `yaml:"command"`
				}{}
			}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// probeCampaign is a campaign over one endpoint with the three steps; each %s is replaced.
func probeCampaign(url, metrics, probeURL, command, lake string) string {
	return `version: 1
campaign: creds
# an old address, http://bob:hunter22@old.example/?api_key=abcdef123, in a comment is no problem
endpoints:
  main:
    url: "` + url + `"
    model: m
    api_key_env: MAIN_KEY
    metrics_url: ` + metrics + `
cells:
  - {id: a, workload: {shape: aa-1k}, concurrencies: [1]}
pipeline:
  - {id: run, kind: run-shape}
  - {id: probe, kind: probe, needs: [run], with: {url: "` + probeURL + `", token_env: PROM_TOKEN}}
  - id: shell
    kind: shell
    needs: [run]
    with:
      command: [curl, "` + command + `"]
publish: {lake: "` + lake + `"}
`
}

// A credential anywhere outside a comment — an endpoint URL's userinfo or api_key= query,
// metrics_url, a step's URL, an argument, a lake DSN's password — is refused at its key's
// line:col with a hint naming where the credential goes instead; the same file without
// credentials exports, and so does a credential quoted in a comment.
func TestCredentialsRefused(t *testing.T) {
	const (
		url     = "http://vllm.svc:8000/v1"
		metrics = "http://vllm.svc:8000/metrics"
		probe   = "http://prometheus:9090"
		command = "http://hook.svc/notify"
		lake    = "postgres://perfdag@pg.svc:5432/lake"
	)
	for _, c := range []struct {
		name                         string
		url, metrics, probe, command string
		lake                         string
		path                         string
		line, col                    int
		hint                         []string
	}{
		{name: "userinfo", url: "http://alice:s3cr3t-pw@vllm.svc:8000/v1",
			path: "endpoints.main.url", line: 6, col: 5, hint: []string{"api_key_env: MAIN_KEY", "--from-literal=MAIN_KEY=", "Secret"}},
		{name: "api_key query", url: "http://vllm.svc:8000/v1?api_key=abcdef123",
			path: "endpoints.main.url", line: 6, col: 5, hint: []string{"api_key_env: MAIN_KEY"}},
		{name: "metrics_url", metrics: "http://scrape:pw123456@vllm.svc:8000/metrics",
			path: "endpoints.main.metrics_url", line: 9, col: 5, hint: []string{"in-cluster Service", "perfdag run"}},
		{name: "step url", probe: "http://prom:tok3n-xyz@prometheus:9090",
			path: "pipeline[1].with.url", line: 14, col: 51, hint: []string{"with.token_env", "--from-literal=NAME="}},
		{name: "step without an env parameter", command: "http://hook.svc/notify?token=abcdef123",
			path: "pipeline[2].with.command", line: 19, col: 7, hint: []string{"kind shell reads no credential from the environment"}},
		{name: "lake password", lake: "postgres://perfdag:lakepw99@pg.svc:5432/lake",
			path: "publish.lake", line: 20, col: 11, hint: []string{"postgres://USER@HOST", "--from-literal=PGPASSWORD="}},
		{name: "clean"},
	} {
		t.Run(c.name, func(t *testing.T) {
			or := func(v, def string) string {
				if v == "" {
					return def
				}
				return v
			}
			src := probeCampaign(or(c.url, url), or(c.metrics, metrics), or(c.probe, probe), or(c.command, command), or(c.lake, lake))
			p, err := plan.Compile(enginetest.Load(t, src, probeKinds(t)))
			if err != nil {
				t.Fatal(err)
			}
			out, err := Export(p, Options{Source: []byte(src)})
			if c.path == "" {
				if err != nil {
					t.Fatalf("a campaign without credentials (one in a comment) is refused: %v", err)
				}
				if !strings.Contains(string(out), "hunter22") {
					t.Error("the comment did not reach the pods' copy as written")
				}
				return
			}
			var l diag.List
			if !errors.As(err, &l) || len(l) != 1 {
				t.Fatalf("want one positioned problem, got %v (manifest %d bytes)", err, len(out))
			}
			d := l[0]
			if d.File != "campaign.yaml" || d.Line != c.line || d.Col != c.col || !strings.HasPrefix(d.Message, c.path+" holds a credential") {
				t.Errorf("problem %s:%d:%d %q, want campaign.yaml:%d:%d at %s", d.File, d.Line, d.Col, d.Message, c.line, c.col, c.path)
			}
			for _, w := range c.hint {
				if !strings.Contains(d.Hint, w) {
					t.Errorf("hint %q does not say %q", d.Hint, w)
				}
			}
			if strings.Contains(d.Error()+d.Hint, "s3cr3t") {
				t.Error("the problem quotes the credential")
			}
		})
	}
}

// A step's token variable reaches every task from the Secret, once, beside the API keys.
func TestStepSecretEnv(t *testing.T) {
	src := probeCampaign("http://vllm.svc:8000/v1", "http://vllm.svc:8000/metrics", "http://prometheus:9090", "x", "sqlite://lake.db")
	p, err := plan.Compile(enginetest.Load(t, src, probeKinds(t)))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Manifest(p, Options{Secret: "keys", Source: []byte(src)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range workflowSpec(t, d).Templates {
		if tp.Container == nil || tp.Name == OutcomeTask {
			continue
		}
		var names []string
		for _, e := range tp.Container.Env {
			if ref := e.ValueFrom.SecretKeyRef; ref.Name != "keys" || ref.Key != e.Name {
				t.Errorf("%s: %s from %+v", tp.Name, e.Name, ref)
			}
			names = append(names, e.Name)
		}
		if !slices.Equal(names, []string{"MAIN_KEY", "PROM_TOKEN"}) {
			t.Errorf("template %s env %v, want MAIN_KEY and PROM_TOKEN", tp.Name, names)
		}
	}
}

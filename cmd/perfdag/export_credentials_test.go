package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/redact"
)

// credentialCampaign is a campaign whose endpoint, Prometheus query and lake may carry
// credentials (each %s pair replaced by the caller).
func credentialCampaign(endpoint, prometheus, lake string) string {
	return `version: 1
campaign: creds
endpoints:
  main:
    url: ` + endpoint + `
    model: m
cells:
  - {id: a, workload: {shape: aa-1k}, concurrencies: [1]}
pipeline:
  - {id: run, kind: run-shape}
  - id: dcgm
    kind: dcgm-correlate
    needs: [run]
    with: {source: prometheus, url: "` + prometheus + `", bearer_token_env: PROM_TOKEN}
  - {id: atlas, kind: aggregate, needs: [run, dcgm]}
  - {id: publish, kind: strict-publish, needs: [atlas]}
publish: {lake: "` + lake + `"}
`
}

// export argo refuses a campaign file holding credentials instead of shipping it to the pods
// with them masked: exit 3, every credential at its key's file:line:col with the masked
// source line, a caret and where the credential goes instead, and no manifest. Without
// them, the pods' copy of the campaign is the file as written and the Prometheus token's
// variable comes from the Secret.
func TestExportArgoRefusesCredentials(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "creds.yaml")
	src := credentialCampaign("http://alice:s3cr3t-pw@vllm.svc:8000/v1?api_key=k3y-abcdef",
		"http://prom:t0ken-xyz@prometheus:9090", "postgres://perfdag:l4kepw-99@pg.svc:5432/lake")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	a := testApp()
	a.stdout, a.stderr = &out, &errb
	if code := a.main([]string{"export", "argo", file}); code != ExitInvalid {
		t.Fatalf("exit %d, want %d (invalid campaign file):\n%s", code, ExitInvalid, errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("a manifest was printed:\n%s", out.String())
	}
	msg := errb.String()
	for _, want := range []string{
		file + ":5:5: endpoints.main.url holds a credential",
		" 5 |     url: http://alice:*********@vllm.svc:8000/v1?api_key=**********\n   |     ^\n",
		"api_key_env: INFERENCE_API_KEY",
		"kubectl create secret generic perfdag-api-keys --from-literal=INFERENCE_API_KEY=",
		file + ":14:32: pipeline[1].with.url holds a credential",
		"set with.bearer_token_env to the name of an environment variable",
		file + ":17:11: publish.lake holds a credential",
		"--from-literal=PGPASSWORD=",
		"3 problems found",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q:\n%s", want, msg)
		}
	}
	for _, leak := range []string{"s3cr3t", "k3y-abcdef", "t0ken", "l4kepw"} {
		if strings.Contains(msg, leak) {
			t.Errorf("stderr quotes the credential %q", leak)
		}
	}

	clean := filepath.Join(dir, "clean.yaml")
	src = credentialCampaign("http://vllm.svc:8000/v1", "http://prometheus:9090", "postgres://perfdag@pg.svc:5432/lake")
	if err := os.WriteFile(clean, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m := exportArgo(t, clean)
	validateArgo(t, m)
	if bytes.Contains(m, []byte(redact.Mask)) || !bytes.Contains(m, []byte(`url: "http://prometheus:9090", bearer_token_env: PROM_TOKEN`)) {
		t.Errorf("the pods' copy of the campaign is not the file as written:\n%s", m)
	}
	for _, want := range []string{"- name: PROM_TOKEN\n", "key: PROM_TOKEN\n", "key: PGPASSWORD\n"} {
		if !bytes.Contains(m, []byte(want)) {
			t.Errorf("manifest lacks %q", want)
		}
	}
}

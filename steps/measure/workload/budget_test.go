package workload

import (
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

func TestResolve(t *testing.T) {
	cases := []struct {
		name    string
		w       schema.Workload
		want    Budget
		wantErr string // substring; "" means success
	}{
		{"aa-1k", schema.Workload{Shape: "aa-1k"}, Budget{"aa-1k", 1000, 1000}, ""},
		{"aa-10k", schema.Workload{Shape: "aa-10k"}, Budget{"aa-10k", 10000, 1500}, ""},
		{"aa-100k", schema.Workload{Shape: "aa-100k"}, Budget{"aa-100k", 100000, 2000}, ""},
		{"shape with input override", schema.Workload{Shape: "aa-10k", InputTokens: 8000}, Budget{"aa-10k", 8000, 1500}, ""},
		{"shape with output override", schema.Workload{Shape: "aa-1k", OutputTokens: 64}, Budget{"aa-1k", 1000, 64}, ""},
		{"custom", schema.Workload{Shape: "custom", InputTokens: 512, OutputTokens: 128}, Budget{"custom", 512, 128}, ""},
		{"no shape, both tokens", schema.Workload{InputTokens: 2048, OutputTokens: 256}, Budget{"custom", 2048, 256}, ""},
		{"unknown shape lists valid ones", schema.Workload{Shape: "aa-5k"}, Budget{}, `workload.shape: unknown shape "aa-5k"; valid shapes: aa-1k, aa-10k, aa-100k, custom`},
		{"nothing set", schema.Workload{}, Budget{}, "workload: set shape (one of aa-1k, aa-10k, aa-100k, custom) or input_tokens and output_tokens"},
		{"custom without input", schema.Workload{Shape: "custom", OutputTokens: 5}, Budget{}, "workload.input_tokens: required when shape is custom"},
		{"custom without output", schema.Workload{Shape: "custom", InputTokens: 5}, Budget{}, "workload.output_tokens: required when shape is custom"},
		{"no shape, no input", schema.Workload{OutputTokens: 5}, Budget{}, "workload.input_tokens: required when no shape is set"},
		{"no shape, no output", schema.Workload{InputTokens: 5}, Budget{}, "workload.output_tokens: required when no shape is set"},
		{"negative input", schema.Workload{Shape: "aa-1k", InputTokens: -1}, Budget{}, "workload.input_tokens: -1 is negative"},
		{"negative output", schema.Workload{Shape: "aa-1k", OutputTokens: -3}, Budget{}, "workload.output_tokens: -3 is negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Resolve(c.w)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("Resolve error = %v, want it to contain %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Resolve = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestMode(t *testing.T) {
	cases := []struct {
		w       schema.Workload
		want    string
		wantErr string
	}{
		{schema.Workload{}, ModeSynthetic, ""},
		{schema.Workload{Mode: "synthetic"}, ModeSynthetic, ""},
		{schema.Workload{Mode: "dataset-replay", Dataset: "a.jsonl"}, ModeReplay, ""},
		{schema.Workload{Mode: "replay"}, "", `workload.mode: unknown mode "replay"; valid modes: synthetic, dataset-replay`},
		{schema.Workload{Mode: "dataset-replay"}, "", "workload.dataset: required in mode dataset-replay"},
		{schema.Workload{Dataset: "a.jsonl"}, "", `workload.dataset: "a.jsonl" is only read in mode dataset-replay`},
		{schema.Workload{Mode: "dataset-replay", Dataset: "a.jsonl", InputTokens: 10}, "", "workload.input_tokens: not used in mode dataset-replay"},
	}
	for _, c := range cases {
		got, err := mode(c.w)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("mode(%+v) error = %v, want it to contain %q", c.w, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("mode(%+v) = %q, %v; want %q", c.w, got, err, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	cases := []struct {
		w    schema.Workload
		want string // "" = valid
	}{
		{schema.Workload{Shape: "aa-1k"}, ""},
		{schema.Workload{Mode: ModeReplay, Dataset: "d.jsonl"}, ""},
		{schema.Workload{Mode: ModeReplay, Dataset: "d.jsonl", Shape: "aa-10k"}, ""},
		{schema.Workload{Mode: ModeReplay}, "workload.dataset: required"},
		{schema.Workload{Shape: "aa-1k", Dataset: "d.jsonl"}, "only read in mode"},
		{schema.Workload{Shape: "aa-2k"}, "unknown shape"},
		{schema.Workload{InputTokens: 8, OutputTokens: 8}, "below the synthetic minimum"},
	}
	for _, c := range cases {
		err := Check(c.w)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.w, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: err %v, want %q", c.w, err, c.want)
		}
	}
}

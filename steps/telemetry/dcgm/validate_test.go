package dcgm

import (
	"os"
	"strings"
	"testing"
)

// good is a minimal valid file; each bad case edits one line of it.
const good = `schema: dcgm_frozen_v1
units:
  ratio: ratio
  bandwidth: bytes/s
  power: W
points:
  - concurrency: 4
    gpus:
      - gpu: 0
        means: {sm_active: 0.5, dram_active: 0.4, pcie_tx_bytes_s: 1e8, pcie_rx_bytes_s: 1e8, power_w: 400}
`

func TestFrozenGoodMinimal(t *testing.T) {
	if _, err := ParseFrozen("good.yaml", []byte(good)); err != nil {
		t.Fatal(err)
	}
}

func TestFrozenBadInputs(t *testing.T) {
	tests := []struct {
		name     string
		old, new string // replace old with new in good
		want     []string
	}{
		{
			name: "ratio given as percent",
			old:  "sm_active: 0.5", new: "sm_active: 85",
			want: []string{"bad.yaml:10:28: points[0].gpus[0].means.sm_active: 85 is not a ratio 0-1: this looks like percent; write 0.85"},
		},
		{
			name: "bandwidth in MB/s",
			old:  "bandwidth: bytes/s", new: `bandwidth: "MB/s"`,
			want: []string{"bad.yaml:4:14: units.bandwidth:", `"MB/s" is not accepted: write bytes/s and multiply each value by 1e6`},
		},
		{
			name: "ratio unit percent",
			old:  "ratio: ratio", new: "ratio: percent",
			want: []string{"bad.yaml:3:10: units.ratio:", "write ratio and divide each value by 100"},
		},
		{
			name: "bits per second",
			old:  "bandwidth: bytes/s", new: "bandwidth: b/s",
			want: []string{"units.bandwidth:", "bits per second: write bytes/s and divide each value by 8"},
		},
		{
			name: "power in mW",
			old:  "power: W", new: "power: mW",
			want: []string{"bad.yaml:5:10: units.power:", "write W and divide each value by 1000"},
		},
		{
			name: "missing unit reported at its parent",
			old:  "  power: W\n", new: "",
			want: []string{"bad.yaml:3:3: units.power: missing: write W"},
		},
		{
			name: "unknown key",
			old:  "sm_active: 0.5", new: "smactive: 0.5",
			want: []string{`bad.yaml:10:17: unknown field "smactive"`},
		},
		{
			name: "missing concurrency",
			old:  "  - concurrency: 4\n    gpus:", new: "  - gpus:",
			want: []string{"points[0].concurrency: missing or not positive"},
		},
		{
			name: "wrong type names the key",
			old:  "gpu: 0", new: "gpu: zero",
			want: []string{"bad.yaml:9:14: gpu:", "cannot unmarshal string"},
		},
		{
			name: "missing gpu index",
			old:  "      - gpu: 0\n        means:", new: "      - means:",
			want: []string{"points[0].gpus[0].gpu: missing: write the GPU index"},
		},
		{
			name: "one link direction only",
			old:  "pcie_rx_bytes_s: 1e8, ", new: "",
			want: []string{"points[0].gpus[0].means.pcie_tx_bytes_s: given without pcie_rx_bytes_s"},
		},
		{
			name: "power implausible",
			old:  "power_w: 400", new: "power_w: 400000",
			want: []string{"means.power_w: 400000 W per GPU is implausible: if this is mW, write 400"},
		},
		{
			name: "power given twice",
			old:  "    gpus:", new: "    power_watts_per_gpu: 500\n    gpus:",
			want: []string{"points[0].gpus[0].means.power_w: power is also given as the point's power_watts_per_gpu"},
		},
		{
			name: "wrong schema",
			old:  "schema: dcgm_frozen_v1", new: "schema: dcgm_v0",
			want: []string{"bad.yaml:1:9: schema:", "write schema: dcgm_frozen_v1"},
		},
		{
			name: "start without end",
			old:  "    gpus:", new: "    start: 2026-05-01T10:00:00Z\n    gpus:",
			want: []string{"points[0]: give both start and end, or neither"},
		},
		{
			name: "means and samples",
			old:  "power_w: 400}", new: "power_w: 400}\n        samples: [{t: 2026-05-01T10:00:00Z, sm_active: 0.1}]",
			want: []string{"points[0].gpus[0]: give means or samples, not both"},
		},
		{
			name: "sample without time",
			old:  "means: {sm_active: 0.5, dram_active: 0.4, pcie_tx_bytes_s: 1e8, pcie_rx_bytes_s: 1e8, power_w: 400}", new: "samples: [{sm_active: 0.1}]",
			want: []string{"points[0].gpus[0].samples[0].t: missing"},
		},
		{
			name: "empty means",
			old:  "means: {sm_active: 0.5, dram_active: 0.4, pcie_tx_bytes_s: 1e8, pcie_rx_bytes_s: 1e8, power_w: 400}", new: "means: {}",
			want: []string{"points[0].gpus[0].means: no DCGM field given"},
		},
		{
			name: "every problem reported at once",
			old:  "ratio: ratio\n  bandwidth: bytes/s", new: "ratio: \"%\"\n  bandwidth: GB/s",
			want: []string{"2 problems:", "units.ratio:", "units.bandwidth:", "multiply each value by 1e9"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("test edit %q does not apply", tc.old)
			}
			src, err := ParseFrozen("bad.yaml", []byte(strings.Replace(good, tc.old, tc.new, 1)))
			if err == nil {
				t.Fatal("accepted a bad file")
			}
			if src != nil {
				t.Fatal("a bad file must yield no source")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestDocExampleIsValid keeps the format description in doc.go honest: its example must load.
func TestDocExampleIsValid(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var yml []string
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "//\t"); ok {
			yml = append(yml, rest)
		}
	}
	if len(yml) < 10 {
		t.Fatalf("doc.go example not found (%d lines)", len(yml))
	}
	if _, err := ParseFrozen("doc.go example", []byte(strings.Join(yml, "\n"))); err != nil {
		t.Fatal(err)
	}
}

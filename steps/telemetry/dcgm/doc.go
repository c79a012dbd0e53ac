// Package dcgm correlates NVIDIA DCGM telemetry with benchmark points: for each point's window it
// produces the per-GPU window means of SM activity and occupancy, tensor-pipe, DRAM and
// graphics-engine activity, NVLink and PCIe bytes/s and board power, averaged over GPUs
// (schema.DCGMPoint), then derives tokens per watt and whether the cell is DCGM-grounded
// (schema.DCGMCorrelation, sol_rigor L3).
//
// Three sources stand behind one Source interface and reduce samples with the same code, so the
// same telemetry gives the same means from each:
//   - FrozenSource: a dcgm_frozen_v1 YAML file (below), for offline grounding.
//   - PrometheusSource: a Prometheus server's /api/v1/query_range over each window.
//   - ExporterSource: samples a Sampler took from a DCGM exporter's /metrics during the run.
//
// Everywhere, a DCGM blank (a value ≥ 9.2e18), NaN or Inf is missing, never a reading; both the
// exporter's old Hostname label and its newer hostname label are read; a GPU's NVLink or PCIe
// rate is TX + RX, reported only when both directions (or a stated total) were captured.
//
// # The dcgm_frozen_v1 format
//
// A frozen file holds, per concurrency point and per GPU, either window means or timestamped
// samples of the DCGM fields. Units are declared in the file and only the canonical ones are
// accepted: a file that says percent, MB/s or mW is refused with the conversion to make, never
// converted silently. Decoding is strict: an unknown key is an error. Every problem of a file is
// reported at once as file:line:col: field: message, and nothing is produced from a bad file.
// testdata/dcgm_frozen_example.yaml is a complete example.
//
//	schema: dcgm_frozen_v1             # required
//	source: dcgmi dmon -e 1001,...     # optional: how and where it was captured
//	hostname: gpu-node-7               # optional
//	units:                             # required, all three
//	  ratio: ratio                     # activity fields are ratios 0-1 (not percent)
//	  bandwidth: bytes/s               # nvlink_* and pcie_* (not MB/s, GB/s or bits)
//	  power: W                         # power_w and power_watts_per_gpu (not mW)
//	power_watts_per_gpu: 612.5         # optional: for points that carry no power of their own
//	points:
//	  - concurrency: 8                 # required, unique; matches the cell's point
//	    start: 2026-05-01T10:00:00Z    # optional window (both or neither); samples outside
//	    end:   2026-05-01T10:05:00Z    #   it are ignored; without it the run's window is used
//	    power_watts_per_gpu: 640       # optional; then no power_w under its GPUs
//	    gpus:                          # required: one entry per GPU serving the endpoint
//	      - gpu: 0                     # required index; uuid: optional
//	        means: {sm_active: 0.82, sm_occupancy: 0.41, tensor_active: 0.37,
//	                dram_active: 0.66, gr_engine_active: 0.97,
//	                nvlink_tx_bytes_s: 2.1e10, nvlink_rx_bytes_s: 2.0e10,
//	                pcie_tx_bytes_s: 3.1e8, pcie_rx_bytes_s: 2.9e8}
//	      - gpu: 1                     # or samples (mean over those inside the window)
//	        samples:
//	          - {t: 2026-05-01T10:00:01Z, sm_active: 0.80, dram_active: 0.65}
//	          - {t: 2026-05-01T10:00:02Z, sm_active: 0.84, dram_active: 0.67}
//
// Field keys name their DCGM source: sm_active (DCGM_FI_PROF_SM_ACTIVE), sm_occupancy,
// tensor_active (PIPE_TENSOR_ACTIVE), dram_active, gr_engine_active; nvlink_tx_bytes_s and
// nvlink_rx_bytes_s (PROF_NVLINK_TX/RX_BYTES) or their total nvlink_bytes_s; pcie_tx_bytes_s and
// pcie_rx_bytes_s or pcie_bytes_s; power_w (DEV_POWER_USAGE). Every field is optional (absent
// stays null), but a GPU entry must give at least one. A cell is grounded only when every point
// has dram_active and an NVLink or PCIe rate; tokens_per_watt needs power.
package dcgm

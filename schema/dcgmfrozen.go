package schema

import "time"

// DCGMFrozenSchema names the frozen DCGM snapshot format read by dcgm-correlate's frozen source.
const DCGMFrozenSchema = "dcgm_frozen_v1"

// DCGMFrozen is a dcgm_frozen_v1 file: DCGM telemetry captured during a cell's run windows and
// frozen to YAML, so a campaign can be DCGM-grounded offline (steps/telemetry/dcgm documents the format).
type DCGMFrozen struct {
	Schema           string            `yaml:"schema" json:"schema" doc:"must be dcgm_frozen_v1"`
	Source           string            `yaml:"source,omitempty" json:"source,omitempty" doc:"how the capture was made: tool, node, date"`
	Hostname         string            `yaml:"hostname,omitempty" json:"hostname,omitempty" doc:"node the GPUs belong to"`
	Units            DCGMFrozenUnits   `yaml:"units" json:"units" doc:"units of every value in the file; stated, never guessed"`
	PowerWattsPerGPU *float64          `yaml:"power_watts_per_gpu,omitempty" json:"power_watts_per_gpu,omitempty" doc:"board power per GPU in W for points that carry no power of their own"`
	Points           []DCGMFrozenPoint `yaml:"points" json:"points" doc:"one entry per concurrency point"`
}

// DCGMFrozenUnits declares the file's units; only the canonical ones are accepted.
type DCGMFrozenUnits struct {
	Ratio     string `yaml:"ratio" json:"ratio" doc:"unit of sm_active, sm_occupancy, tensor_active, dram_active, gr_engine_active: ratio (0-1)"`
	Bandwidth string `yaml:"bandwidth" json:"bandwidth" doc:"unit of the nvlink and pcie fields: bytes/s"`
	Power     string `yaml:"power" json:"power" doc:"unit of power fields: W"`
}

// DCGMFrozenPoint is one concurrency point's capture, per GPU.
type DCGMFrozenPoint struct {
	Concurrency      int             `yaml:"concurrency" json:"concurrency" doc:"the point's concurrency, matching the campaign cell (a rate point's in-flight cap)"`
	Load             string          `yaml:"load,omitempty" json:"load,omitempty" doc:"the point's key (c16, r2.5-cap64) when concurrency alone does not name it: rate points of one cell sharing a cap"`
	Start            *time.Time      `yaml:"start,omitempty" json:"start,omitempty" doc:"window start (RFC 3339); samples before it are ignored"`
	End              *time.Time      `yaml:"end,omitempty" json:"end,omitempty" doc:"window end (RFC 3339); samples after it are ignored"`
	PowerWattsPerGPU *float64        `yaml:"power_watts_per_gpu,omitempty" json:"power_watts_per_gpu,omitempty" doc:"board power per GPU in W over the window"`
	GPUs             []DCGMFrozenGPU `yaml:"gpus" json:"gpus" doc:"one entry per GPU serving the endpoint"`
}

// Matches reports whether the entry is the capture of point l: by its load key when it names
// one, else by concurrency (a closed-loop point's, or a rate point's in-flight cap).
func (p *DCGMFrozenPoint) Matches(l Load) bool {
	if p.Load != "" {
		return p.Load == l.Key()
	}
	return p.Concurrency == l.InFlight()
}

// DCGMFrozenGPU is one GPU's data at one point: window means or timestamped samples, not both.
type DCGMFrozenGPU struct {
	GPU     *int               `yaml:"gpu" json:"gpu" doc:"GPU index on the node"`
	UUID    string             `yaml:"uuid,omitempty" json:"uuid,omitempty" doc:"GPU UUID, when known"`
	Means   *DCGMFields        `yaml:"means,omitempty" json:"means,omitempty" doc:"window means of the DCGM fields"`
	Samples []DCGMFrozenSample `yaml:"samples,omitempty" json:"samples,omitempty" doc:"timestamped samples; their mean over the window is used"`
}

// DCGMFrozenSample is one timestamped reading of a GPU's DCGM fields.
type DCGMFrozenSample struct {
	T          *time.Time `yaml:"t" json:"t" doc:"sample time (RFC 3339)"`
	DCGMFields `yaml:",inline"`
}

// DCGMFields are the DCGM fields perfdag correlates, in canonical units; nil means not captured.
type DCGMFields struct {
	SMActive       *float64 `yaml:"sm_active,omitempty" json:"sm_active,omitempty" doc:"DCGM_FI_PROF_SM_ACTIVE, ratio 0-1"`
	SMOccupancy    *float64 `yaml:"sm_occupancy,omitempty" json:"sm_occupancy,omitempty" doc:"DCGM_FI_PROF_SM_OCCUPANCY, ratio 0-1"`
	TensorActive   *float64 `yaml:"tensor_active,omitempty" json:"tensor_active,omitempty" doc:"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, ratio 0-1"`
	DRAMActive     *float64 `yaml:"dram_active,omitempty" json:"dram_active,omitempty" doc:"DCGM_FI_PROF_DRAM_ACTIVE, ratio 0-1"`
	GREngineActive *float64 `yaml:"gr_engine_active,omitempty" json:"gr_engine_active,omitempty" doc:"DCGM_FI_PROF_GR_ENGINE_ACTIVE, ratio 0-1"`
	NVLinkTXBytesS *float64 `yaml:"nvlink_tx_bytes_s,omitempty" json:"nvlink_tx_bytes_s,omitempty" doc:"DCGM_FI_PROF_NVLINK_TX_BYTES, bytes/s"`
	NVLinkRXBytesS *float64 `yaml:"nvlink_rx_bytes_s,omitempty" json:"nvlink_rx_bytes_s,omitempty" doc:"DCGM_FI_PROF_NVLINK_RX_BYTES, bytes/s"`
	NVLinkBytesS   *float64 `yaml:"nvlink_bytes_s,omitempty" json:"nvlink_bytes_s,omitempty" doc:"NVLink TX+RX in bytes/s, when only the total is known"`
	PCIeTXBytesS   *float64 `yaml:"pcie_tx_bytes_s,omitempty" json:"pcie_tx_bytes_s,omitempty" doc:"DCGM_FI_PROF_PCIE_TX_BYTES, bytes/s"`
	PCIeRXBytesS   *float64 `yaml:"pcie_rx_bytes_s,omitempty" json:"pcie_rx_bytes_s,omitempty" doc:"DCGM_FI_PROF_PCIE_RX_BYTES, bytes/s"`
	PCIeBytesS     *float64 `yaml:"pcie_bytes_s,omitempty" json:"pcie_bytes_s,omitempty" doc:"PCIe TX+RX in bytes/s, when only the total is known"`
	PowerWatts     *float64 `yaml:"power_w,omitempty" json:"power_w,omitempty" doc:"DCGM_FI_DEV_POWER_USAGE, W"`
}

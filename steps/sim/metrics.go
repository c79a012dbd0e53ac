package sim

import (
	"fmt"
	"math"
	"net/http"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// GPUModel and Hostname label the simulated DCGM series.
const (
	GPUModel = "NVIDIA H100 80GB HBM3"
	Hostname = "perfdag-sim"
)

// GPUGauges are the DCGM-exporter values of one simulated GPU.
type GPUGauges struct {
	SMActive, SMOccupancy, TensorActive, DRAMActive, GREngineActive float64 // ratios 0–1
	NVLinkTxBytes, NVLinkRxBytes, PCIeTxBytes, PCIeRxBytes          float64 // bytes per second
	PowerW                                                          float64
	GPUUtil                                                         float64 // percent
}

// DCGMAt returns the gauges every GPU exports while running requests are in the batch, so a
// test can predict a scrape: with load L = running / (running + 8),
// SM active 0.9·L, SM occupancy 0.45·L, tensor 0.6·L, DRAM 0.75·L, GR engine 0.95·L,
// power 70 + 630·L W, GPU util 100 % while anything runs, PCIe 1e9·L B/s out and 2e9·L in,
// NVLink 40e9·L B/s each way when the model spans more than one GPU.
func DCGMAt(running, gpus int) GPUGauges {
	r := float64(max(running, 0))
	l := r / (r + 8)
	g := GPUGauges{
		SMActive: 0.9 * l, SMOccupancy: 0.45 * l, TensorActive: 0.6 * l, DRAMActive: 0.75 * l, GREngineActive: 0.95 * l,
		PCIeTxBytes: 1e9 * l, PCIeRxBytes: 2e9 * l, PowerW: 70 + 630*l,
	}
	if running > 0 {
		g.GPUUtil = 100
	}
	if gpus > 1 {
		g.NVLinkTxBytes, g.NVLinkRxBytes = 40e9*l, 40e9*l
	}
	return g
}

// SpecCounters derives vLLM's spec-decode counters from the tokens generated so far, so that
// accepted / draft tokens equals rate and 1 + accepted / drafts equals the mean acceptance
// length 1 + k·rate (up to integer rounding): every verify step emits 1 + k·rate tokens.
func SpecCounters(generated int64, rate float64, k int) (drafts, draftTokens, accepted int64) {
	if rate <= 0 || k <= 0 {
		return 0, 0, 0
	}
	drafts = int64(math.Floor(float64(generated) / (1 + float64(k)*rate)))
	draftTokens = drafts * int64(k)
	accepted = int64(math.Round(float64(draftTokens) * rate))
	return drafts, draftTokens, accepted
}

func family(name, help string, typ dto.MetricType, labels []*dto.LabelPair, v float64) *dto.MetricFamily {
	m := &dto.Metric{Label: labels}
	switch typ {
	case dto.MetricType_COUNTER:
		m.Counter = &dto.Counter{Value: &v}
	default:
		m.Gauge = &dto.Gauge{Value: &v}
	}
	return &dto.MetricFamily{Name: &name, Help: &help, Type: typ.Enum(), Metric: []*dto.Metric{m}}
}

func label(k, v string) *dto.LabelPair { return &dto.LabelPair{Name: &k, Value: &v} }

// writeFamilies encodes families in the Prometheus text format with expfmt.
func writeFamilies(w http.ResponseWriter, fams []*dto.MetricFamily) {
	format := expfmt.NewFormat(expfmt.TypeTextPlain)
	w.Header().Set("Content-Type", string(format))
	enc := expfmt.NewEncoder(w, format)
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			return // the scraper went away
		}
	}
}

// vllmFamilies is the simulator's /metrics content.
func (s *Sim) vllmFamilies() []*dto.MetricFamily {
	snap := s.state.snapshot()
	labels := []*dto.LabelPair{label("engine", "0"), label("model_name", s.model)}
	gauge, counter := dto.MetricType_GAUGE, dto.MetricType_COUNTER
	kv := math.Min(1, float64(snap.kvTokens)/KVCapacityTokens)
	fams := []*dto.MetricFamily{
		family("vllm:num_requests_running", "Number of requests in model execution batches.", gauge, labels, float64(snap.running)),
		family("vllm:num_requests_waiting", "Number of requests waiting to be processed.", gauge, labels, float64(snap.waiting)),
		family("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", gauge, labels, kv),
		family("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", counter, labels, float64(snap.prefixQueries)),
		family("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", counter, labels, float64(snap.prefixHits)),
		family("vllm:prompt_tokens_total", "Number of prefill tokens processed.", counter, labels, float64(snap.promptTokens)),
		family("vllm:generation_tokens_total", "Number of generation tokens processed.", counter, labels, float64(snap.genTokens)),
	}
	if s.p.specRate > 0 {
		d, dt, a := SpecCounters(snap.genTokens, s.p.specRate, s.p.specTokens)
		fams = append(fams,
			family("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", counter, labels, float64(d)),
			family("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", counter, labels, float64(dt)),
			family("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", counter, labels, float64(a)),
		)
	}
	return fams
}

func (s *Sim) metrics(w http.ResponseWriter, _ *http.Request) { writeFamilies(w, s.vllmFamilies()) }

// dcgm serves DCGM-exporter-format gauges, one series per GPU.
func (s *Sim) dcgm(w http.ResponseWriter, _ *http.Request) {
	running, _ := s.state.load()
	g := DCGMAt(running, s.p.gpus)
	fields := []struct {
		name, help string
		v          float64
	}{
		{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.", g.GREngineActive},
		{"DCGM_FI_PROF_SM_ACTIVE", "The ratio of cycles an SM has at least 1 warp assigned.", g.SMActive},
		{"DCGM_FI_PROF_SM_OCCUPANCY", "The ratio of number of warps resident on an SM.", g.SMOccupancy},
		{"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "Ratio of cycles the tensor (HMMA) pipe is active.", g.TensorActive},
		{"DCGM_FI_PROF_DRAM_ACTIVE", "Ratio of cycles the device memory interface is active sending or receiving data.", g.DRAMActive},
		{"DCGM_FI_PROF_NVLINK_TX_BYTES", "The rate of data transmitted over NVLink, not including protocol headers, in bytes per second.", g.NVLinkTxBytes},
		{"DCGM_FI_PROF_NVLINK_RX_BYTES", "The rate of data received over NVLink, not including protocol headers, in bytes per second.", g.NVLinkRxBytes},
		{"DCGM_FI_PROF_PCIE_TX_BYTES", "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", g.PCIeTxBytes},
		{"DCGM_FI_PROF_PCIE_RX_BYTES", "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", g.PCIeRxBytes},
		{"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", g.PowerW},
		{"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", g.GPUUtil},
	}
	fams := make([]*dto.MetricFamily, 0, len(fields))
	for _, f := range fields {
		name, help := f.name, f.help
		fam := &dto.MetricFamily{Name: &name, Help: &help, Type: dto.MetricType_GAUGE.Enum()}
		for i := range s.p.gpus {
			v := f.v
			fam.Metric = append(fam.Metric, &dto.Metric{Label: gpuLabels(s.p.seed, i), Gauge: &dto.Gauge{Value: &v}})
		}
		fams = append(fams, fam)
	}
	writeFamilies(w, fams)
}

// gpuLabels are the DCGM exporter's per-GPU labels, in its order; the UUID is derived from
// the seed and the index so it is stable across runs.
func gpuLabels(seed int64, i int) []*dto.LabelPair {
	h := uint64(seed)*0x9E3779B97F4A7C15 + uint64(i+1)*0xBF58476D1CE4E5B9
	uuid := fmt.Sprintf("GPU-%08x-%04x-%04x-%04x-%012x", uint32(h>>32), uint16(h>>16), uint16(h), uint16(h>>48)^uint16(i), h&0xffffffffffff)
	return []*dto.LabelPair{
		label("gpu", strconv.Itoa(i)), label("UUID", uuid), label("pci_bus_id", fmt.Sprintf("00000000:%02X:00.0", 0x18+i*0x10)),
		label("device", "nvidia"+strconv.Itoa(i)), label("modelName", GPUModel), label("Hostname", Hostname),
	}
}

package dcgm

import (
	"math"
	"sort"

	"github.com/perfdag/perfdag/schema"
)

// BlankSentinel is the smallest value treated as a DCGM "blank" (a field the driver could not
// read is exported as ≈9.22e18); such a value is missing, never a reading.
const BlankSentinel = 9.2e18

// slot indexes the per-GPU values an accumulator keeps (the schema.DCGMFields in order).
type slot int

const (
	slotSMActive slot = iota
	slotSMOccupancy
	slotTensorActive
	slotDRAMActive
	slotGREngineActive
	slotNVLinkTX
	slotNVLinkRX
	slotNVLinkTotal
	slotPCIeTX
	slotPCIeRX
	slotPCIeTotal
	slotPower
	numSlots
)

// exporterField is one DCGM exporter metric perfdag reads: its names (the one the default CSV
// prints first, then DCGM 4.6 renames) and the HELP text ExporterText writes.
type exporterField struct {
	slot  slot
	names []string
	help  string
}

// exporterFields is the read-only table of metrics read from an exporter or Prometheus
// (reference/telemetry.md §2.2). Totals (slotNVLinkTotal, slotPCIeTotal) exist only in frozen files.
var exporterFields = []exporterField{
	{slotSMActive, []string{"DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_UTIL_RATIO"}, "Ratio of cycles an SM has at least 1 warp assigned."},
	{slotSMOccupancy, []string{"DCGM_FI_PROF_SM_OCCUPANCY"}, "Ratio of warps resident on an SM to the theoretical maximum."},
	{slotTensorActive, []string{"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_TENSOR_UTIL_RATIO"}, "Ratio of cycles the tensor (HMMA) pipe is active."},
	{slotDRAMActive, []string{"DCGM_FI_PROF_DRAM_ACTIVE"}, "Ratio of cycles the device memory interface is active sending or receiving data."},
	{slotGREngineActive, []string{"DCGM_FI_PROF_GR_ENGINE_ACTIVE"}, "Ratio of time the graphics engine is active."},
	{slotNVLinkTX, []string{"DCGM_FI_PROF_NVLINK_TX_BYTES"}, "The rate of data transmitted over NVLink, not including protocol headers, in bytes per second."},
	{slotNVLinkRX, []string{"DCGM_FI_PROF_NVLINK_RX_BYTES"}, "The rate of data received over NVLink, not including protocol headers, in bytes per second."},
	{slotPCIeTX, []string{"DCGM_FI_PROF_PCIE_TX_BYTES"}, "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second."},
	{slotPCIeRX, []string{"DCGM_FI_PROF_PCIE_RX_BYTES"}, "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second."},
	{slotPower, []string{"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_BOARD_POWER_WATTS"}, "Power draw (in W)."},
}

// fieldPtrs lists a DCGMFields' slots in slot order, for reading and writing by index.
func fieldPtrs(f *schema.DCGMFields) [numSlots]**float64 {
	return [numSlots]**float64{
		&f.SMActive, &f.SMOccupancy, &f.TensorActive, &f.DRAMActive, &f.GREngineActive,
		&f.NVLinkTXBytesS, &f.NVLinkRXBytesS, &f.NVLinkBytesS,
		&f.PCIeTXBytesS, &f.PCIeRXBytesS, &f.PCIeBytesS, &f.PowerWatts,
	}
}

// usable reports whether an exported value is a reading (not NaN, ±Inf or a DCGM blank).
func usable(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v < BlankSentinel
}

// accumulator collects values per GPU and slot and reduces them to one point: the mean of each
// GPU's values over the window, then the mean over the GPUs that reported the field.
type accumulator struct {
	gpus    map[string]*gpuSums
	sampled bool // values are samples (count them), not frozen window means
}

type gpuSums struct {
	sum [numSlots]float64
	n   [numSlots]int
}

func newAccumulator(sampled bool) *accumulator {
	return &accumulator{gpus: map[string]*gpuSums{}, sampled: sampled}
}

func (a *accumulator) add(gpu string, s slot, v float64) {
	if !usable(v) {
		return
	}
	g := a.gpus[gpu]
	if g == nil {
		g = &gpuSums{}
		a.gpus[gpu] = g
	}
	g.sum[s] += v
	g.n[s]++
}

func (a *accumulator) addFields(gpu string, f *schema.DCGMFields) {
	for s, p := range fieldPtrs(f) {
		if *p != nil {
			a.add(gpu, slot(s), **p)
		}
	}
}

// mean of one GPU's slot, and whether it has any value.
func (g *gpuSums) mean(s slot) (float64, bool) {
	if g.n[s] == 0 {
		return 0, false
	}
	return g.sum[s] / float64(g.n[s]), true
}

// link is a GPU's TX+RX rate: the stated total, else TX and RX when both were captured (one
// direction alone is not the total and is not reported).
func (g *gpuSums) link(tx, rx, total slot) (float64, bool) {
	if v, ok := g.mean(total); ok {
		return v, true
	}
	t, okT := g.mean(tx)
	r, okR := g.mean(rx)
	return t + r, okT && okR
}

// point reduces the accumulated values to window means averaged over GPUs.
func (a *accumulator) point() schema.DCGMPoint {
	var p schema.DCGMPoint
	keys := make([]string, 0, len(a.gpus))
	for k := range a.gpus {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a fixed order makes the float sums reproducible
	type getter func(g *gpuSums) (float64, bool)
	plain := func(s slot) getter { return func(g *gpuSums) (float64, bool) { return g.mean(s) } }
	outs := []struct {
		dst **float64
		get getter
	}{
		{&p.SMActive, plain(slotSMActive)},
		{&p.SMOccupancy, plain(slotSMOccupancy)},
		{&p.TensorActive, plain(slotTensorActive)},
		{&p.DRAMActive, plain(slotDRAMActive)},
		{&p.GREngineActive, plain(slotGREngineActive)},
		{&p.NVLinkBytesPerS, func(g *gpuSums) (float64, bool) { return g.link(slotNVLinkTX, slotNVLinkRX, slotNVLinkTotal) }},
		{&p.PCIeBytesPerS, func(g *gpuSums) (float64, bool) { return g.link(slotPCIeTX, slotPCIeRX, slotPCIeTotal) }},
		{&p.PowerWattsPerGPU, plain(slotPower)},
	}
	for _, o := range outs {
		sum, n := 0.0, 0
		for _, k := range keys {
			if v, ok := o.get(a.gpus[k]); ok {
				sum += v
				n++
			}
		}
		if n > 0 {
			m := sum / float64(n)
			*o.dst = &m
		}
	}
	p.GPUs = len(keys)
	if a.sampled {
		for i, k := range keys {
			most := 0
			for _, n := range a.gpus[k].n {
				most = max(most, n)
			}
			if i == 0 || most < p.Samples {
				p.Samples = most
			}
		}
	}
	return p
}

// gpuKey identifies a GPU across samples and series: its node (host label, else the Prometheus
// instance) and its UUID, else its index.
func gpuKey(label func(names ...string) string) string {
	host := label("Hostname", "hostname", "instance")
	id := label("UUID", "uuid", "gpu_uuid")
	if id == "" {
		id = "gpu" + label("gpu")
	}
	return host + "/" + id
}

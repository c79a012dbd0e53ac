package roofline

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/catalog"
)

// BytesPerWeight is b_w for a quantization name. Block-scaled FP4 formats include their scales:
// NVFP4 = 4 bits + one FP8 scale per 16 values = 4.5 bits; MXFP4 = 4 bits + one E8M0 scale per 32
// = 4.25 bits. FP8 block scales (1 per 128×128) are negligible and ignored.
func BytesPerWeight(quant string) (float64, error) {
	switch q := strings.ToUpper(strings.TrimSpace(quant)); q {
	case "BF16", "FP16", "AUTO", "":
		return 2, nil
	case "FP8", "INT8", "W8A8", "FP8-DYNAMIC":
		return 1, nil
	case "NVFP4":
		return 4.5 / 8, nil
	case "MXFP4":
		return 4.25 / 8, nil
	case "FP4", "INT4", "W4A16":
		return 0.5, nil
	}
	return 0, fmt.Errorf("quant %q: want BF16, FP16, FP8, INT8, NVFP4, MXFP4, FP4 or INT4", quant)
}

// Hardware is the per-GPU ceiling pair a roofline is drawn against.
type Hardware struct {
	Name       string
	PeakTFLOPs float64 // dense, at the quant's compute precision
	HBMTBs     float64
}

// Ridge is the hardware ridge point in FLOP/byte: peak FLOP/s ÷ HBM bytes/s.
func (h Hardware) Ridge() float64 { return h.PeakTFLOPs / h.HBMTBs }

// HardwareFor looks the GPU up in steps/analysis/catalog and picks the peak for the quant.
func HardwareFor(name, quant string) (Hardware, error) {
	g, ok := catalog.GPUByName(name)
	if !ok {
		return Hardware{}, fmt.Errorf("hardware %q: not in the catalog (steps/analysis/catalog/catalog.yaml)", name)
	}
	return Hardware{Name: g.Name, PeakTFLOPs: g.PeakTFLOPs(quant), HBMTBs: g.HBMTBs}, nil
}

// DistinctExperts is the expected number of distinct routed experts one MoE layer touches when
// T tokens each pick k of E experts uniformly: E·(1 − (1 − k/E)^T). Dense models touch none.
func DistinctExperts(s schema.ModelShape, tokens int) float64 {
	if s.RoutedExperts == 0 || tokens <= 0 {
		return 0
	}
	E, k := float64(s.RoutedExperts), float64(s.ExpertsPerToken)
	return E * (1 - math.Pow(1-k/E, float64(tokens)))
}

// Step is one forward step's analytical FLOP and HBM bytes for a whole replica.
type Step struct {
	FLOP  float64
	Bytes float64
}

// AI is the step's arithmetic intensity in FLOP/byte.
func (s Step) AI() float64 { return s.FLOP / s.Bytes }

// DecodeStep models one decode step of B requests each at context c (tokens already in the KV
// cache): FLOP = B·(2·active params + attention FLOP per context token × c); bytes = b_w·(dense
// params + MoE layers × distinct experts(B) × expert params) + B·c·KV bytes (read) + B·KV bytes
// (write). Activations are ignored (small at decode).
func DecodeStep(s schema.ModelShape, batch, context int, bw, bkv float64) Step {
	B, c := float64(batch), float64(context)
	kvb := float64(s.KVElemsPerToken) * bkv
	weights := bw * (float64(s.DenseParams) + float64(s.MoELayers)*DistinctExperts(s, batch)*float64(s.ExpertParams))
	return Step{
		FLOP:  B * (s.FLOPPerToken + s.AttnFLOPPerCtxTok*c),
		Bytes: weights + B*c*kvb + B*kvb,
	}
}

// PrefillStep models prefilling one prompt of n tokens: FLOP = n·2·(active params − LM head)
// + 2·LM head (logits for the last token only) + causal attention Σ_{i=1..n} 2·L·q·(d_k+d_v)·i
// = L·q·(d_k+d_v)·n·(n+1) (GQA: d_k = d_v = head_dim; MLA unabsorbed: d_k = nope+rope, d_v =
// v_head_dim); bytes = b_w·(dense params + MoE layers × distinct experts(n) × expert params) +
// n·KV bytes written.
func PrefillStep(s schema.ModelShape, n int, bw, bkv float64) Step {
	N := float64(n)
	lmHead := float64(s.HiddenSize) * float64(s.Vocab)
	dk, dv := float64(s.HeadDim), float64(s.HeadDim)
	if s.Attention == "mla" {
		dk, dv = float64(s.QKNopeHeadDim+s.QKRopeHeadDim), float64(s.VHeadDim)
	}
	attn := float64(s.Layers) * float64(s.Heads) * (dk + dv) * N * (N + 1)
	flop := N*2*(float64(s.ActiveParams)-lmHead) + 2*lmHead + attn
	weights := bw * (float64(s.DenseParams) + float64(s.MoELayers)*DistinctExperts(s, n)*float64(s.ExpertParams))
	return Step{FLOP: flop, Bytes: weights + N*float64(s.KVElemsPerToken)*bkv}
}

// DeliveredHBMPct is the byte-grounded HBM utilisation of a decode point: analytical bytes per
// step ÷ GPUs × measured steps/s (= output tok/s ÷ batch) ÷ peak HBM bytes/s × 100.
func DeliveredHBMPct(step Step, outputTokPerS float64, batch, gpus int, hw Hardware) float64 {
	stepsPerS := outputTokPerS / float64(batch)
	return step.Bytes / float64(gpus) * stepsPerS / (hw.HBMTBs * 1e12) * 100
}

// AchievedTFLOPsPerGPU is FLOP per token × measured tokens/s ÷ GPUs, in TFLOP/s.
func AchievedTFLOPsPerGPU(flopPerToken, tokPerS float64, gpus int) float64 {
	return flopPerToken * tokPerS / float64(gpus) / 1e12
}

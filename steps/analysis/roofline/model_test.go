package roofline

import (
	"math"
	"testing"
)

func TestStepsAndIntensity(t *testing.T) {
	llama := mustShape(t, llamaConfig)
	ds := mustShape(t, deepseekConfig)
	tests := []struct {
		name              string
		flop, bytes, want float64 // want = AI
		gotFLOP, gotBytes float64
	}{
		// Llama-3.1-70B BF16 (b_w = b_kv = 2), decode B = 8 at context 1024:
		//   FLOP  = 8·(139,003,428,864 + 2,621,440·1024) = 8·141,687,783,424 = 1,133,502,267,392
		//   bytes = 2·69,501,714,432 + 8·1024·327,680 + 8·327,680
		//         = 139,003,428,864 + 2,684,354,560 + 2,621,440 = 141,690,404,864
		//   AI    = 1,133,502,267,392 ÷ 141,690,404,864 = 7.99985 (BF16 decode AI ≈ B)
		{name: "llama decode B8 c1024", flop: 1_133_502_267_392, bytes: 141_690_404_864, want: 7.99985199},
		// Llama-3.1-70B BF16 prefill of n = 2048:
		//   FLOP  = 2048·2·(69,501,714,432 − 1,050,673,152) + 2·1,050,673,152 + 80·64·256·2048·2049
		//         = 280,375,465,082,880 + 2,101,346,304 + 5,500,242,493,440 = 285,877,808,922,624
		//   bytes = 139,003,428,864 + 2048·327,680 = 139,674,517,504
		//   AI    = 2046.74 (prefill AI ≈ n in BF16: compute-bound)
		{name: "llama prefill 2048", flop: 285_877_808_922_624, bytes: 139_674_517_504, want: 2046.74277},
		// DeepSeek-V3 FP8 weights (b_w = 1), BF16 KV, decode B = 1 at context 4096 (8 experts touched):
		//   FLOP  = 73,249,193,984 + 16,990,208·4096 = 73,249,193,984 + 69,591,891,968 = 142,841,085,952
		//   bytes = 1·(16,189,947,904 + 58·8·44,040,192) + 4096·70,272 + 70,272
		//         = 36,624,596,992 + 287,834,112 + 70,272 = 36,912,501,376
		//   AI    = 3.86972
		{name: "deepseek decode B1 c4096", flop: 142_841_085_952, bytes: 36_912_501_376, want: 3.86972111},
		// DeepSeek-V3 FP8 prefill of n = 4096 (every expert touched: 256·(1−(31/32)^4096) = 256):
		//   matmul FLOP = 4096·2·(36,624,596,992 − 926,679,040) = 4096·71,395,835,904 = 292,437,343,862,784
		//   logits      = 2·926,679,040 = 1,853,358,080
		//   attention   = 61·128·(192+128)·4096·4097 = 41,929,114,910,720
		//   FLOP        = 292,437,343,862,784 + 1,853,358,080 + 41,929,114,910,720 = 334,368,312,131,584
		//   bytes = 16,189,947,904 + 58·256·44,040,192 + 4096·70,272
		//         = 670,098,718,720 + 287,834,112 = 670,386,552,832
		//   AI    = 498.769
		{name: "deepseek prefill 4096", flop: 334_368_312_131_584, bytes: 670_386_552_832, want: 498.76942},
	}
	steps := []Step{
		DecodeStep(llama, 8, 1024, 2, 2),
		PrefillStep(llama, 2048, 2, 2),
		DecodeStep(ds, 1, 4096, 1, 2),
		PrefillStep(ds, 4096, 1, 2),
	}
	for i, tt := range tests {
		s := steps[i]
		if !approx(s.FLOP, tt.flop, 1e-12) || !approx(s.Bytes, tt.bytes, 1e-9) || !approx(s.AI(), tt.want, 1e-8) {
			t.Errorf("%s: FLOP %.0f bytes %.0f AI %.8f, want %.0f %.0f %.8f", tt.name, s.FLOP, s.Bytes, s.AI(), tt.flop, tt.bytes, tt.want)
		}
	}
}

func TestDistinctExperts(t *testing.T) {
	// telemetry.md §3.4: DeepSeek-V3 (E 256, k 8) touches ≈ 8, 57, 163, 222, 252 experts per MoE
	// layer for B = 1, 8, 32, 64, 128 under uniform routing: 256·(1 − (1 − 8/256)^B).
	ds := mustShape(t, deepseekConfig)
	for _, tt := range []struct {
		b    int
		want float64
	}{{1, 8}, {8, 57}, {32, 163}, {64, 222}, {128, 252}} {
		if got := DistinctExperts(ds, tt.b); math.Round(got) != tt.want {
			t.Errorf("B=%d: %.2f experts, want ≈%v", tt.b, got, tt.want)
		}
	}
	if got := DistinctExperts(mustShape(t, llamaConfig), 64); got != 0 {
		t.Errorf("dense model touches %v experts", got)
	}
}

func TestRidgeAndWidths(t *testing.T) {
	// Ridge = dense peak TFLOP/s ÷ HBM TB/s (telemetry.md §3.5): H100 BF16 989/3.35 = 295.2;
	// H100 FP8 1979/3.35 = 590.7; B200 NVFP4 9000/8 = 1125; GB300 NVFP4 15000/8 = 1875.
	for _, tt := range []struct {
		hw, quant string
		want      float64
	}{{"H100", "BF16", 989 / 3.35}, {"H100", "FP8", 1979 / 3.35}, {"B200", "NVFP4", 1125}, {"gb300", "NVFP4", 1875}} {
		h, err := HardwareFor(tt.hw, tt.quant)
		if err != nil || !approx(h.Ridge(), tt.want, 1e-12) {
			t.Errorf("%s %s ridge %v (%v), want %v", tt.hw, tt.quant, h.Ridge(), err, tt.want)
		}
	}
	if _, err := HardwareFor("TPUv5", "BF16"); err == nil {
		t.Error("unknown hardware accepted")
	}
	for _, tt := range []struct {
		quant string
		want  float64
	}{{"BF16", 2}, {"fp8", 1}, {"NVFP4", 0.5625}, {"MXFP4", 0.53125}, {"INT4", 0.5}} {
		if got, err := BytesPerWeight(tt.quant); err != nil || got != tt.want {
			t.Errorf("BytesPerWeight(%s) = %v %v, want %v", tt.quant, got, err, tt.want)
		}
	}
	if _, err := BytesPerWeight("Q4_K_M"); err == nil {
		t.Error("unknown quant accepted")
	}
}

func TestDeliveredHBMAndAchieved(t *testing.T) {
	// Llama-70B BF16 on H100 TP4, decode B = 8 at 320 output tok/s (the example bundle's c8):
	//   steps/s = 320 ÷ 8 = 40; bytes/GPU/s = 141,690,404,864 ÷ 4 × 40 = 1,416,904,048,640
	//   delivered HBM % = 1,416,904,048,640 ÷ 3.35e12 × 100 = 42.2956 %
	//   achieved TFLOP/s/GPU = (1,133,502,267,392 ÷ 8) × 320 ÷ 4 ÷ 1e12 = 11.33502 (1.146 % of 989)
	llama := mustShape(t, llamaConfig)
	h, _ := HardwareFor("H100", "BF16")
	s := DecodeStep(llama, 8, 1024, 2, 2)
	if got := DeliveredHBMPct(s, 320, 8, 4, h); !approx(got, 42.29564324, 1e-8) {
		t.Errorf("delivered HBM %% = %v", got)
	}
	if got := AchievedTFLOPsPerGPU(s.FLOP/8, 320, 4); !approx(got, 11.33502267, 1e-8) {
		t.Errorf("achieved TFLOP/s/GPU = %v", got)
	}
}

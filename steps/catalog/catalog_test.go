package catalog

import "testing"

func TestEveryEntryHasASource(t *testing.T) {
	c := Get()
	if len(c.Shapes) != 3 || len(c.GPUs) < 4 || len(c.Cost) < 4 {
		t.Fatalf("catalog incomplete: %d shapes, %d gpus, %d rates", len(c.Shapes), len(c.GPUs), len(c.Cost))
	}
	for _, s := range c.Shapes {
		if s.Source == "" || s.InputTokens <= 0 || s.OutputTokens <= 0 {
			t.Errorf("shape %+v", s)
		}
	}
	for _, g := range c.GPUs {
		if g.Source == "" || g.BF16TFLOPs <= 0 || g.HBMTBs <= 0 {
			t.Errorf("gpu %+v", g)
		}
	}
	for _, r := range c.Cost {
		if r.Source == "" || r.USDPerGPUHour <= 0 {
			t.Errorf("rate %+v", r)
		}
	}
}

func TestLookups(t *testing.T) {
	s, ok := ShapeByName("aa-10k")
	if !ok || s.InputTokens != 10000 || s.OutputTokens != 1500 {
		t.Fatalf("aa-10k = %+v, %v", s, ok)
	}
	g, ok := GPUByName("b200")
	if !ok || g.PeakTFLOPs("NVFP4") != 9000 || g.PeakTFLOPs("FP8") != 4500 || g.PeakTFLOPs("BF16") != 2250 {
		t.Fatalf("b200 = %+v", g)
	}
	h, _ := GPUByName("H100")
	if h.PeakTFLOPs("NVFP4") != 1979 { // no FP4 units: FP4 weights run at the FP8 rate
		t.Fatalf("H100 FP4 peak = %v", h.PeakTFLOPs("NVFP4"))
	}
	r, ok := RateFor("GB300")
	if !ok || r.USDPerGPUHour != 12 || !r.Estimate {
		t.Fatalf("GB300 rate = %+v", r)
	}
}

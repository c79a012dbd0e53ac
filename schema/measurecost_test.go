package schema

import "testing"

// A total's GPU-seconds are the sum over its points only while every point's are known: one
// point without a declared GPU count (or recorded before cost accounting) makes them unknown,
// never a partial sum.
func TestCostTotal(t *testing.T) {
	known := NewMeasurementCost(30, 29, 1, 9, 8) // 10 s × 8 GPUs
	unknown := NewMeasurementCost(12, 12, 1, 2, 0)
	if known.GPUSeconds == nil || *known.GPUSeconds != 80 || known.EndpointS != 10 || unknown.GPUSeconds != nil {
		t.Fatalf("costs %+v %+v: want 80 GPU-s and unknown", known, unknown)
	}
	var a CostTotal
	a.Add(known)
	a.Add(known)
	if a.Points != 2 || a.RequestsSent != 60 || a.RequestsValid != 58 || a.EndpointS != 20 || a.GPUSeconds == nil || *a.GPUSeconds != 160 || *a.GPUHours() != 160.0/3600 {
		t.Fatalf("two known points: %+v", a)
	}
	b := a
	b.Add(unknown)
	if b.GPUSeconds != nil || b.GPUsUnknown != 1 || b.Points != 3 || b.GPUHours() != nil {
		t.Fatalf("with a point of unknown GPUs: %+v, want GPU-seconds unknown", b)
	}
	b.Add(known)
	if b.GPUSeconds != nil || b.Points != 4 {
		t.Fatalf("unknown stays unknown: %+v", b)
	}
	var c CostTotal
	c.Add(nil)
	c.Add(known)
	if c.Unrecorded != 1 || c.Points != 1 || c.GPUSeconds != nil {
		t.Fatalf("a point without a recorded cost: %+v, want it counted as unrecorded and GPU-seconds unknown", c)
	}
}

// A cell that declares neither gpus nor tensor_parallel has no GPU count a cost may use,
// though tok/s/GPU still divides by 1.
func TestDeclaredGPUs(t *testing.T) {
	for _, tc := range []struct {
		cell, def Identity
		gpus      int
		declared  int
	}{
		{Identity{}, Identity{}, 1, 0},
		{Identity{TensorParallel: 4}, Identity{}, 4, 4},
		{Identity{}, Identity{TensorParallel: 2}, 2, 2},
		{Identity{GPUs: 16, TensorParallel: 8}, Identity{}, 16, 16},
		{Identity{GPUs: 1}, Identity{}, 1, 1},
		{Identity{}, Identity{GPUs: 3}, 3, 3},
	} {
		c := Cell{Identity: tc.cell}
		c.Inherit(tc.def, "m")
		if c.GPUs != tc.gpus || c.DeclaredGPUs() != tc.declared {
			t.Errorf("cell %+v defaults %+v: gpus %d declared %d, want %d and %d", tc.cell, tc.def, c.GPUs, c.DeclaredGPUs(), tc.gpus, tc.declared)
		}
	}
}

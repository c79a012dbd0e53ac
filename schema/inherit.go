package schema

// Inherit fills the cell's unset identity fields from the campaign defaults, then the model from
// its endpoint, and the GPU count from tensor parallelism: the schema owns what a cell
// inherits, so the loader merges without knowing what a cell is made of.
func (c *Cell) Inherit(def Identity, endpointModel string) {
	id := &c.Identity
	str := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	num := func(dst *int, src int) {
		if *dst == 0 {
			*dst = src
		}
	}
	str(&id.Model, def.Model)
	str(&id.Hardware, def.Hardware)
	str(&id.Quant, def.Quant)
	num(&id.TensorParallel, def.TensorParallel)
	str(&id.ParallelStrategy, def.ParallelStrategy)
	if id.MTP == nil && def.MTP != nil {
		m := *def.MTP
		id.MTP = &m
	}
	num(&id.MaxNumBatchedTokens, def.MaxNumBatchedTokens)
	str(&id.Engine, def.Engine)
	str(&id.EngineVersion, def.EngineVersion)
	str(&id.Delivery, def.Delivery)
	str(&id.CacheMode, def.CacheMode)
	num(&id.GPUs, def.GPUs)
	str(&id.Arm, def.Arm)
	str(&id.Model, endpointModel)
	if id.GPUs == 0 {
		id.GPUs = max(id.TensorParallel, 1)
		id.gpusDefaulted = id.TensorParallel == 0
	}
}

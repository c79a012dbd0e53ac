package schema

// BaselineRef is what points with requests_per_point {auto: {decide: baseline}} decide
// against: the values of one registered baseline snapshot, with their 95 % half-widths and the
// tolerance and direction the scheduled diff judges each with. perfdag schedule resolves it
// from the registry before a run and writes it into the run's frozen config.yaml, so the
// points are reproducible from the campaign directory alone (docs/schedule.md).
type BaselineRef struct {
	Name   string `yaml:"name" json:"name" doc:"the baseline's registered name (schedule.baseline)"`
	SHA256 string `yaml:"sha256" json:"sha256" doc:"the snapshot's sha256, as baseline.json states it"`
	Cell   string `yaml:"cell" json:"cell" doc:"the cell of this campaign whose points the baseline is compared with"`
	// Points are the baseline's values by the snapshot's point key (a concurrency "8", a rate
	// point's key "r2.5-cap64": MetricsKey), then by the diff's metric name (ttft_p50_ms,
	// throughput_toks_per_s, errors, ...).
	Points map[string]map[string]BaselineRefValue `yaml:"points" json:"points" doc:"baseline values by point (a concurrency, or a rate point's key such as r2.5-cap64), then by the diff's metric name"`
}

// BaselineRefValue is one baseline value and how the diff judges a change of it.
type BaselineRefValue struct {
	Value     float64 `yaml:"value" json:"value" doc:"the baseline's value"`
	HalfWidth float64 `yaml:"half_width,omitempty" json:"half_width,omitempty" range:"0,1e300" doc:"half-width of its 95 % interval (0: none)"`
	Tolerance float64 `yaml:"tolerance" json:"tolerance" range:"0,1000000" doc:"the change allowed in the worse direction, in unit"`
	Unit      string  `yaml:"unit" json:"unit" enum:"%,pts,count" doc:"% of the baseline, absolute points, or a count"`
	Direction string  `yaml:"direction" json:"direction" enum:"lower_is_worse,higher_is_worse" doc:"which way a change is a regression"`
}

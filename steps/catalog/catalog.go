// Package catalog holds the figures that may need correcting — AA workload shapes, per-GPU
// peak throughput and bandwidth, default $/GPU-hour — in one embedded YAML file, each with
// its source, so a correction is a data change and not a code change.
package catalog

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"
)

//go:embed catalog.yaml
var raw []byte

// Shape is one AA workload shape.
type Shape struct {
	Name         string `yaml:"name"`
	InputTokens  int    `yaml:"input_tokens"`
	OutputTokens int    `yaml:"output_tokens"`
	Source       string `yaml:"source"`
}

// GPU is one GPU type's dense peak figures.
type GPU struct {
	Name       string  `yaml:"name"`
	BF16TFLOPs float64 `yaml:"bf16_tflops"`
	FP8TFLOPs  float64 `yaml:"fp8_tflops"`
	FP4TFLOPs  float64 `yaml:"fp4_tflops"`
	HBMTBs     float64 `yaml:"hbm_tb_s"`
	HBMGB      float64 `yaml:"hbm_gb"`
	NVLinkGBs  float64 `yaml:"nvlink_gb_s"`
	TDPW       float64 `yaml:"tdp_w"`
	Source     string  `yaml:"source"`
}

// Rate is a default $/GPU-hour.
type Rate struct {
	Hardware      string  `yaml:"hardware"`
	USDPerGPUHour float64 `yaml:"usd_per_gpu_hour"`
	Estimate      bool    `yaml:"estimate"`
	Source        string  `yaml:"source"`
}

// Catalog is the whole data file.
type Catalog struct {
	Shapes []Shape `yaml:"shapes"`
	GPUs   []GPU   `yaml:"gpus"`
	Cost   []Rate  `yaml:"cost"`
}

var (
	once sync.Once
	cat  Catalog
	err  error
)

// Get returns the embedded catalog.
func Get() Catalog {
	once.Do(func() {
		err = yaml.UnmarshalWithOptions(raw, &cat, yaml.DisallowUnknownField())
	})
	if err != nil {
		// The file is embedded at build time; a parse failure is a build defect caught by tests.
		panic(fmt.Errorf("catalog.yaml: %w", err))
	}
	return cat
}

// ShapeByName finds an AA shape ("aa-10k").
func ShapeByName(name string) (Shape, bool) {
	for _, s := range Get().Shapes {
		if s.Name == name {
			return s, true
		}
	}
	return Shape{}, false
}

// GPUByName finds a GPU by name, case-insensitively ("b200" finds B200).
func GPUByName(name string) (GPU, bool) {
	for _, g := range Get().GPUs {
		if strings.EqualFold(g.Name, name) {
			return g, true
		}
	}
	return GPU{}, false
}

// RateFor finds the default $/GPU-hour of a hardware name.
func RateFor(hardware string) (Rate, bool) {
	for _, r := range Get().Cost {
		if strings.EqualFold(r.Hardware, hardware) {
			return r, true
		}
	}
	return Rate{}, false
}

// PeakTFLOPs returns the dense peak for a quantization (BF16/FP16, FP8, FP4/NVFP4/MXFP4).
func (g GPU) PeakTFLOPs(quant string) float64 {
	q := strings.ToUpper(quant)
	switch {
	case strings.Contains(q, "FP4") && g.FP4TFLOPs > 0:
		return g.FP4TFLOPs
	case strings.Contains(q, "FP4"), strings.Contains(q, "FP8"), strings.Contains(q, "INT8"):
		return g.FP8TFLOPs
	}
	return g.BF16TFLOPs
}

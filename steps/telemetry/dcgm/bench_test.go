package dcgm

import (
	"github.com/perfdag/perfdag/schema"

	"context"
	"fmt"
	"testing"
	"time"

	"github.com/perfdag/perfdag/steps/telemetry/promscrape"
)

func eightGPUs() []GPUSample {
	var gpus []GPUSample
	for _, g := range synthDataset()[1] {
		for i := 0; i < 4; i++ {
			c := g
			c.GPU = fmt.Sprint(len(gpus))
			c.UUID = "GPU-" + c.GPU
			gpus = append(gpus, c)
		}
	}
	return gpus
}

func BenchmarkFromScrape8GPUs(b *testing.B) {
	text, err := ExporterText(eightGPUs())
	if err != nil {
		b.Fatal(err)
	}
	s, err := promscrape.Parse(text, time.Unix(0, 0))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if len(FromScrape(s, Filter{Host: "synth-node"})) != 8 {
			b.Fatal("want 8 GPUs")
		}
	}
}

func BenchmarkExporterText8GPUs(b *testing.B) {
	gpus := eightGPUs()
	for b.Loop() {
		if _, err := ExporterText(gpus); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExporterPointHour reduces an hour of 1 s samples from 8 GPUs (28,800 samples) to one
// point's means.
func BenchmarkExporterPointHour(b *testing.B) {
	gpus := eightGPUs()
	start := time.Unix(1_700_000_000, 0)
	src := &ExporterSource{}
	for s := 0; s < 3600; s++ {
		for _, g := range gpus {
			g.At = start.Add(time.Duration(s) * time.Second)
			src.Samples = append(src.Samples, g)
		}
	}
	w := Window{Load: schema.Conc(8), Start: start, End: start.Add(time.Hour)}
	for b.Loop() {
		if _, err := src.Point(context.Background(), w); err != nil {
			b.Fatal(err)
		}
	}
}

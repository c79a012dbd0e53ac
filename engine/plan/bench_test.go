package plan

import (
	"testing"

	"github.com/perfdag/perfdag/engine/enginetest"
	"github.com/perfdag/perfdag/engine/load"
)

// BenchmarkCompile10k loads, validates and compiles a campaign of 10,007 nodes (435 cells × 5
// concurrencies through the default pipeline): YAML decode, rule compilation, expansion,
// cycle check, topological sort and endpoint chaining.
func BenchmarkCompile10k(b *testing.B) {
	src := []byte(enginetest.Campaign(435, 5, ""))
	reg := enginetest.Registry(b, enginetest.NewRecorder())
	dir := b.TempDir()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := load.Bytes("campaign.yaml", dir, src, reg, load.Options{})
		if err != nil {
			b.Fatal(err)
		}
		p, err := Compile(c)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Nodes) != 10007 {
			b.Fatalf("%d nodes", len(p.Nodes))
		}
	}
}

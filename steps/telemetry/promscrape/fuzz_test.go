package promscrape

import (
	"os"
	"testing"
	"time"
)

// FuzzParse: arbitrary bytes either parse or return an error; they never panic, and lookups on
// whatever parsed never panic either.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/vllm-metrics.txt"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(beforeDP))
	f.Add([]byte("# TYPE x histogram\nx_bucket{le=\"1\"} 1\nx_count 1\nx_sum 2\n"))
	f.Add([]byte("a{b=\"\\\"\"} NaN 123\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, time.Unix(0, 0))
		if err != nil {
			return
		}
		for name := range s.Families {
			s.Sum(name)
			s.Max(name)
			s.Mean(name)
		}
		Window(s, s, s.Reading())
	})
}

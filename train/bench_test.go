package train_test

import (
	"testing"

	"github.com/gfngo/gfn/env/hypergrid"
	"github.com/gfngo/gfn/train"
)

// BenchmarkIterate measures one training iteration on the paper's default
// grid (d=2, H=128) from a fresh network: early-training cost.
func BenchmarkIterate(b *testing.B) {
	for _, m := range []train.Method{train.MethodTB, train.MethodTeacher} {
		b.Run(string(m), func(b *testing.B) {
			g, _ := hypergrid.New(2, 128, hypergrid.Deceptive)
			cfg := train.DefaultConfig()
			cfg.Method = m
			cfg.RewardCalls = 1 << 30
			tr, err := train.New(g, cfg)
			if err != nil {
				b.Fatal(err)
			}
			var steps int
			for b.Loop() {
				it, err := tr.Iterate()
				if err != nil {
					b.Fatal(err)
				}
				steps += int(it.MeanLength * float64(cfg.Batch))
			}
			b.ReportMetric(float64(steps)/float64(b.N), "transitions/op")
		})
	}
}

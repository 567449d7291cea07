package energy

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

func BenchmarkLogReward(b *testing.B) {
	for _, tg := range []struct {
		name string
		e    Gradient
		span float64
	}{{"25gmm", GMM25{}, 14}, {"manywell-d32", Manywell{}, 2.5}} {
		for _, n := range []int{500, 10000} {
			rng := rand.New(rand.NewPCG(1, 2))
			x := randomStates(rng, n, tg.e.Dim(), tg.span)
			out, grad := make([]float64, n), make([]float64, len(x))
			b.Run(tg.name+"/rows="+strconv.Itoa(n), func(b *testing.B) {
				for b.Loop() {
					tg.e.LogReward(x, out)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
			})
			b.Run(tg.name+"/grad/rows="+strconv.Itoa(n), func(b *testing.B) {
				for b.Loop() {
					tg.e.GradLogReward(x, out, grad)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
			})
		}
	}
}

func BenchmarkSample(b *testing.B) {
	for _, s := range []Sampler{GMM25{}, Manywell{}} {
		rng := rand.New(rand.NewPCG(1, 2))
		x := make([]float32, 10000*s.Dim())
		b.Run(s.(interface{ String() string }).String()+"/rows=10000", func(b *testing.B) {
			for b.Loop() {
				s.Sample(x, rng)
			}
		})
	}
}

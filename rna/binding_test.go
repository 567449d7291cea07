package rna

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// target1 is the L14-RNA1 target (FLEXS RNA binding landscape).
const target1 = "GAACGAGGCACAUUCCGGCUCGCCCGGCCCAUGUGAGCAUGGGCCGGACCCCGUCCGCGCGGGGCCCCCGCGCGGACGGGGGCGAGCCGGAAUGUGCCUC"

// The facts below were measured with ViennaRNA 2.7.1's duplexfold (see the
// project's shared data provenance).
const (
	normEnergy    = -260.1             // duplexfold(revcomp(target1), target1)
	modesMax      = 1.0545394628439608 // at modesArgmax, energy -38.4
	modesArgmax   = "GGGGGCCCCGCGCG"
	modesMin      = 0.78266600757950 // energy -28.5
	samplesMean   = 0.97358          // the 2048 beta-40 true samples
	uniformMean   = 0.302134         // exact mean over all 4^14 14-mers
	uniformVienna = 0.302081         // ViennaRNA over 20,000 random 14-mers
)

func readWords(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

func newBinding1(t testing.TB) *Binding {
	b, err := NewBinding(nil, target1)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBindingNorm(t *testing.T) {
	rc := make([]byte, len(target1))
	comp := map[byte]byte{'A': 'U', 'C': 'G', 'G': 'C', 'U': 'A'}
	for i := range rc {
		rc[i] = comp[target1[len(target1)-1-i]]
	}
	d, err := DefaultParams().Duplex(string(rc), target1)
	if err != nil {
		t.Fatal(err)
	}
	if d.Energy != normEnergy {
		t.Errorf("duplex of the reverse complement: %v kcal/mol, want %v", d.Energy, normEnergy)
	}
	if b := newBinding1(t); b.norm != -normEnergy {
		t.Errorf("norm = %v, want %v", b.norm, -normEnergy)
	}
}

// TestBindingModes checks the extremes of the fitness over the 8967 modes.
func TestBindingModes(t *testing.T) {
	b := newBinding1(t)
	modes := readWords(t, "testdata/L14_RNA1_modes_hammingball_dist1_percentile_0.0001.txt")
	if len(modes) != 8967 {
		t.Fatalf("%d modes, want 8967", len(modes))
	}
	hi, lo := math.Inf(-1), math.Inf(1)
	var argHi, argLo string
	for _, x := range modes {
		f, err := b.Fitness(x)
		if err != nil {
			t.Fatal(err)
		}
		if f > hi {
			hi, argHi = f, x
		}
		if f < lo {
			lo, argLo = f, x
		}
	}
	if hi != modesMax || argHi != modesArgmax {
		t.Errorf("max fitness %v at %s, want %v at %s", hi, argHi, modesMax, modesArgmax)
	}
	if math.Abs(lo-modesMin) > 1e-14 {
		t.Errorf("min fitness %v at %s, want %v", lo, argLo, modesMin)
	}
	for _, c := range []struct {
		x    string
		want float64
	}{{argHi, -38.4}, {argLo, -28.5}} {
		d, err := DefaultParams().Duplex(target1, c.x)
		if err != nil {
			t.Fatal(err)
		}
		if d.Energy != c.want {
			t.Errorf("energy of %s: %v, want %v", c.x, d.Energy, c.want)
		}
	}
}

func TestBindingTrueSamples(t *testing.T) {
	b := newBinding1(t)
	xs := readWords(t, "testdata/L14_RNA1_true_samples_beta40_true_samples.txt")
	if len(xs) != 2048 {
		t.Fatalf("%d samples, want 2048", len(xs))
	}
	sum := 0.0
	for _, x := range xs {
		f, err := b.Fitness(x)
		if err != nil {
			t.Fatal(err)
		}
		sum += f
	}
	if mean := sum / float64(len(xs)); math.Abs(mean-samplesMean) > 5e-6 {
		t.Errorf("mean fitness %v, want %v", mean, samplesMean)
	}
}

// TestBindingUniformMean compares the mean fitness of uniformly random
// 14-mers with the exact mean over all of them. RNA_LONG=1 uses the 20,000
// samples of the ViennaRNA measurement instead of 2,000.
func TestBindingUniformMean(t *testing.T) {
	n := 2000
	if os.Getenv("RNA_LONG") != "" {
		n = 20000
	}
	b := newBinding1(t)
	rng := rand.New(rand.NewPCG(2025, 14))
	x := make([]int32, 14)
	var sum, sum2 float64
	for range n {
		for i := range x {
			x[i] = int32(rng.IntN(4))
		}
		f := b.FitnessTokens(x)
		sum += f
		sum2 += f * f
	}
	mean := sum / float64(n)
	se := math.Sqrt((sum2/float64(n) - mean*mean) / float64(n-1))
	t.Logf("mean fitness of %d random 14-mers: %.6f ± %.6f (exact %v; ViennaRNA, 20,000: %v ± 0.00079)", n, mean, se, uniformMean, uniformVienna)
	if math.Abs(mean-uniformMean) > 3*se {
		t.Errorf("mean fitness %v ± %v, more than 3 standard errors from %v", mean, se, uniformMean)
	}
}

func TestFitnessTokensMatchesFitness(t *testing.T) {
	b := newBinding1(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		n := 1 + rng.IntN(20)
		x := make([]int32, n)
		s := make([]byte, n)
		for i := range x {
			x[i] = int32(rng.IntN(4))
			s[i] = "ACGU"[x[i]]
		}
		want, err := b.Fitness(string(s))
		if err != nil {
			t.Fatal(err)
		}
		d, err := DefaultParams().Duplex(target1, string(s))
		if err != nil {
			t.Fatal(err)
		}
		if fromDuplex := -d.Energy / (-normEnergy * float64(n) / float64(len(target1))); want != fromDuplex {
			t.Errorf("Fitness(%s) = %v, Duplex gives %v", s, want, fromDuplex)
		}
		if got := b.FitnessTokens(x); got != want {
			t.Errorf("FitnessTokens(%v) = %v, Fitness(%s) = %v", x, got, s, want)
		}
	}
}

func TestFitnessTokensAllocs(t *testing.T) {
	b := newBinding1(t)
	x := []int32{2, 2, 2, 2, 2, 1, 1, 1, 1, 2, 1, 2, 1, 2}
	b.FitnessTokens(x)
	if n := testing.AllocsPerRun(50, func() { b.FitnessTokens(x) }); n != 0 {
		t.Errorf("FitnessTokens allocates %v times per call", n)
	}
}

func TestBindingConcurrent(t *testing.T) {
	b := newBinding1(t)
	rng := rand.New(rand.NewPCG(5, 6))
	xs := make([][]int32, 64)
	want := make([]float64, len(xs))
	for k := range xs {
		xs[k] = make([]int32, 8+k%10)
		for i := range xs[k] {
			xs[k][i] = int32(rng.IntN(4))
		}
		want[k] = b.FitnessTokens(xs[k])
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for rep := range 3 {
				for m := range xs {
					k := (m + g*17 + rep) % len(xs)
					if got := b.FitnessTokens(xs[k]); got != want[k] {
						t.Errorf("goroutine %d: fitness of %v = %v, want %v", g, xs[k], got, want[k])
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestBindingErrors(t *testing.T) {
	b := newBinding1(t)
	if _, err := b.Fitness("GGGGxCCC"); err == nil || !strings.Contains(err.Error(), "'x'") {
		t.Errorf("Fitness of a bad base: error %v", err)
	}
	if _, err := b.Fitness(""); err == nil {
		t.Error("Fitness of an empty sequence: no error")
	}
	for _, target := range []string{"", "ACGN", "A"} {
		// "A" only binds "U" by a lone AU pair, at a positive energy.
		if _, err := NewBinding(nil, target); err == nil || !strings.HasPrefix(err.Error(), "rna: ") {
			t.Errorf("NewBinding(%q): error %v", target, err)
		}
	}
	for _, x := range [][]int32{{0, 4}, {-1}, {}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("FitnessTokens(%v) did not panic", x)
				}
			}()
			b.FitnessTokens(x)
		}()
	}
}

func TestBindingTIsU(t *testing.T) {
	b := newBinding1(t)
	bt, err := NewBinding(nil, strings.ReplaceAll(target1, "U", "T"))
	if err != nil {
		t.Fatal(err)
	}
	f1, _ := b.Fitness("GGGGGUCUCGCGCG")
	f2, _ := bt.Fitness("GGGGGTCTCGCGCG")
	if f1 != f2 {
		t.Errorf("T and U differ: %v, %v", f1, f2)
	}
}

// BenchmarkFitness measures one fitness evaluation of a random 14-mer
// against the 100-nt L14-RNA1 target.
func BenchmarkFitness(bm *testing.B) {
	b := newBinding1(bm)
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([][]int32, 1024)
	for k := range xs {
		xs[k] = make([]int32, 14)
		for i := range xs[k] {
			xs[k][i] = int32(rng.IntN(4))
		}
	}
	bm.ReportAllocs()
	for i := 0; bm.Loop(); i++ {
		b.FitnessTokens(xs[i%len(xs)])
	}
}

// BenchmarkFitnessParallel runs BenchmarkFitness's work on all Ps.
func BenchmarkFitnessParallel(bm *testing.B) {
	b := newBinding1(bm)
	var seed atomic.Uint64
	bm.ReportAllocs()
	bm.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(seed.Add(1), 2))
		x := make([]int32, 14)
		for pb.Next() {
			for i := range x {
				x[i] = int32(rng.IntN(4))
			}
			b.FitnessTokens(x)
		}
	})
}

package diffusion

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"testing"

	"github.com/gfngo/gfn/energy"
)

// BenchmarkIterate times training iterations of the reference preset on
// 25GMM (batch 500, width 256, T = 100): ns/op is one iteration averaged
// over the schedule's cycle.
func BenchmarkIterate(b *testing.B) {
	for _, m := range []Method{MethodTB, MethodTeacher} {
		b.Run(string(m), func(b *testing.B) {
			cfg, _ := Preset("reference", "25gmm") // the speed targets

			cfg.Method = m
			cfg.Iterations = 1 << 30
			tr, err := New(energy.GMM25{}, cfg)
			if err != nil {
				b.Fatal(err)
			}
			for range 4 { // fill the buffer, warm the scratch
				if _, err := tr.Iterate(); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				if _, err := tr.Iterate(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// hashTrainer digests every parameter of every agent bit for bit.
func hashTrainer(t *Trainer) string {
	h := fnv.New64a()
	var b [4]byte
	for _, a := range []*Agent{t.Student, t.Teacher} {
		if a == nil {
			continue
		}
		for _, p := range a.Params() {
			for _, v := range p.Value {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
				h.Write(b[:])
			}
		}
	}
	return fmt.Sprintf("%x", h.Sum64())
}

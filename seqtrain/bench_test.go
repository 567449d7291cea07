package seqtrain

import (
	"testing"

	"github.com/gfngo/gfn/biochem"
)

// BenchmarkRound times one training round of each task's reference
// settings (after 20 warm-up rounds, so that the buffer replays), for the
// Teacher + PER method and on-policy TB.
func BenchmarkRound(b *testing.B) {
	for _, name := range biochem.Names {
		for _, m := range []Method{TeacherPER, PRT} {
			b.Run(name+"/"+string(m), func(b *testing.B) {
				task, err := biochem.Named(name)
				if err != nil {
					b.Fatal(err)
				}
				cfg := ForTask(task)
				cfg.Method = m
				t, err := New(task, cfg)
				if err != nil {
					b.Fatal(err)
				}
				for range 20 {
					if _, err := t.Iterate(); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for range b.N {
					if _, err := t.Iterate(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

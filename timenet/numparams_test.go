package timenet

import (
	"math/rand/v2"
	"testing"

	"github.com/gfngo/gfn/nn"
)

// NumParams counts the values of the parameters New builds, for both
// architectures, defaults and explicit sizes, and rejects what New does.
func TestNumParams(t *testing.T) {
	for _, c := range []struct {
		cfg Config
		dim int
	}{
		{Config{Hidden: 4}, 2},
		{Config{Hidden: 5, Harmonics: 3, StateEmb: 2, TimeEmb: 7, JointLayers: 4}, 3},
		{Config{Hidden: 3, JointLayers: 1}, 1},
		{Config{}, 32},
		{Config{Arch: PIS, Hidden: 6, Harmonics: 2}, 2},
		{Config{Arch: PIS, Hidden: 3, JointLayers: 5}, 4},
		{Config{Arch: PIS}, 10},
		{Config{Hidden: 4, Out: 1}, 3},
		{Config{Arch: PIS, Hidden: 5, Out: 1}, 2},
	} {
		net, err := New(c.cfg, c.dim, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, p := range net.Params() {
			want += len(p.Value)
		}
		x := nn.NewMatrix(2, c.dim)
		if y := net.Forward(x, []float32{0.5}); y.Cols != c.cfg.out(c.dim) {
			t.Errorf("%+v: %d outputs, want %d", c.cfg, y.Cols, c.cfg.out(c.dim))
		}
		got, err := NumParams(c.cfg, c.dim)
		if err != nil || got != float64(want) {
			t.Errorf("NumParams(%+v, %d) = %v, %v; want %d", c.cfg, c.dim, got, err, want)
		}
	}
	for _, c := range []struct {
		cfg Config
		dim int
	}{{Config{Hidden: -1}, 2}, {Config{Arch: "x"}, 2}, {Config{}, 0}, {Config{Arch: PIS, Hidden: 4, StateEmb: 3}, 2}, {Config{Out: -1}, 2}} {
		if _, err := NumParams(c.cfg, c.dim); err == nil {
			t.Errorf("NumParams(%+v, %d): no error", c.cfg, c.dim)
		}
	}
	// Sizes from a corrupt file stay finite and large instead of wrapping.
	if n, err := NumParams(Config{Hidden: 1 << 40, JointLayers: 1 << 40}, 2); err != nil || !(n > 1e36) {
		t.Errorf("huge sizes: %v, %v", n, err)
	}
}

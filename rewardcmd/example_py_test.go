package rewardcmd

import (
	"context"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The rewards of examples/reward/my_reward.py, written again in Go.
func pySeq(x []int32, alphabet int) float64 {
	v := 0.0
	for i, t := range x {
		if int(t) != i%alphabet {
			v--
		}
	}
	return v
}

func pyPoint(x []float32) float64 {
	head := min(len(x), 2)
	var terms []float64
	for corner := range 1 << head {
		sq := 0.0
		for i := range head {
			c := -2.0
			if corner>>i&1 == 1 {
				c = 2
			}
			sq += (float64(x[i]) - c) * (float64(x[i]) - c)
		}
		terms = append(terms, -sq/0.5)
	}
	m := math.Inf(-1)
	for _, t := range terms {
		m = max(m, t)
	}
	s := 0.0
	for _, t := range terms {
		s += math.Exp(t - m)
	}
	rest := 0.0
	for _, v := range x[head:] {
		rest += float64(v) * float64(v) / 2
	}
	return m + math.Log(s/float64(len(terms))) - rest
}

func pyCell(x []int32, h int) float64 {
	outer, ring := true, true
	for _, v := range x {
		a := math.Abs(float64(v)/float64(h-1) - 0.5)
		outer = outer && a > 0.25
		ring = ring && a > 0.3 && a < 0.4
	}
	r := 0.1
	if outer {
		r += 0.5
	}
	if ring {
		r += 2
	}
	return math.Log(r)
}

// TestPythonExample runs examples/reward/my_reward.py, where python3
// exists, on every kind and compares its rewards with the Go versions.
func TestPythonExample(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	// The interpreter itself: version managers' shims can take seconds
	// to start it.
	py, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatal(err)
	}
	prog, _ := filepath.Abs("../examples/reward/my_reward.py")
	cmd := "'" + strings.TrimSpace(string(py)) + "' '" + prog + "'"
	rng := rand.New(rand.NewPCG(3, 4))
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }

	c, err := Start(context.Background(), cmd, Shape{Kind: Sequence, Length: 8, Alphabet: []string{"A", "C", "G", "T"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	xs := make([]int32, 8*100)
	for i := range xs {
		xs[i] = rng.Int32N(4)
	}
	copy(xs, []int32{0, 1, 2, 3, 0, 1, 2, 3}) // the best string, log R = 0
	out := make([]float64, 100)
	if err := c.Sequences(xs, 100, out); err != nil {
		t.Fatal(err)
	}
	for b := range 100 {
		if want := pySeq(xs[b*8:(b+1)*8], 4); out[b] != want || (b == 0 && want != 0) {
			t.Errorf("sequence %v: %v, want %v", xs[b*8:(b+1)*8], out[b], want)
		}
	}
	c.Close()

	for _, d := range []int{5} {
		c, err := Start(context.Background(), cmd, Shape{Kind: Points, Dim: d}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float32, d*64)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 3)
		}
		out := make([]float64, 64)
		if err := (Energy{c}).LogReward(x, out); err != nil || c.Err() != nil {
			t.Fatal(err, c.Err())
		}
		for r := range 64 {
			if want := pyPoint(x[r*d : (r+1)*d]); !close(out[r], want) {
				t.Errorf("d=%d point %v: %v, want %v", d, x[r*d:(r+1)*d], out[r], want)
			}
		}
		c.Close()
	}

	c, err = Start(context.Background(), cmd, Shape{Kind: Grid, Dim: 2, Side: 16}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cells []int32
	for i := range 16 {
		for j := range 16 {
			cells = append(cells, int32(i), int32(j), 0)
		}
	}
	out = make([]float64, 256)
	if err := c.Cells(cells, 256, out); err != nil {
		t.Fatal(err)
	}
	for b := range 256 {
		if want := pyCell(cells[3*b:3*b+2], 16); !close(out[b], want) {
			t.Errorf("cell %v: %v, want %v", cells[3*b:3*b+2], out[b], want)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

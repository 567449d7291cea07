package objective

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// toyDAG is a side×side grid whose states may move +x or +y and may stop
// anywhere: stopping at s gives the terminal ⊤_s with reward R(s). P_B is
// uniform over a state's move parents (⊤_s's only parent is s). Its exact
// flows come from the backward recursion F(s) = R(s) + Σ_c F(c)·P_B(s|c).
type toyDAG struct {
	side int
	logR []float64 // per cell
	logF []float64 // exact log F per cell
}

func newToyDAG(side int, rng *rand.Rand) *toyDAG {
	d := &toyDAG{side: side, logR: make([]float64, side*side), logF: make([]float64, side*side)}
	for i := range d.logR {
		d.logR[i] = rng.NormFloat64()
	}
	for c := side*side - 1; c >= 0; c-- {
		f := math.Exp(d.logR[c])
		for _, ch := range d.children(c) {
			f += math.Exp(d.logF[ch]) / float64(len(d.parents(ch)))
		}
		d.logF[c] = math.Log(f)
	}
	return d
}

func (d *toyDAG) children(c int) []int {
	x, y := c%d.side, c/d.side
	var out []int
	if x+1 < d.side {
		out = append(out, c+1)
	}
	if y+1 < d.side {
		out = append(out, c+d.side)
	}
	return out
}

func (d *toyDAG) parents(c int) []int {
	x, y := c%d.side, c/d.side
	var out []int
	if x > 0 {
		out = append(out, c-1)
	}
	if y > 0 {
		out = append(out, c-d.side)
	}
	return out
}

// logPF is the exact log P_F(c'|c) of a move, logStop of stopping.
func (d *toyDAG) logPF(c, next int) float64 {
	return d.logF[next] - math.Log(float64(len(d.parents(next)))) - d.logF[c]
}
func (d *toyDAG) logStop(c int) float64 { return d.logR[c] - d.logF[c] }

// walks draws n trajectories from the exact P_F, cells visited in order.
func (d *toyDAG) walks(n int, rng *rand.Rand) [][]int {
	var out [][]int
	for range n {
		w := []int{0}
		for {
			c := w[len(w)-1]
			u := rng.Float64()
			if u -= math.Exp(d.logStop(c)); u < 0 {
				break
			}
			for _, ch := range d.children(c) {
				if u -= math.Exp(d.logPF(c, ch)); u < 0 {
					w = append(w, ch)
					break
				}
			}
			if u >= 0 { // rounding: stop
				break
			}
		}
		out = append(out, w)
	}
	return out
}

// batch lays the walks out for the objectives: transitions are the moves
// and, except with moves, the final stop into ⊤ (whose state entries are
// the terminal's), with exact flows, edges and stop probabilities.
func (d *toyDAG) batch(walks [][]int, moves bool) *Batch {
	b := &Batch{Off: []int{0}, LogZ: d.logF[0]}
	inf := math.Inf(-1)
	addState := func(c int, terminal bool) {
		b.InOff = append(b.InOff, len(b.InLogF))
		b.OutOff = append(b.OutOff, len(b.OutLogF))
		if terminal { // ⊤_c: one in-edge from c, no out-edges, R(c)
			b.LogF = append(b.LogF, 0) // not read
			b.StateLogR = append(b.StateLogR, d.logR[c])
			b.LogPStop = append(b.LogPStop, 0)
			b.InLogF = append(b.InLogF, d.logR[c])
			return
		}
		b.LogF = append(b.LogF, d.logF[c])
		if moves {
			b.StateLogR = append(b.StateLogR, d.logR[c])
		} else {
			b.StateLogR = append(b.StateLogR, inf)
		}
		b.LogPStop = append(b.LogPStop, d.logStop(c))
		for _, p := range d.parents(c) {
			b.InLogF = append(b.InLogF, d.logF[p]+d.logPF(p, c))
		}
		b.OutLogF = append(b.OutLogF, d.logR[c]) // the stop edge
		for _, ch := range d.children(c) {
			b.OutLogF = append(b.OutLogF, d.logF[c]+d.logPF(c, ch))
		}
	}
	for _, w := range walks {
		if moves && len(w) == 1 {
			continue // no move to balance
		}
		for i, c := range w {
			addState(c, false)
			if i+1 < len(w) {
				b.LogPF = append(b.LogPF, d.logPF(c, w[i+1]))
				b.LogPB = append(b.LogPB, -math.Log(float64(len(d.parents(w[i+1])))))
			}
		}
		last := w[len(w)-1]
		if !moves {
			addState(last, true)
			b.LogPF = append(b.LogPF, d.logStop(last))
			b.LogPB = append(b.LogPB, 0)
		}
		b.LogR = append(b.LogR, d.logR[last])
		b.Off = append(b.Off, len(b.LogPF))
	}
	b.InOff = append(b.InOff, len(b.InLogF))
	b.OutOff = append(b.OutOff, len(b.OutLogF))
	return b
}

// exactFL turns the exact flows of b into forward-looking ones with
// scales c_i = i/n: log F̃ = log F − c·log R, every state scored by its R.
func exactFL(b *Batch, d *toyDAG, walks [][]int) {
	k := 0
	for _, w := range walks {
		n := len(w) // moves + the stop
		for i, c := range w {
			s := b.Off[k] + k + i
			b.StateLogR[s] = d.logR[c]
			b.LogF[s] -= float64(i) / float64(n) * d.logR[c]
		}
		k++
	}
}

// TestExactFlowsVanish: at the exact flows of a DAG every objective's loss
// is 0, and a wrong log Z, flow or reward makes it positive.
func TestExactFlowsVanish(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := newToyDAG(4, rng)
	walks := d.walks(40, rng)
	for _, name := range Names {
		o, err := New(name, 0)
		if err != nil {
			t.Fatal(err)
		}
		b := d.batch(walks, name == "mdb")
		if strings.HasPrefix(name, "fl-") {
			exactFL(b, d, walks)
		}
		var r Result
		if err := o.Eval(b, nil, &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Loss > 1e-20 {
			t.Errorf("%s: loss %g at the exact flows, want 0", name, r.Loss)
		}
		if name != "vargrad" && math.Abs(r.LogZ-d.logF[0]) > 1e-12 || math.Abs(r.LogZ-d.logF[0]) > 1e-9 {
			t.Errorf("%s: log Z estimate %v, exact %v", name, r.LogZ, d.logF[0])
		}
		for k, v := range r.Delta {
			if math.Abs(v) > 1e-9 {
				t.Errorf("%s: δ[%d] = %g at the exact flows", name, k, v)
				break
			}
		}
		// A reward above the Student's estimate: δ > 0 and a loss.
		if name == "mdb" {
			last := b.Off[1] // x of trajectory 0 is state Off[1]+0
			b.StateLogR[last] += 0.5
		} else if name == "fm" {
			b.StateLogR[b.Off[1]] += 0.5
		} else {
			b.LogR[0] += 0.5
		}
		if err := o.Eval(b, nil, &r); err != nil {
			t.Fatal(err)
		}
		if !(r.Loss > 1e-6) || !(r.Delta[0] > 0) || !(r.PerObject[0] > 0) {
			t.Errorf("%s: R(x) raised by 0.5: loss %g, δ %g, ℓ %g; want all > 0", name, r.Loss, r.Delta[0], r.PerObject[0])
		}
	}
}

// randomBatch is a batch of random inputs: trajectories of 1 to 6
// transitions, every field filled.
func randomBatch(rng *rand.Rand, n int) *Batch {
	b := &Batch{Off: []int{0}, LogZ: rng.NormFloat64()}
	for range n {
		m := 1 + rng.IntN(6)
		for range m {
			b.LogPF = append(b.LogPF, -rng.Float64()*2)
			b.LogPB = append(b.LogPB, -rng.Float64()*2)
		}
		b.Off = append(b.Off, len(b.LogPF))
		b.LogR = append(b.LogR, rng.NormFloat64())
		for range m + 1 {
			b.LogF = append(b.LogF, rng.NormFloat64())
			b.StateLogR = append(b.StateLogR, rng.NormFloat64())
			b.LogPStop = append(b.LogPStop, -rng.Float64())
			b.Scale = append(b.Scale, rng.Float64())
			b.InOff = append(b.InOff, len(b.InLogF))
			b.OutOff = append(b.OutOff, len(b.OutLogF))
			for range 1 + rng.IntN(3) {
				b.InLogF = append(b.InLogF, rng.NormFloat64())
			}
			for range rng.IntN(3) {
				b.OutLogF = append(b.OutLogF, rng.NormFloat64())
			}
		}
	}
	b.InOff = append(b.InOff, len(b.InLogF))
	b.OutOff = append(b.OutOff, len(b.OutLogF))
	return b
}

// TestGradientsFiniteDifferences checks every gradient of every objective
// against central differences of its loss.
func TestGradientsFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range Names {
		for _, scale := range []bool{true, false} {
			o, _ := New(name, 0.7)
			b := randomBatch(rng, 5)
			if !scale {
				b.Scale = nil
			}
			var g Grad
			var r Result
			if err := o.Eval(b, &g, &r); err != nil {
				t.Fatal(err)
			}
			loss := func() float64 {
				var r Result
				if err := o.Eval(b, nil, &r); err != nil {
					t.Fatal(err)
				}
				return r.Loss
			}
			check := func(field string, x []float64, grad []float64) {
				if grad == nil {
					grad = make([]float64, len(x)) // not differentiated: must not matter
				}
				for i := range x {
					const h = 1e-6
					v := x[i]
					x[i] = v + h
					up := loss()
					x[i] = v - h
					down := loss()
					x[i] = v
					fd := (up - down) / (2 * h)
					if math.Abs(fd-grad[i]) > 1e-6*(1+math.Abs(fd)) {
						t.Errorf("%s: ∂/∂%s[%d] = %.9g, finite differences %.9g", name, field, i, grad[i], fd)
						return
					}
				}
			}
			b0 := *b
			check("LogPF", b.LogPF, g.LogPF)
			check("LogPB", b.LogPB, g.LogPB)
			check("LogF", b.LogF, g.LogF)
			check("LogPStop", b.LogPStop, g.LogPStop)
			check("InLogF", b.InLogF, g.InLogF)
			check("OutLogF", b.OutLogF, g.OutLogF)
			if name != "fm" { // FM does not differentiate log R (fixed)
				check("StateLogR", b.StateLogR, g.StateLogR)
			}
			{
				const h = 1e-6
				b.LogZ = b0.LogZ + h
				up := loss()
				b.LogZ = b0.LogZ - h
				down := loss()
				b.LogZ = b0.LogZ
				if fd := (up - down) / (2 * h); math.Abs(fd-g.LogZ) > 1e-6*(1+math.Abs(fd)) {
					t.Errorf("%s: ∂/∂LogZ = %.9g, finite differences %.9g", name, g.LogZ, fd)
				}
			}
		}
	}
}

// TestSubTBBruteForce recomputes SubTB from every sub-trajectory's
// residual summed term by term.
func TestSubTBBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	b := randomBatch(rng, 7)
	for _, lambda := range []float64{0.9, 0.5, 1, 2} {
		o := &SubTB{Lambda: lambda}
		var r Result
		if err := o.Eval(b, nil, &r); err != nil {
			t.Fatal(err)
		}
		var mean float64
		for k := range b.Len() {
			m := b.Off[k+1] - b.Off[k]
			flow := func(i int) float64 {
				if i == m {
					return b.LogR[k]
				}
				return b.LogF[b.Off[k]+k+i]
			}
			var num, den float64
			for i := 0; i < m; i++ {
				for j := i + 1; j <= m; j++ {
					res := flow(i) - flow(j)
					for s := i; s < j; s++ {
						res += b.LogPF[b.Off[k]+s] - b.LogPB[b.Off[k]+s]
					}
					w := math.Pow(lambda, float64(j-i))
					num += w * res * res
					den += w
				}
			}
			want := num / den
			if math.Abs(r.PerObject[k]-want) > 1e-12*(1+want) {
				t.Errorf("λ %v, trajectory %d: ℓ %.15g, brute force %.15g", lambda, k, r.PerObject[k], want)
			}
			mean += want
		}
		if mean /= float64(b.Len()); math.Abs(r.Loss-mean) > 1e-12*(1+mean) {
			t.Errorf("λ %v: loss %.15g, brute force %.15g", lambda, r.Loss, mean)
		}
	}
}

// TestIndependentForms checks TB, VarGrad, DB and modified DB against
// their formulas computed directly, and the relations between objectives:
// SubTB with one transition per trajectory is DB, and VarGrad's loss is
// TB's at the log Z that minimises it.
func TestIndependentForms(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	b := randomBatch(rng, 9)
	n := b.Len()
	sums := make([]float64, n) // Σ (log P_B − log P_F)
	for k := range n {
		for s := b.Off[k]; s < b.Off[k+1]; s++ {
			sums[k] += b.LogPB[s] - b.LogPF[s]
		}
	}
	var tb, vg Result
	if err := (&TB{}).Eval(b, nil, &tb); err != nil {
		t.Fatal(err)
	}
	var mean, sq float64
	for k := range n {
		d := b.LogR[k] + sums[k] - b.LogZ
		if math.Abs(tb.Delta[k]-d) > 1e-12 {
			t.Errorf("TB δ[%d] %v, want %v", k, tb.Delta[k], d)
		}
		mean += b.LogR[k] + sums[k]
		sq += d * d
	}
	if math.Abs(tb.Loss-sq/float64(n)) > 1e-12 {
		t.Errorf("TB loss %v, want %v", tb.Loss, sq/float64(n))
	}
	mean /= float64(n)
	if err := (&VarGrad{}).Eval(b, nil, &vg); err != nil {
		t.Fatal(err)
	}
	at := *b
	at.LogZ = mean
	var tbAt Result
	(&TB{}).Eval(&at, nil, &tbAt)
	if math.Abs(vg.Loss-tbAt.Loss) > 1e-12 {
		t.Errorf("VarGrad %v, TB at log Z = mean ζ %v", vg.Loss, tbAt.Loss)
	}

	// One transition per trajectory: SubTB's single pair is DB's term.
	one := randomBatch(rng, 1)
	one.Off = []int{0, 1}
	one.LogPF, one.LogPB, one.LogF = one.LogPF[:1], one.LogPB[:1], one.LogF[:2]
	var db, sub Result
	(&DB{}).Eval(one, nil, &db)
	(&SubTB{Lambda: 0.3}).Eval(one, nil, &sub)
	d := one.LogF[0] + one.LogPF[0] - one.LogR[0] - one.LogPB[0]
	if math.Abs(db.Loss-d*d) > 1e-12 || math.Abs(sub.Loss-d*d) > 1e-12 || math.Abs(db.Delta[0]+d) > 1e-12 {
		t.Errorf("one transition: DB %v (δ %v), SubTB %v, want %v (δ %v)", db.Loss, db.Delta[0], sub.Loss, d*d, -d)
	}
	var mdb Result
	(&ModifiedDB{}).Eval(b, nil, &mdb)
	for k := range n {
		var want float64
		for s := b.Off[k]; s < b.Off[k+1]; s++ {
			i := s + k
			d := b.StateLogR[i+1] + b.LogPB[s] + b.LogPStop[i] - b.StateLogR[i] - b.LogPF[s] - b.LogPStop[i+1]
			want += d * d
		}
		if math.Abs(mdb.PerObject[k]-want) > 1e-12 {
			t.Errorf("modified DB ℓ[%d] %v, want %v", k, mdb.PerObject[k], want)
		}
	}
}

// TestErrors: bad inputs are refused naming the field and what fits.
func TestErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range []struct {
		edit func(*Batch)
		obj  string
		want string
	}{
		{func(b *Batch) { b.LogPF = b.LogPF[1:] }, "tb", "len(LogPF)"},
		{func(b *Batch) { b.LogF = nil }, "db", "len(LogF) = 0, want"},
		{func(b *Batch) { b.Off[1] = 0 }, "tb", "trajectory 0 has 0 transitions"},
		{func(b *Batch) { b.Off = []int{0} }, "vargrad", "at least one trajectory"},
		{func(b *Batch) { b.LogPStop = b.LogPStop[:2] }, "mdb", "len(LogPStop) = 2"},
		{func(b *Batch) { b.InLogF = b.InLogF[1:] }, "fm", "InOff ends at"},
		{func(b *Batch) { b.Scale = b.Scale[1:] }, "fl-db", "len(Scale)"},
	} {
		b := randomBatch(rng, 3)
		c.edit(b)
		o, _ := New(c.obj, 0)
		if err := o.Eval(b, &Grad{}, &Result{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.obj, err, c.want)
		}
	}
	if _, err := New("ppo", 0); err == nil || !strings.Contains(err.Error(), "allowed: tb, db, subtb") {
		t.Errorf("New(ppo): %v", err)
	}
	if _, err := New("subtb", -1); err == nil || !strings.Contains(err.Error(), "lambda -1") {
		t.Errorf("New(subtb, -1): %v", err)
	}
}

// TestNoAllocations: after a first call, Eval reuses its buffers.
func TestNoAllocations(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	b := randomBatch(rng, 16)
	for _, name := range Names {
		o, _ := New(name, 0)
		var g Grad
		var r Result
		o.Eval(b, &g, &r)
		if a := testing.AllocsPerRun(20, func() { o.Eval(b, &g, &r) }); a != 0 {
			t.Errorf("%s: %v allocations per call", name, a)
		}
	}
}

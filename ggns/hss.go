package ggns

import (
	"fmt"
	"math"
)

// hss is Hamiltonian slice sampling of a batch of trajectories inside
// {x in the box : log R(x) > L*}, with scratch memory kept between calls.
type hss struct {
	x       []float32 // current positions, one row per trajectory
	v       []float64 // velocities
	nref    []int     // reflections off the likelihood boundary
	mem     []uint8   // outside flags of the last three steps, as bits
	killed  []bool    // outside three steps in a row
	kept    []int     // positions kept so far (reservoir count)
	lastL   []float64 // log R at the current position
	inPrior []bool    // current position inside the box
	alive   []int     // trajectories still running

	bx []float32 // gathered rows for the energy
	bl []float64
	bg []float64
}

// run moves the m trajectories starting at the rows of x0 (inside the
// constraint) with unit initial velocities v0 under log R > lstar. For each
// trajectory it writes into out/outL a position drawn uniformly from the
// positions it visited inside the constraint once every trajectory had
// reflected more than MinReflections times, and ok reports whether there
// is one (see the package comment for the exact rules). It returns the
// fraction of all trajectory steps that ended outside the constraint.
func (h *hss) run(s *sampler, x0 []float32, v0 []float64, lstar float64, out []float32, outL []float64, ok []bool) (float64, error) {
	d := s.d
	m := len(x0) / d
	lo, hi := s.o.Lower, s.o.Upper
	minRef, maxRef := s.o.MinReflections, s.o.MaxReflections
	sigma := s.o.VelocityNoise
	h.x = append(h.x[:0], x0...)
	h.v = append(h.v[:0], v0...)
	h.nref = grow(h.nref, m)
	h.mem = grow(h.mem, m)
	h.killed = grow(h.killed, m)
	h.kept = grow(h.kept, m)
	h.lastL = grow(h.lastL, m)
	h.inPrior = grow(h.inPrior, m)
	h.alive = grow(h.alive, m)
	for i := range m {
		h.nref[i], h.mem[i], h.killed[i], h.kept[i], ok[i] = 0, 0, false, 0, false
		h.alive[i] = i
	}
	h.bx = grow(h.bx, m*d)
	h.bl = grow(h.bl, m)
	h.bg = grow(h.bg, m*d)
	normal := make([]float64, d)
	noise := make([]float64, d)

	var nOut, nIn int
	saving := false
	minAlive := func() int {
		r := math.MaxInt
		for _, i := range h.alive {
			r = min(r, h.nref[i])
		}
		return r
	}
	for steps := 0; minAlive() < maxRef && steps < 100*maxRef; {
		steps++
		// Trajectories pruned at the previous step stop here.
		a := h.alive[:0]
		for _, i := range h.alive {
			if !h.killed[i] {
				a = append(a, i)
			}
		}
		h.alive = a
		if len(h.alive) == 0 {
			return 1, nil
		}
		// Euler step x ← x + v·dt, then log R and ∇log R at the new rows.
		na := len(h.alive)
		for r, i := range h.alive {
			xi := h.x[i*d : (i+1)*d]
			vi := h.v[i*d : (i+1)*d]
			for j := range xi {
				xi[j] = float32(float64(xi[j]) + vi[j]*s.dt)
			}
			copy(h.bx[r*d:(r+1)*d], xi)
		}
		if err := s.g.GradLogReward(h.bx[:na*d], h.bl[:na], h.bg[:na*d]); err != nil {
			return 0, fmt.Errorf("ggns: GradLogReward: %w", err)
		}
		s.gradEvals += na
		for r, i := range h.alive {
			xi := h.x[i*d : (i+1)*d]
			vi := h.v[i*d : (i+1)*d]
			l := h.bl[r]
			if math.IsNaN(l) || math.IsInf(l, 1) {
				return 0, fmt.Errorf("ggns: dynamic step %d, round %d, trajectory step %d, trajectory %d: log R = %v at x = %v", s.steps, s.round, steps, i, l, xi)
			}
			h.lastL[i] = l
			in := true
			for _, c := range xi {
				if float64(c) < lo || float64(c) > hi {
					in = false
					break
				}
			}
			h.inPrior[i] = in
			refl := l <= lstar
			outside := refl || !in
			h.mem[i] = (h.mem[i]<<1 | b2u(outside)) & 7
			h.killed[i] = h.mem[i] == 7
			if outside {
				// Reflect off the boundary: v ← v − 2(v·n)n, with n the
				// unit gradient of log R, or inside the box the unit
				// vector pointing back in along the violated coordinates.
				var nn float64
				if !in {
					for j, c := range xi {
						switch {
						case float64(c) < lo:
							normal[j] = 1
						case float64(c) > hi:
							normal[j] = -1
						default:
							normal[j] = 0
						}
						nn += normal[j] * normal[j]
					}
				} else {
					g := h.bg[r*d : (r+1)*d]
					for j, gj := range g {
						if math.IsNaN(gj) || math.IsInf(gj, 0) {
							return 0, fmt.Errorf("ggns: dynamic step %d, round %d, trajectory step %d, trajectory %d: ∇log R has %v at x = %v (log R = %v); the reflection needs the gradient", s.steps, s.round, steps, i, gj, xi, l)
						}
						normal[j] = gj
						nn += gj * gj
					}
				}
				if nn == 0 {
					// A flat boundary point: no normal, turn back.
					for j := range vi {
						vi[j] = -vi[j]
					}
				} else {
					inv := 1 / math.Sqrt(nn)
					var vn float64
					for j := range normal {
						normal[j] *= inv
						vn += vi[j] * normal[j]
					}
					for j := range vi {
						vi[j] -= 2 * vn * normal[j]
					}
				}
			}
			if refl {
				h.nref[i]++
			}
		}
		if minAlive() > minRef {
			saving = true
		}
		for _, i := range h.alive {
			outside := h.mem[i]&1 == 1
			if outside {
				nOut++
				continue
			}
			nIn++
			if saving {
				// Reservoir sampling of one kept position: uniform over
				// the positions kept inside the constraint.
				h.kept[i]++
				if h.kept[i] == 1 || s.rng.Float64()*float64(h.kept[i]) < 1 {
					copy(out[i*d:(i+1)*d], h.x[i*d:(i+1)*d])
					outL[i] = h.lastL[i]
				}
			}
			if sigma > 0 {
				var q float64
				for j := range noise {
					noise[j] = s.rng.NormFloat64()
					q += noise[j] * noise[j]
				}
				q = 1 / math.Sqrt(q)
				vi := h.v[i*d : (i+1)*d]
				for j := range vi {
					vi[j] *= 1 + sigma*noise[j]*q
				}
			}
		}
	}
	if saving {
		for _, i := range h.alive {
			ok[i] = !h.killed[i] && h.kept[i] > 0
		}
	} else {
		// No trajectory batch got past MinReflections everywhere: the
		// survivors that reflected at least MinReflections times return
		// their current position if it satisfies the constraint.
		for _, i := range h.alive {
			if h.killed[i] || h.nref[i] < minRef || !h.inPrior[i] || !(h.lastL[i] > lstar) {
				continue
			}
			copy(out[i*d:(i+1)*d], h.x[i*d:(i+1)*d])
			outL[i] = h.lastL[i]
			ok[i] = true
		}
	}
	if nOut+nIn == 0 {
		return 1, nil
	}
	return float64(nOut) / float64(nOut+nIn), nil
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

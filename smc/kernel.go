package smc

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The MCMC kernels. Each makes one step of every particle at inverse
// temperature beta with step size h, and returns the number of accepted
// proposals and the mean acceptance probability min(1, α) over the
// particles (0 for a rejected non-finite proposal). The target is
// log π = (1−β)·log p₀ + β·log R, with gradient −(1−β)x/σ² + β·∇log R.

// logPi is log π_β of a particle with log p₀ = lp0 and log R = lr.
func logPi(beta, lp0, lr float64) float64 { return (1-beta)*lp0 + beta*lr }

// proposalErr names a non-finite log R or gradient of a proposal.
func proposalErr(temp, st int, beta float64, i int, what string, v float64) error {
	return fmt.Errorf("smc: temperature %d (β = %.6g), MCMC step %d, particle %d: %s of the proposal = %v", temp, beta, st, i, what, v)
}

// checkProposal classifies proposal i (row y, log R ly, gradient gy or
// nil): ok to score, rejected (non-finite coordinates or log R = −Inf),
// or an error (NaN or +Inf log R, non-finite gradient at a finite state).
func checkProposal(temp, st int, beta float64, i int, y []float32, ly float64, gy []float64) (ok bool, err error) {
	if !finiteRow(y) || math.IsInf(ly, -1) {
		return false, nil
	}
	if math.IsNaN(ly) || math.IsInf(ly, 1) {
		return false, proposalErr(temp, st, beta, i, "log R", ly)
	}
	for _, g := range gy {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return false, proposalErr(temp, st, beta, i, "a gradient component", g)
		}
	}
	return true, nil
}

// accept moves proposal i (in s.y, s.logRy, s.grady) into the particles.
func (s *sampler) accept(i int, lp0y float64) {
	d := s.d
	copy(s.x[i*d:(i+1)*d], s.y[i*d:(i+1)*d])
	if s.needG {
		copy(s.grad[i*d:(i+1)*d], s.grady[i*d:(i+1)*d])
	}
	s.logR[i] = s.logRy[i]
	s.logP0[i] = lp0y
}

// mala is one Metropolis-adjusted Langevin step with step size eta:
// y = x + η∇log π(x) + √(2η)ξ, accepted with probability min(1, α),
//
//	log α = log π(y) − log π(x) + (‖y − x − η∇log π(x)‖² − ‖x − y − η∇log π(y)‖²)/(4η).
func (s *sampler) mala(temp, st int, beta, eta float64, rng *rand.Rand) (int, float64, error) {
	n, d := s.n, s.d
	iv := 1 / s.o.PriorVar
	noise := math.Sqrt(2 * eta)
	for i := range n {
		x, g, y := s.x[i*d:(i+1)*d], s.grad[i*d:(i+1)*d], s.y[i*d:(i+1)*d]
		for j, v := range x {
			xv := float64(v)
			gp := -(1-beta)*xv*iv + beta*g[j]
			y[j] = float32(xv + eta*gp + noise*rng.NormFloat64())
		}
	}
	if err := s.eval(s.y, s.logRy, s.grady); err != nil {
		return 0, 0, fmt.Errorf("smc: temperature %d, MCMC step %d: %w", temp, st, err)
	}
	acc, sumA := 0, 0.0
	for i := range n {
		u := rng.Float64()
		x, gx := s.x[i*d:(i+1)*d], s.grad[i*d:(i+1)*d]
		y, gy := s.y[i*d:(i+1)*d], s.grady[i*d:(i+1)*d]
		ok, err := checkProposal(temp, st, beta, i, y, s.logRy[i], gy)
		if err != nil {
			return acc, 0, err
		}
		if !ok {
			continue
		}
		lp0y := s.logPrior(y)
		var fwd, bck float64
		for j := range x {
			xv, yv := float64(x[j]), float64(y[j])
			r := yv - xv - eta*(-(1-beta)*xv*iv+beta*gx[j])
			q := xv - yv - eta*(-(1-beta)*yv*iv+beta*gy[j])
			fwd += r * r
			bck += q * q
		}
		la := logPi(beta, lp0y, s.logRy[i]) - logPi(beta, s.logP0[i], s.logR[i]) + (fwd-bck)/(4*eta)
		if math.IsNaN(la) {
			return acc, 0, proposalErr(temp, st, beta, i, "log acceptance ratio", la)
		}
		a := math.Exp(min(la, 0))
		sumA += a
		if u < a {
			s.accept(i, lp0y)
			acc++
		}
	}
	return acc, sumA / float64(n), nil
}

// rwm is one random-walk Metropolis step: y = x + h·ξ, accepted with
// probability min(1, π(y)/π(x)).
func (s *sampler) rwm(temp, st int, beta, h float64, rng *rand.Rand) (int, float64, error) {
	n, d := s.n, s.d
	for k, v := range s.x {
		s.y[k] = float32(float64(v) + h*rng.NormFloat64())
	}
	if err := s.eval(s.y, s.logRy, nil); err != nil {
		return 0, 0, fmt.Errorf("smc: temperature %d, MCMC step %d: %w", temp, st, err)
	}
	acc, sumA := 0, 0.0
	for i := range n {
		u := rng.Float64()
		y := s.y[i*d : (i+1)*d]
		ok, err := checkProposal(temp, st, beta, i, y, s.logRy[i], nil)
		if err != nil {
			return acc, 0, err
		}
		if !ok {
			continue
		}
		lp0y := s.logPrior(y)
		la := logPi(beta, lp0y, s.logRy[i]) - logPi(beta, s.logP0[i], s.logR[i])
		a := math.Exp(min(la, 0))
		sumA += a
		if u < a {
			s.accept(i, lp0y)
			acc++
		}
	}
	return acc, sumA / float64(n), nil
}

// hmc is one Hamiltonian Monte Carlo step with unit mass: momenta
// p ~ N(0, I), Leapfrog leapfrog steps of size eps on
// H(x, p) = −log π(x) + ‖p‖²/2, accepted with probability
// min(1, exp(H(x, p) − H(x', p'))). Positions are float32, as the states;
// momenta and gradients float64. A trajectory that reaches a non-finite
// coordinate or log R = −Inf stops there and is rejected; a NaN or +Inf
// log R, or a non-finite gradient, at a finite position is an error.
func (s *sampler) hmc(temp, st int, beta, eps float64, rng *rand.Rand) (int, float64, error) {
	n, d := s.n, s.d
	iv := 1 / s.o.PriorVar
	for k := range s.mom {
		s.mom[k] = rng.NormFloat64()
	}
	h0 := s.tmpW // free during moves
	copy(s.y, s.x)
	copy(s.grady, s.grad)
	copy(s.logRy, s.logR)
	kick := func(i int, f float64) {
		y, g, p := s.y[i*d:(i+1)*d], s.grady[i*d:(i+1)*d], s.mom[i*d:(i+1)*d]
		for j := range p {
			p[j] += f * (-(1-beta)*float64(y[j])*iv + beta*g[j])
		}
	}
	for i := range n {
		s.alive[i] = true
		h0[i] = -logPi(beta, s.logP0[i], s.logR[i]) + 0.5*sqNorm(s.mom[i*d:(i+1)*d])
		kick(i, eps/2)
	}
	for l := 1; l <= s.o.Leapfrog; l++ {
		for i := range n {
			if !s.alive[i] {
				continue
			}
			y, p := s.y[i*d:(i+1)*d], s.mom[i*d:(i+1)*d]
			for j := range y {
				y[j] = float32(float64(y[j]) + eps*p[j])
			}
			if !finiteRow(y) {
				s.alive[i] = false
			}
		}
		if err := s.eval(s.y, s.logRy, s.grady); err != nil {
			return 0, 0, fmt.Errorf("smc: temperature %d, MCMC step %d, leapfrog step %d: %w", temp, st, l, err)
		}
		f := eps
		if l == s.o.Leapfrog {
			f = eps / 2
		}
		for i := range n {
			if !s.alive[i] {
				continue
			}
			ly := s.logRy[i]
			if math.IsInf(ly, -1) {
				s.alive[i] = false
				continue
			}
			if math.IsNaN(ly) || math.IsInf(ly, 1) {
				return 0, 0, fmt.Errorf("smc: temperature %d (β = %.6g), MCMC step %d, leapfrog step %d, particle %d: log R = %v", temp, beta, st, l, i, ly)
			}
			if g := s.grady[i*d : (i+1)*d]; !finiteF(g) {
				return 0, 0, fmt.Errorf("smc: temperature %d (β = %.6g), MCMC step %d, leapfrog step %d, particle %d: gradient %v is not finite", temp, beta, st, l, i, g)
			}
			kick(i, f)
		}
	}
	acc, sumA := 0, 0.0
	for i := range n {
		u := rng.Float64()
		if !s.alive[i] {
			continue
		}
		y := s.y[i*d : (i+1)*d]
		lp0y := s.logPrior(y)
		la := h0[i] - (-logPi(beta, lp0y, s.logRy[i]) + 0.5*sqNorm(s.mom[i*d:(i+1)*d]))
		if math.IsNaN(la) {
			return acc, 0, proposalErr(temp, st, beta, i, "log acceptance ratio", la)
		}
		a := math.Exp(min(la, 0))
		sumA += a
		if u < a {
			s.accept(i, lp0y)
			acc++
		}
	}
	return acc, sumA / float64(n), nil
}

func sqNorm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return s
}

func finiteF(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

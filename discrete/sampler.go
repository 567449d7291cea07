package discrete

import (
	"math"
	"math/rand/v2"
	"runtime"
)

// SampleOptions shape the behaviour policy of forward sampling.
type SampleOptions struct {
	// Eps mixes the policy with the uniform distribution over valid
	// actions: (1-Eps)·π + Eps/#valid.
	Eps float64
	// Temperature divides the logits before the softmax; 0 means 1.
	Temperature float64
	// Record asks a Recorder model to keep its forward passes, so that
	// TB on this batch with the same model reuses them.
	Record bool
	// Companion, with Record, is a second Recorder (another agent that
	// trains on this batch) run on the same states at every step on
	// another goroutine while the sampling model works, its passes
	// recorded too: TB with it on this batch then needs no forward pass
	// of its own. It must not be the sampling model, and the
	// environment's Features must be safe for concurrent use.
	Companion Recorder
}

// Sampler draws trajectories forward from a model or backward with the
// uniform P_B. Its scratch space is reused, so steady-state sampling does
// not allocate. A Sampler is not safe for concurrent use.
type Sampler struct {
	Env Env

	cur   []int32 // active states, one row each
	owner []int   // trajectory index of each active row
	trS   [][]int32
	trA   [][]int32
	trR   [][]int32 // recorded row of each transition
	final []int32
	logpf []float64
	mask  []bool
	probs []float64

	groups   Groups
	ids      []int32
	ustates  []int32
	finished []int32
	comp     *companion
}

// companion runs a second model on the sampler's distinct states on its
// own goroutine. Steps are gathered into chunks of at least chunkRows rows:
// fewer hand-offs between the goroutines, and larger products. (Rows of
// a pass do not depend on which other rows share it, so the chunking does
// not change the result.) The chunks go through a ring of reused buffers,
// so steady-state sampling allocates nothing.
type companion struct {
	model Recorder      // set before each batch's first job
	ring  [4][]int32    // chunk inputs
	rows  [4]int        // their row counts
	slot  int           // the chunk being filled, -1 if none
	free  chan int      // ring slots the sampler may fill
	work  chan int      // filled slots, or -1 at the end of a batch
	done  chan struct{} // the worker has run every job of the batch
}

const chunkRows = 64

func newCompanion() *companion {
	c := &companion{slot: -1, free: make(chan int, 4), work: make(chan int, 4), done: make(chan struct{})}
	for i := range c.ring {
		c.free <- i
	}
	// The worker holds only c, never the Sampler: once the Sampler is
	// collected its cleanup closes work and the worker exits.
	go c.run()
	return c
}

func (c *companion) run() {
	for slot := range c.work {
		if slot < 0 {
			c.done <- struct{}{}
			continue
		}
		c.model.Forward(c.ring[slot], c.rows[slot])
		c.free <- slot
	}
}

// add queues one step's distinct states (rows of them).
func (c *companion) add(states []int32, rows int) {
	if c.slot < 0 {
		c.slot = <-c.free
		c.ring[c.slot] = c.ring[c.slot][:0]
		c.rows[c.slot] = 0
	}
	c.ring[c.slot] = append(c.ring[c.slot], states...)
	c.rows[c.slot] += rows
	if c.rows[c.slot] >= chunkRows {
		c.flush()
	}
}

func (c *companion) flush() {
	if c.slot >= 0 {
		c.work <- c.slot
		c.slot = -1
	}
}

// wait returns once every queued step has run.
func (c *companion) wait() {
	c.flush()
	c.work <- -1
	<-c.done
}

// NewSampler returns a sampler for env.
func NewSampler(env Env) *Sampler { return &Sampler{Env: env} }

func (s *Sampler) resetTraj(n int) {
	for len(s.trS) < n {
		s.trS = append(s.trS, nil)
		s.trA = append(s.trA, nil)
		s.trR = append(s.trR, nil)
	}
	for b := range n {
		s.trS[b], s.trA[b], s.trR[b] = s.trS[b][:0], s.trA[b][:0], s.trR[b][:0]
	}
	s.final = growInt32(s.final, n*s.Env.StateLen())
	s.logpf = growF64(s.logpf, n)
	clear(s.logpf)
}

// Forward samples n trajectories from model m into out (replacing its
// contents).
func (s *Sampler) Forward(m Model, n int, opt SampleOptions, rng *rand.Rand, out *Trajectories) {
	s.forward(m, nil, n, opt, rng, out)
}

// ForwardFrom completes n partial trajectories: trajectory b starts at the
// non-terminal state starts[b] (n rows of StateLen words) instead of s0.
// Its transitions and log P_B cover only the completed part.
func (s *Sampler) ForwardFrom(m Model, starts []int32, n int, opt SampleOptions, rng *rand.Rand, out *Trajectories) {
	s.forward(m, starts, n, opt, rng, out)
}

func (s *Sampler) forward(m Model, starts []int32, n int, opt SampleOptions, rng *rand.Rand, out *Trajectories) {
	env := s.Env
	w, na := env.StateLen(), env.NumActions()
	temp := opt.Temperature
	if temp == 0 {
		temp = 1
	}
	s.resetTraj(n)
	s.finished = s.finished[:0]
	s.cur = growInt32(s.cur, n*w)
	s.owner = s.owner[:0]
	for b := range n {
		if starts != nil {
			copy(s.cur[b*w:(b+1)*w], starts[b*w:(b+1)*w])
		} else {
			env.Init(s.cur[b*w : (b+1)*w])
		}
		s.owner = append(s.owner, b)
	}
	s.mask = growBool(s.mask, na)
	s.probs = growF64(s.probs, na)
	rec, _ := m.(Recorder)
	if !opt.Record {
		rec = nil
	}
	var comp *companion
	if rec != nil {
		rec.StartRecording()
		if opt.Companion != nil {
			if opt.Companion == rec {
				panic("discrete: the companion model is the sampling model")
			}
			if s.comp == nil {
				s.comp = newCompanion()
				runtime.AddCleanup(s, func(work chan int) { close(work) }, s.comp.work)
			}
			comp = s.comp
			comp.model = opt.Companion
			opt.Companion.StartRecording()
		}
	}
	base := 0 // recorded rows so far
	for rows := n; rows > 0; {
		// Trajectories often share a state (all start at s0): run the
		// network once per distinct state of this step.
		s.ids = growInt32(s.ids, rows)
		rep := s.groups.Assign(s.cur, rows, w, s.ids)
		s.ustates = s.ustates[:0]
		for _, r := range rep {
			s.ustates = append(s.ustates, s.cur[int(r)*w:int(r+1)*w]...)
		}
		if comp != nil {
			comp.add(s.ustates, len(rep))
		}
		logits := m.Forward(s.ustates, len(rep))
		next := 0
		for r := range rows {
			st := s.cur[r*w : (r+1)*w]
			a, lp := s.draw(logits.Row(int(s.ids[r])), st, temp, opt.Eps, rng)
			b := s.owner[r]
			s.trS[b] = append(s.trS[b], st...)
			s.trA[b] = append(s.trA[b], int32(a))
			s.trR[b] = append(s.trR[b], int32(base)+s.ids[r])
			s.logpf[b] += lp
			if env.Step(st, a) {
				copy(s.final[b*w:(b+1)*w], st)
				s.finished = append(s.finished, int32(b))
				continue
			}
			// Compact the still-active rows to the front.
			if next != r {
				copy(s.cur[next*w:(next+1)*w], st)
				s.owner[next] = b
			}
			next++
		}
		base += len(rep)
		rows = next
	}
	out.Reset(w)
	for b := range n {
		out.add(env, s.trS[b], s.trA[b], s.final[b*w:(b+1)*w], s.logpf[b])
	}
	out.Finished = append(out.Finished, s.finished...)
	if comp != nil {
		comp.wait()
		_, out.CompanionGen = comp.model.StopRecording()
		out.CompanionBy = comp.model
		comp.model = nil
	}
	if rec != nil {
		out.RecLogits, out.RecGen = rec.StopRecording()
		out.RecBy = rec
		for b := range n {
			out.Rec = append(out.Rec, s.trR[b]...)
		}
	}
}

// draw samples one action from the masked, tempered, ε-mixed policy and
// returns it with its log-probability.
func (s *Sampler) draw(logits []float32, st []int32, temp, eps float64, rng *rand.Rand) (int, float64) {
	mask, p := s.mask, s.probs
	s.Env.ForwardMask(st, mask)
	mx, valid := math.Inf(-1), 0
	for j, ok := range mask {
		if ok {
			valid++
			mx = max(mx, float64(logits[j])/temp)
		}
	}
	var z float64
	for j, ok := range mask {
		p[j] = 0
		if ok {
			p[j] = math.Exp(float64(logits[j])/temp - mx)
			z += p[j]
		}
	}
	for j, ok := range mask {
		if ok {
			p[j] = (1-eps)*p[j]/z + eps/float64(valid)
		}
	}
	u := rng.Float64()
	last := 0
	for j, ok := range mask {
		if !ok {
			continue
		}
		last = j
		if u < p[j] {
			return j, math.Log(p[j])
		}
		u -= p[j]
	}
	return last, math.Log(p[last]) // rounding left u just above the total
}

// Backward builds one trajectory per terminal state in xs (n rows) by
// walking back to s0 with the uniform P_B, into out (replacing its
// contents).
func (s *Sampler) Backward(xs []int32, n int, rng *rand.Rand, out *Trajectories) {
	env := s.Env
	w := env.StateLen()
	s.resetTraj(n)
	s.mask = growBool(s.mask, env.NumBackActions())
	cur := growInt32(s.cur, w)
	s.cur = cur
	out.Reset(w)
	for b := range n {
		x := xs[b*w : (b+1)*w]
		copy(cur, x)
		st, ac := s.trS[b], s.trA[b]
		for !env.IsInitial(cur) {
			cnt := env.BackwardMask(cur, s.mask)
			k := rng.IntN(cnt)
			for j, ok := range s.mask {
				if ok {
					if k == 0 {
						ac = append(ac, int32(env.BackStep(cur, j)))
						break
					}
					k--
				}
			}
			st = append(st, cur...)
		}
		// Reverse into forward order.
		for i, j := 0, len(ac)-1; i < j; i, j = i+1, j-1 {
			ac[i], ac[j] = ac[j], ac[i]
			for k := range w {
				st[i*w+k], st[j*w+k] = st[j*w+k], st[i*w+k]
			}
		}
		s.trS[b], s.trA[b] = st, ac
		out.add(env, st, ac, x, 0)
	}
}

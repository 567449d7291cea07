package kernel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// A split product (or a large element-wise kernel, GELU's) is a job of
// shares that goroutines claim one at a time.
// Each share gets a goroutine of its own, started with a go statement on a
// function value that the job made once (its method value job.claim), so
// that starting it allocates nothing once the runtime has dead goroutines
// to reuse; a go statement with arguments would allocate a closure per
// product, and products are split a dozen times per training iteration.
// Goroutines per product, rather than long-lived workers, keep the
// scheduler's fast path: the caller blocks at once, one share runs on its
// P and the other is stolen by an idle P. Two alternatives measured 8–9%
// slower per training iteration (BenchmarkIterate in package train): workers
// woken through a channel (tb), and goroutines fed from one shared queue
// (teacher; likely because shares of the Student's products then ran on the
// Teacher's core and the other way round). A job returns to its pool when
// the last goroutine holding it lets go.

// share is one part of a product: rows [lo, hi) and columns [jlo, jhi) of C;
// or of an element-wise kernel, which takes its parts of the operands in
// a, b and c.
type share struct {
	run            func(share, *scratch) // a package-level function: no closure to allocate
	be             Backend
	transA, transB bool
	lo, hi         int
	jlo, jhi       int
	n, k           int
	a, b, c        []float32
	lda, ldb, ldc  int
	accumulate     bool
}

// maxShares bounds the shares of one product (the cores used at once).
const maxShares = 16

// job is one split product. It returns to jobPool when the last goroutine
// holding it lets go, so a late goroutine never sees it reused.
type job struct {
	sh    [maxShares]share
	count int
	claim func()       // j.claimAndRelease, made once per job
	next  atomic.Int32 // the next share to claim
	refs  atomic.Int32 // goroutines holding the job
	done  sync.WaitGroup
}

var jobPool = sync.Pool{New: func() any { return new(job) }}

// claimAndRelease is the body of a goroutine started for the job.
func (j *job) claimAndRelease() {
	scr := scratchPool.Get().(*scratch)
	j.work(scr)
	scratchPool.Put(scr)
	j.release()
}

// work runs shares until none is left to claim.
func (j *job) work(scr *scratch) {
	for {
		i := int(j.next.Add(1)) - 1
		if i >= j.count {
			return
		}
		j.sh[i].run(j.sh[i], scr)
		j.done.Done()
	}
}

func (j *job) release() {
	if j.refs.Add(-1) == 0 {
		clear(j.sh[:j.count]) // drop the operands for the collector
		j.count = 0
		jobPool.Put(j)
	}
}

// scratch is one goroutine's packing space.
type scratch struct {
	a    []float32 // packed A block
	b    []float32 // packed panels of a transposed B block
	edge []float32 // zero-padded last B panel
	tile []float32 // partial C tile
	bfA  []uint32  // packed bfloat16 pairs of an A block (GemmBF16)
	bfB  []uint32  // packed bfloat16 pairs of a B block (GemmBF16)
	bfT  []uint32  // pairs of a transposed A block before transposing (GemmBF16 on AMX)
	rA   []float32 // op(A) rounded to bfloat16 (GemmBF16's fma path)
	rB   []float32 // op(B) rounded to bfloat16 (GemmBF16's fma path)
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// shareCount is how many shares a product is split into: GOMAXPROCS,
// at most maxShares.
func shareCount() int { return min(runtime.GOMAXPROCS(0), maxShares) }

// newJob returns an empty job; add its shares, then run it.
func newJob() *job {
	j := jobPool.Get().(*job)
	if j.claim == nil {
		j.claim = j.claimAndRelease
	}
	return j
}

// add appends a share (at most maxShares).
func (j *job) add(s share) {
	j.sh[j.count] = s
	j.count++
}

// run runs every share and returns when all are done, giving the job back.
func (j *job) run() {
	j.next.Store(0)
	j.refs.Store(int32(1 + j.count))
	j.done.Add(j.count)
	for range j.count {
		go j.claim()
	}
	j.done.Wait()
	j.release()
}

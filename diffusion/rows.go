package diffusion

import (
	"runtime"
	"sync"
)

// parallelMinWork is the least number of values (rows × values per row)
// for which forRows splits its rows across cores: below it the goroutines
// cost more than they save (a 25GMM batch of 300 × 2 runs serially; an
// LGCP batch of 300 × 1,600 per step is split).
const parallelMinWork = 1 << 15

// forRows calls f on consecutive shares [lo, hi) of the rows [0, n), on up
// to GOMAXPROCS goroutines when n·perRow ≥ parallelMinWork, else once.
// f must touch only its rows' outputs: every row is computed exactly as a
// serial loop would, so results do not depend on the split.
//
// A func literal passed here escapes (the goroutines keep it), so it is
// allocated where it is written: callers on a hot path test rowsParallel
// first and call their row function directly when it is false, so that
// serial batches allocate nothing.
func forRows(n, perRow int, f func(lo, hi int)) {
	p := min(runtime.GOMAXPROCS(0), n)
	if !rowsParallel(n, perRow) {
		if n > 0 {
			f(0, n)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range p {
		lo, hi := n*w/p, n*(w+1)/p
		wg.Go(func() { f(lo, hi) })
	}
	wg.Wait()
}

// rowsParallel reports whether forRows splits n rows of perRow values.
func rowsParallel(n, perRow int) bool {
	return min(runtime.GOMAXPROCS(0), n) > 1 && n*perRow >= parallelMinWork
}

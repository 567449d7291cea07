package kernel

import "sync"

// Backend names the kernel implementation in use.
type Backend string

// The backends: portable Go everywhere, the AVX2+FMA and AVX-512
// micro-kernels on amd64 CPUs that have those features.
const (
	BackendGo     Backend = "go"
	backendAVX2   Backend = "avx2+fma"
	backendAVX512 Backend = "avx512"
)

// backend is the fastest implementation this CPU supports; tests switch it
// to exercise every path on one machine.
var backend = BackendGo

// Name reports the kernel backend Gemm uses on this machine.
func Name() Backend { return backend }

// Available lists the backends this machine can run, fastest last.
func Available() []Backend {
	b := []Backend{BackendGo}
	if hasSIMD {
		b = append(b, backendAVX2)
	}
	if hasAVX512 {
		b = append(b, backendAVX512)
	}
	return b
}

// Use switches the backend, for tests and benchmarks. It returns the previous
// one, and panics for a backend this machine cannot run.
func Use(b Backend) Backend {
	ok := false
	for _, a := range Available() {
		ok = ok || a == b
	}
	if !ok {
		panic("kernel: backend " + string(b) + " is not available on this machine")
	}
	prev := backend
	backend = b
	return prev
}

// noRowsInPlace makes the AVX2 backend pack a row-major A instead of
// reading it in place (tests compare the two).
var noRowsInPlace bool

// noPackWideB makes the AVX2 backend read a wide row-major B in place
// instead of packing it (tests compare the two).
var noPackWideB bool

// packPool holds scratch panels for transposing B in Xᵀ-free products.
var packPool = sync.Pool{New: func() any { s := make([]float32, 0, 256*256); return &s }}

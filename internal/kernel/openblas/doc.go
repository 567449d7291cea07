//go:build openblas

// Package openblas compares the kernel package's matrix products with
// OpenBLAS on the same machine, in the same process. It needs cgo and
// libopenblas, so it is built only with the openblas tag and never part of
// the default build:
//
//	apt-get install libopenblas-dev
//	OPENBLAS_CORETYPE=COOPERLAKE go test -tags openblas -bench . -cpu 1,2 ./internal/kernel/openblas
//
// Set OPENBLAS_CORETYPE when OpenBLAS's CPU detection fails (it picks the
// generic Prescott kernels inside some VMs, ~15 GFLOP/s); OPENBLAS_VERBOSE=2
// prints the core it chose.
package openblas

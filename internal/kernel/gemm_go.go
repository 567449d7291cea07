package kernel

// Portable kernels. They are written as row-wise axpy and dot loops, which
// the Go compiler turns into tight scalar code with bounds checks hoisted.

// gemmNN: C[i,:] += Σ_p A[i,p]·B[p,:].
func gemmNN(lo, hi, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := lo; i < hi; i++ {
		crow := c[i*ldc : i*ldc+n]
		arow := a[i*lda : i*lda+k]
		if n < 8 {
			// Few columns (a policy's logits): inline, no call per p.
			for p, av := range arow {
				for j, bv := range b[p*ldb : p*ldb+n] {
					crow[j] += av * bv
				}
			}
			continue
		}
		for p, av := range arow {
			if av == 0 {
				continue
			}
			axpy(av, b[p*ldb:p*ldb+n], crow)
		}
	}
}

// gemmTN: C[i,:] += Σ_p A[p,i]·B[p,:], A stored k×m.
func gemmTN(lo, hi, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for p := range k {
		brow := b[p*ldb : p*ldb+n]
		acol := a[p*lda : p*lda+hi]
		for i := lo; i < hi; i++ {
			av := acol[i]
			if av == 0 {
				continue
			}
			axpy(av, brow, c[i*ldc:i*ldc+n])
		}
	}
}

// gemmNT: C[i,j] += A[i,:]·B[j,:], B stored n×k.
func gemmNT(lo, hi, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := lo; i < hi; i++ {
		arow := a[i*lda : i*lda+k]
		crow := c[i*ldc : i*ldc+n]
		for j := range crow {
			crow[j] += dot(arow, b[j*ldb:j*ldb+k])
		}
	}
}

// gemmTT: C[i,j] += Σ_p A[p,i]·B[j,p]. Rare; kept simple.
func gemmTT(lo, hi, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := lo; i < hi; i++ {
		crow := c[i*ldc : i*ldc+n]
		for j := range crow {
			brow := b[j*ldb : j*ldb+k]
			var s float32
			for p, bv := range brow {
				s += a[p*lda+i] * bv
			}
			crow[j] += s
		}
	}
}

func axpy(alpha float32, x, y []float32) {
	y = y[:len(x)]
	i := 0
	for ; i+8 <= len(x); i += 8 {
		xs := x[i : i+8 : i+8]
		ys := y[i : i+8 : i+8]
		ys[0] += alpha * xs[0]
		ys[1] += alpha * xs[1]
		ys[2] += alpha * xs[2]
		ys[3] += alpha * xs[3]
		ys[4] += alpha * xs[4]
		ys[5] += alpha * xs[5]
		ys[6] += alpha * xs[6]
		ys[7] += alpha * xs[7]
	}
	for ; i < len(x); i++ {
		y[i] += alpha * x[i]
	}
}

func dot(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		xs := x[i : i+4 : i+4]
		ys := y[i : i+4 : i+4]
		s0 += xs[0] * ys[0]
		s1 += xs[1] * ys[1]
		s2 += xs[2] * ys[2]
		s3 += xs[3] * ys[3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

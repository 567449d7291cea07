package nn

import (
	"fmt"

	"github.com/gfngo/gfn/internal/cpusim"
	"github.com/gfngo/gfn/internal/kernel"
)

// Precision is the arithmetic of a layer's matrix products: its forward
// product X·W and, in Backward, the weight gradient Xᵀ·dY and the input
// gradient dY·Wᵀ. Whatever the precision, weights, their gradients, biases,
// activations and Adam's moments are stored in float32, and a product's
// result is float32: only the operands of the three products are rounded.
//
// The zero value is FP32. A family's configuration can hold a Precision
// directly: it reads and writes as "fp32" or "bf16" in JSON (MarshalText),
// and FP32, being zero, is left out of a field tagged omitempty.
type Precision uint8

// The precisions.
const (
	// FP32 multiplies float32 operands with float32 sums (kernel.Gemm).
	FP32 Precision = iota
	// BF16 rounds both operands of a product to bfloat16 (8 significant
	// bits, round to nearest even) and sums their exact products in
	// float32 (kernel.GemmBF16): each result is within about
	// 2^-7·Σ_p |a_ip|·|b_pj| of the float32 product. It needs a CPU with
	// AMX-BF16, AVX512_BF16 or at least AVX2 and FMA (Check);
	// kernel.BF16Kernel names the kernel that runs ("amx", 2–7× float32's
	// speed on the products measured; "avx512bf16", about 0.6× on the Xeon
	// measured; "fma", the float32 kernel on rounded operands, about
	// float32's speed: the same results, summed in another order, on any
	// x86-64 CPU of the last decade).
	BF16
)

// Precisions lists the precisions' names, as accepted by ParsePrecision.
var Precisions = []string{"fp32", "bf16"}

// String returns "fp32" or "bf16".
func (p Precision) String() string {
	if int(p) < len(Precisions) {
		return Precisions[p]
	}
	return fmt.Sprintf("Precision(%d)", uint8(p))
}

// ParsePrecision returns the precision named s ("fp32" or "bf16"). It does
// not look at the CPU: Check and the SetPrecision methods do.
func ParsePrecision(s string) (Precision, error) {
	for i, name := range Precisions {
		if s == name {
			return Precision(i), nil
		}
	}
	return FP32, fmt.Errorf("nn: precision %q is unknown (allowed: fp32, bf16)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (p Precision) MarshalText() ([]byte, error) {
	if int(p) >= len(Precisions) {
		return nil, fmt.Errorf("nn: precision %d is unknown", uint8(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParsePrecision.
func (p *Precision) UnmarshalText(b []byte) error {
	v, err := ParsePrecision(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Check reports whether this machine runs p's products at a useful speed:
// nil for FP32; for BF16, nil where kernel.HasBF16Path (AMX-BF16 or
// AVX512_BF16, or the float32 FMA kernel on rounded operands, which
// measured 0.7–1.1× float32's speed per training iteration, 0.82× over
// whole runs of the narrowest network, docs/results/bf16-kernels.md),
// else an error naming the missing CPU features. Without AVX2 and FMA,
// BF16 is refused rather than run on the portable bfloat16 kernel (same
// bits as the instruction), which runs at a few percent of float32's speed
// (docs/results/bf16-kernels.md).
func (p Precision) Check() error {
	switch p {
	case FP32:
		return nil
	case BF16:
		if !hasBF16() {
			return fmt.Errorf("nn: precision bf16 needs a CPU with AMX-BF16 or AVX512_BF16, or at least AVX2 and FMA, which this one lacks (use fp32)")
		}
		return nil
	}
	return fmt.Errorf("nn: precision %d is unknown", uint8(p))
}

// hasBF16 is kernel.HasBF16 unless cpusim.NoBF16 is set; tests replace it
// (or set cpusim.NoBF16, from other packages) to see the refusal on a CPU
// that has the instructions.
var hasBF16 = func() bool { return !cpusim.NoBF16.Load() && kernel.HasBF16Path() }

// gemm is kernel.Gemm or kernel.GemmBF16, as p selects.
func (p Precision) gemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	if p == BF16 {
		kernel.GemmBF16(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate)
		return
	}
	kernel.Gemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate)
}

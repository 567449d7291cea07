package sequence

import (
	"math"
	"math/big"
	"testing"
)

// TestMaxKeyLength: A^n ≤ 2^64 < A^(n+1) by exact integer arithmetic, and
// KeyFits agrees at n and n+1.
func TestMaxKeyLength(t *testing.T) {
	limit := new(big.Int).Lsh(big.NewInt(1), 64)
	for a := 2; a <= 40; a++ {
		n := MaxKeyLength(a)
		pow := func(k int) *big.Int { return new(big.Int).Exp(big.NewInt(int64(a)), big.NewInt(int64(k)), nil) }
		if pow(n).Cmp(limit) > 0 || pow(n+1).Cmp(limit) <= 0 {
			t.Errorf("MaxKeyLength(%d) = %d: %d^%d or %d^%d is on the wrong side of 2^64", a, n, a, n, a, n+1)
		}
		for k, want := range map[int]bool{n: true, n + 1: false} {
			e, err := NewPrependAppend(a, k, func([]int32, int, []float64) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			if e.KeyFits() != want {
				t.Errorf("%d letters, length %d: KeyFits %v, want %v", a, k, e.KeyFits(), want)
			}
		}
	}
	if MaxKeyLength(1) != math.MaxInt {
		t.Error("one letter: every length has keys")
	}
}

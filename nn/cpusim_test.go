package nn

import (
	"strings"
	"testing"

	"github.com/gfngo/gfn/internal/cpusim"
)

// TestCPUSimNoBF16: other packages' tests refuse BF16 through cpusim.
func TestCPUSimNoBF16(t *testing.T) {
	cpusim.NoBF16.Store(true)
	defer cpusim.NoBF16.Store(false)
	if err := BF16.Check(); err == nil || !strings.Contains(err.Error(), "AVX512_BF16") {
		t.Fatalf("BF16.Check() with cpusim.NoBF16: %v", err)
	}
	if err := FP32.Check(); err != nil {
		t.Fatal(err)
	}
}

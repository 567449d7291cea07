package main

import (
	"fmt"

	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
)

// addPrecisionFlag defines --precision on p for a family whose bf16
// products are products (a phrase for the help). A fresh run checks the
// CPU before it writes anything (freshRun); a resumed run keeps its
// checkpoint's precision, so --resume refuses the flag.
func (c *trainCmd) addPrecisionFlag(p *nn.Precision, products string) {
	c.prec = p
	c.fs.TextVar(p, "precision", *p, "arithmetic of the networks' hidden-layer matrix products, `fp32|bf16`: bf16 has bfloat16 operands summed in float32 ("+products+"); weights, Adam, log Z, log-densities, the loss and every metric stay float32/float64; faster than fp32 only with AMX-BF16 (AVX512_BF16 alone measured slower), about fp32's speed with AVX2 and FMA, refused without those")
}

// checkPrecision refuses a precision this CPU cannot run (nn's error,
// naming the missing feature).
func (c *trainCmd) checkPrecision() error {
	if c.prec == nil {
		return nil
	}
	return c.prec.Check()
}

// precisionHeader is what a run's header adds for its precision: nothing
// for fp32, the precision and kernel otherwise.
func (c *trainCmd) precisionHeader() string {
	if c.prec == nil || *c.prec == nn.FP32 {
		return ""
	}
	return fmt.Sprintf(", precision %s (%s kernel)", *c.prec, kernel.BF16Kernel())
}

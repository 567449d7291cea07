package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/gfngo/gfn/internal/kernel"
	"github.com/gfngo/gfn/nn"
	"github.com/gfngo/gfn/seqtrain"
	"github.com/gfngo/gfn/train"
)

// TestSeqSpeedSmall times two TFbind8 rounds, in bf16 too where the CPU
// has it, and the grid's tiny case in bf16: rows named by precision.
func TestSeqSpeedSmall(t *testing.T) {
	ps := []nn.Precision{nn.FP32}
	if kernel.HasBF16Path() {
		ps = append(ps, nn.BF16)
	}
	var rs []SeqSpeedResult
	for _, p := range ps {
		r, err := SeqSpeed(context.Background(), SeqSpeedCase{"seq tiny", "tfbind8", seqtrain.TeacherPER}, SeqSpeedOptions{Rounds: 2, Warmup: 2, Precision: p})
		if err != nil {
			t.Fatal(err)
		}
		if !(r.MedianMs > 0 && r.MeanMs > 0) || r.Width != 128 || r.Precision != p {
			t.Errorf("%+v", r)
		}
		rs = append(rs, r)
	}
	var buf bytes.Buffer
	WriteSeqSpeedTable(&buf, rs)
	if !strings.Contains(buf.String(), "| seq tiny | fp32 | 128 |") {
		t.Errorf("table:\n%s", buf.String())
	}
	if !kernel.HasBF16Path() {
		return
	}
	r, err := Speed(context.Background(), SpeedCase{"tiny", 2, 8, train.MethodTB}, SpeedOptions{Iterations: 5, LateStep: 10, Precision: nn.BF16})
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	WriteSpeedTable(&buf, []SpeedResult{r})
	if !strings.Contains(buf.String(), "| tiny, bf16 |") {
		t.Errorf("table:\n%s", buf.String())
	}
}

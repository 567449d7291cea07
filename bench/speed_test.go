package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/gfngo/gfn/train"
)

func TestSpeedSmall(t *testing.T) {
	r, err := Speed(context.Background(), SpeedCase{"tiny", 2, 8, train.MethodTeacher}, SpeedOptions{Iterations: 5, LateStep: 20})
	if err != nil {
		t.Fatal(err)
	}
	if !(r.EarlyMs > 0 && r.LateMs > 0 && r.EarlyLen >= 1 && r.LateStep == 20) {
		t.Errorf("%+v", r)
	}
	var buf bytes.Buffer
	WriteSpeedTable(&buf, []SpeedResult{r})
	if !strings.Contains(buf.String(), "| tiny |") {
		t.Errorf("table:\n%s", buf.String())
	}
	if m := Machine(); !strings.Contains(m, "kernels") {
		t.Errorf("Machine() = %q", m)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Speed(ctx, SpeedCase{"tiny", 2, 8, train.MethodTB}, SpeedOptions{Iterations: 5}); err == nil {
		t.Error("cancelled context did not stop Speed")
	}
}

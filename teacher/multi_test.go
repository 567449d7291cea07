package teacher_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gfngo/gfn/teacher"
)

// TestSplitShare checks the shares against direct probabilities: R_T^k =
// R_T·P_k/Σ_j P_j, so the Teachers' rewards sum to the single Teacher's.
func TestSplitShare(t *testing.T) {
	logRT := []float64{-1, 0.5, 2, 3}
	p := [][]float64{ // P_k(x) for 3 Teachers
		{0.2, 1e-300, 0.5, 0},
		{0.3, 1e-300, 0.25, 0},
		{0.5, 2e-300, 0.25, 0},
	}
	logP := make([][]float64, len(p))
	out := make([][]float64, len(p))
	for k := range p {
		logP[k] = make([]float64, len(logRT))
		out[k] = make([]float64, len(logRT))
		for b, v := range p[k] {
			logP[k][b] = math.Log(v)
		}
	}
	teacher.Share.Targets(logRT, logP, out)
	for b := range logRT {
		var sum float64
		for k := range p {
			sum += math.Exp(out[k][b])
		}
		if math.Abs(sum-math.Exp(logRT[b])) > 1e-12*math.Exp(logRT[b]) {
			t.Errorf("x%d: Σ_k R_T^k = %v, want R_T = %v", b, sum, math.Exp(logRT[b]))
		}
		for k := range p {
			var want float64
			switch b {
			case 3: // no Teacher reaches x: equal shares
				want = logRT[b] - math.Log(3)
			case 1: // 1e-300 scale: the shares must not underflow
				want = logRT[b] + math.Log([]float64{0.25, 0.25, 0.5}[k])
			default:
				want = logRT[b] + math.Log(p[k][b]/(p[0][b]+p[1][b]+p[2][b]))
			}
			if math.Abs(out[k][b]-want) > 1e-12 {
				t.Errorf("Teacher %d, x%d: log R_T^k = %v, want %v", k, b, out[k][b], want)
			}
		}
	}
	// One Teacher: the single Teacher's reward, bit for bit.
	one := [][]float64{make([]float64, 4)}
	teacher.Share.Targets(logRT, logP[:1], one)
	for b := range logRT {
		if one[0][b] != logRT[b] {
			t.Errorf("K = 1, x%d: %v, want %v", b, one[0][b], logRT[b])
		}
	}
	// None: every Teacher gets the whole reward.
	teacher.None.Targets(logRT, nil, out)
	for k := range out {
		for b := range logRT {
			if out[k][b] != logRT[b] {
				t.Errorf("none: Teacher %d x%d = %v, want %v", k, b, out[k][b], logRT[b])
			}
		}
	}
}

func TestSplitValidate(t *testing.T) {
	for _, s := range teacher.Splits {
		if err := s.Validate(); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	err := teacher.Split("greedy").Validate()
	if err == nil || !strings.Contains(err.Error(), `"greedy"`) || !strings.Contains(err.Error(), "share") {
		t.Errorf("unknown split: %v", err)
	}
}

// TestTeacherIndex checks the rotation against counting the T slots one by
// one.
func TestTeacherIndex(t *testing.T) {
	for _, s := range []teacher.Schedule{"SSTT", "SBTB", "STSBSB", "T", "SST"} {
		for _, K := range []int{1, 2, 3} {
			seen := 0
			counts := make([]int, K)
			for i := range 60 {
				if s.Role(i) != teacher.Teacher {
					continue
				}
				if got := s.TeacherIndex(i, K); got != seen%K {
					t.Fatalf("%s, K=%d: iteration %d is Teacher %d, want %d", s, K, i, got, seen%K)
				}
				counts[seen%K]++
				seen++
			}
			for k := range K {
				if d := counts[k] - seen/K; d < 0 || d > 1 {
					t.Errorf("%s, K=%d: Teacher %d took %d of %d T slots", s, K, k, counts[k], seen)
				}
			}
		}
	}
}

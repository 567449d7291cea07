// Command measure runs the SMC sampler of package smc on the paper's two
// diffusion targets, 25GMM and Manywell, over a few seeds and prints a
// Markdown table: log Ẑ against the true log Z, W2 of the N equally
// weighted particles against as many exact samples (package ot), wall
// time and target evaluations. It is a one-off measurement tool, not part
// of the command-line interface:
//
//	go run ./smc/internal/measure [-seeds 5] [-tasks 25gmm,manywell]
package main

import (
	"flag"
	"fmt"
	"github.com/gfngo/gfn/target"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/gfngo/gfn/energy"
	"github.com/gfngo/gfn/ot"
	"github.com/gfngo/gfn/smc"
)

type config struct {
	name string
	opt  smc.Options
}

func main() {
	seeds := flag.Int("seeds", 5, "seeds per configuration")
	tasks := flag.String("tasks", "25gmm,manywell", "tasks")
	flag.Parse()
	configs := map[string][]config{
		"25gmm": {
			{"default (σ²=1, MALA×10)", smc.Options{}},
			{"σ²=5 (the diffusion σ²)", smc.Options{PriorVar: 5}},
			{"σ²=10", smc.Options{PriorVar: 10}},
			{"σ²=20", smc.Options{PriorVar: 20}},
			{"σ²=40", smc.Options{PriorVar: 40}},
			{"σ²=100", smc.Options{PriorVar: 100}},
			{"σ²=100, K=32", smc.Options{PriorVar: 100, Temperatures: 32}},
			{"σ²=100, HMC 1×10", smc.Options{PriorVar: 100, Kernel: smc.HMC}},
		},
		"manywell": {
			{"default (σ²=1, MALA×10)", smc.Options{}},
			{"HMC 1×10, adapted", smc.Options{Kernel: smc.HMC}},
			{"Beyond-ELBOs-like: HMC 1×10, ε=0.1 fixed, ESS 0.3", smc.Options{Kernel: smc.HMC, StepSize: 0.1, NoAdapt: true, ESSThreshold: 0.3}},
			{"K=32, MALA×10", smc.Options{Temperatures: 32}},
		},
	}
	fmt.Println("| task | configuration | log Ẑ − log Z (mean ± std) | W2 vs stratified | W2 vs i.i.d. | modes hit | resamplings | accept (last T) | wall s | LogReward rows | GradLogReward rows |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, task := range strings.Split(*tasks, ",") {
		e, err := energy.Named(task)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		logZ := e.(target.LogZer).LogZ()
		for _, c := range configs[task] {
			var dz, w2s, w2i, wall, modes, resamp, acc []float64
			var ev, gev int
			for seed := range *seeds {
				rng := rand.New(rand.NewPCG(uint64(seed), 77))
				t0 := time.Now()
				r, err := smc.Run(e, c.opt, rng)
				if err != nil {
					fmt.Fprintln(os.Stderr, task, c.name, err)
					os.Exit(1)
				}
				wall = append(wall, time.Since(t0).Seconds())
				dz = append(dz, r.LogZ-logZ)
				n, d := r.Options.Particles, r.Dim
				exact := make([]float32, n*d)
				erng := rand.New(rand.NewPCG(uint64(seed), 99))
				switch g := e.(type) {
				case energy.GMM25:
					g.Sample(exact, erng)
					w, err := ot.W2(r.Samples, exact, d)
					check(err)
					w2s = append(w2s, w)
					energy.GMM25{IID: true}.Sample(exact, erng)
					w, err = ot.W2(r.Samples, exact, d)
					check(err)
					w2i = append(w2i, w)
					modes = append(modes, float64(modesHit(r.Samples)))
				case energy.Sampler:
					g.Sample(exact, erng)
					w, err := ot.W2(r.Samples, exact, d)
					check(err)
					w2i = append(w2i, w)
				}
				resamp = append(resamp, float64(r.Resamplings()))
				acc = append(acc, r.Accept[len(r.Accept)-1])
				ev, gev = r.EnergyEvals, r.GradEvals
			}
			fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %d |\n", task, c.name, ms(dz, 3), ms(w2s, 2), ms(w2i, 2), ms(modes, 1), ms(resamp, 0), ms(acc, 2), ms(wall, 2), ev, gev)
		}
	}
}

// modesHit counts the 25GMM modes nearest to at least one sample.
func modesHit(x []float32) int {
	var hit [25]bool
	for i := 0; i < len(x); i += 2 {
		a := min(4, max(0, int(math.Round((float64(x[i])+10)/5))))
		b := min(4, max(0, int(math.Round((float64(x[i+1])+10)/5))))
		hit[5*a+b] = true
	}
	c := 0
	for _, h := range hit {
		if h {
			c++
		}
	}
	return c
}

func ms(v []float64, prec int) string {
	if len(v) == 0 {
		return "–"
	}
	var m, s float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	s = math.Sqrt(s / float64(len(v)))
	return fmt.Sprintf("%.*f ± %.*f", prec, m, prec, s)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

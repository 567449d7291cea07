// Command measure runs gradient-guided nested sampling (package ggns) on
// the paper's two diffusion targets, 25GMM and Manywell, over a few seeds
// and prints a Markdown table: log Ẑ against the true log Z with the
// run's own error estimate, W2 of 2,000 equally weighted posterior
// samples against as many exact samples (package ot), modes hit, wall
// time and target evaluations, the mode balance of the samples (25GMM: the
// total-variation distance of the 25 mode fractions from uniform;
// Manywell: the fraction of double-well coordinates in the heavier well,
// exactly 0.844) and the clusters found. It is a one-off measurement tool,
// not part of the command-line interface:
//
//	go run ./ggns/internal/measure [-seeds 5] [-tasks 25gmm,manywell] [-clustering on|off|both]
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
	"github.com/gfngo/gfn/ggns"
	"github.com/gfngo/gfn/ot"
)

type config struct {
	name string
	opt  ggns.Options
}

func main() {
	seeds := flag.Int("seeds", 5, "seeds per configuration")
	tasks := flag.String("tasks", "25gmm,manywell", "tasks")
	extra := flag.Bool("extra", false, "also run the variations of the presets")
	clustering := flag.String("clustering", "on", "on, off or both: the presets with clustering, without (NoClustering), or both")
	flag.Parse()
	configs := map[string][]config{}
	for _, task := range []string{"25gmm", "manywell"} {
		p, err := ggns.Preset(task)
		check(err)
		q := p
		q.NoClustering = true
		switch *clustering {
		case "on":
			configs[task] = []config{{"preset", p}}
		case "off":
			configs[task] = []config{{"preset, no clustering", q}}
		case "both":
			configs[task] = []config{{"preset", p}, {"preset, no clustering", q}}
		default:
			check(fmt.Errorf("-clustering %q: want on, off or both", *clustering))
		}
	}
	if *extra {
		p, _ := ggns.Preset("25gmm")
		q := p
		q.Lower, q.Upper = -15, 15
		configs["25gmm"] = append(configs["25gmm"], config{"box ±15", q})
		q = p
		q.Live = 1000
		configs["25gmm"] = append(configs["25gmm"], config{"1000 live", q})
		p, _ = ggns.Preset("manywell")
		q = p
		q.Live = 500
		configs["manywell"] = append(configs["manywell"], config{"500 live", q})
		q = p
		q.Lower, q.Upper = -5, 5
		configs["manywell"] = append(configs["manywell"], config{"box ±5", q})
	}
	fmt.Println("| task | configuration | log Ẑ − log Z (mean ± std) | NS error estimate | W2 vs stratified | W2 vs i.i.d. | modes hit | mode balance | clusters | dead points | dynamic steps | final dt | wall s | LogReward rows | GradLogReward rows |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, task := range strings.Split(*tasks, ",") {
		e, err := energy.Named(task)
		check(err)
		logZ := e.(target.LogZer).LogZ()
		for _, c := range configs[task] {
			var dz, zerr, w2s, w2i, wall, modes, bal, clus, dead, steps, dt, ev, gev []float64
			for seed := range *seeds {
				rng := rand.New(rand.NewPCG(uint64(seed), 77))
				t0 := time.Now()
				r, err := ggns.Run(e, c.opt, rng)
				check(err)
				wall = append(wall, time.Since(t0).Seconds())
				dz = append(dz, r.LogZ-logZ)
				zerr = append(zerr, r.LogZErr)
				d := r.Dim
				n := len(r.Samples) / d
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
					bal = append(bal, modeTV(r.Samples))
				case energy.Sampler:
					g.Sample(exact, erng)
					w, err := ot.W2(r.Samples, exact, d)
					check(err)
					w2i = append(w2i, w)
					bal = append(bal, heavyWell(r.Samples, d))
				}
				clus = append(clus, float64(len(r.ClusterLogZ)))
				dead = append(dead, float64(len(r.DeadLogR)))
				steps = append(steps, float64(r.Steps))
				dt = append(dt, r.StepSize)
				ev = append(ev, float64(r.EnergyEvals))
				gev = append(gev, float64(r.GradEvals))
				fmt.Fprintf(os.Stderr, "%s %s seed %d: log Ẑ − log Z = %+.3f ± %.3f, W2 %v, mode balance %.3f, %d clusters, %.1f s\n", task, c.name, seed, r.LogZ-logZ, r.LogZErr, w2i[len(w2i)-1], bal[len(bal)-1], len(r.ClusterLogZ), wall[len(wall)-1])
			}
			fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", task, c.name, ms(dz, 3), ms(zerr, 3), ms(w2s, 2), ms(w2i, 2), ms(modes, 1), ms(bal, 3), ms(clus, 1), ms(dead, 0), ms(steps, 0), ms(dt, 3), ms(wall, 2), ms(ev, 0), ms(gev, 0))
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

// modeTV is the total-variation distance between the fractions of the
// samples nearest to each 25GMM mode and the uniform 1/25.
func modeTV(x []float32) float64 {
	var c [25]float64
	n := len(x) / 2
	for i := 0; i < len(x); i += 2 {
		a := min(4, max(0, int(math.Round((float64(x[i])+10)/5))))
		b := min(4, max(0, int(math.Round((float64(x[i+1])+10)/5))))
		c[5*a+b]++
	}
	var tv float64
	for _, v := range c {
		tv += math.Abs(v/float64(n) - 1.0/25)
	}
	return tv / 2
}

// heavyWell is the fraction of Manywell double-well coordinates (the even
// ones) that are positive, in the heavier well: exactly 0.844.
func heavyWell(x []float32, d int) float64 {
	var pos, all float64
	for i := 0; i < len(x); i += d {
		for k := 0; k < d; k += 2 {
			all++
			if x[i+k] > 0 {
				pos++
			}
		}
	}
	return pos / all
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

package energy

import (
	"fmt"

	"strings"
)

// Names lists the built-in energies, the ones the trainers have presets
// for (package diffusion) and the command line offers: the paper's two
// (25gmm, manywell), then SuiteNames.
var Names = []string{"25gmm", "manywell", "funnel", "gmm40", "gmm40-50d", "mos", "lgcp"}

// SuiteNames lists the benchmark energies of the diffusion-sampler suite
// (Sendera et al. 2024 and Blessing et al. 2024), the part of Names beyond
// the paper's two.
var SuiteNames = []string{"funnel", "gmm40", "gmm40-50d", "mos", "lgcp"}

// Named returns a built-in energy by its task name: "25gmm" (GMM25),
// "manywell" (Manywell, d = 32), "funnel" (Funnel, d = 10, σ = 3), "gmm40"
// (GMM40, d = 2), "gmm40-50d" (GMM40, d = 50), "mos" (StudentTMixture,
// d = 50) or "lgcp" (LGCP, 40×40 grid, d = 1,600; the first call factors its
// covariance, about a second).
func Named(name string) (Energy, error) {
	switch name {
	case "25gmm":
		return GMM25{}, nil
	case "manywell":
		return Manywell{}, nil
	case "funnel":
		return Funnel{}, nil
	case "gmm40":
		return GMM40{}, nil
	case "gmm40-50d":
		return NewGMM40(50)
	case "mos":
		return StudentTMixture{}, nil
	case "lgcp":
		return NewLGCP(LGCPGrid)
	}
	return nil, fmt.Errorf("energy: task %q is unknown (allowed: %s)", name, strings.Join(Names, ", "))
}

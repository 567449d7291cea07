package energy

import (
	"fmt"

	"strings"
)

// Names lists the built-in energies Named knows.
var Names = []string{"25gmm", "manywell"}

// Named returns a built-in energy by its task name: "25gmm" (GMM25) or
// "manywell" (Manywell, d = 32).
func Named(name string) (Energy, error) {
	switch name {
	case "25gmm":
		return GMM25{}, nil
	case "manywell":
		return Manywell{}, nil
	}
	return nil, fmt.Errorf("energy: task %q is unknown (allowed: %s)", name, strings.Join(Names, ", "))
}

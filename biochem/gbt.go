package biochem

import (
	"encoding/json"
	"fmt"
)

// forest is the sEH proxy: an sklearn HistGradientBoostingRegressor
// (squared error, 100 trees of 31 leaves) fitted on the one-hot encoding of
// the 6-block strings, whose feature f is 1 when the string has block f%18
// at position f/18. sklearn predicts baseline + Σ_t leaf_t(x), adding the
// trees in order in float64; at an internal node it goes left when
// x[f] <= threshold, and NaN inputs follow missing_left. One-hot inputs are
// never NaN and every threshold lies in [0, 1), so the node sends the
// string right exactly when it has that block at that position, which is
// how the compiled nodes test it.
type forest struct {
	baseline float64
	roots    []int32
	nodes    []gbtNode
}

// gbtNode is one compiled tree node; left < 0 marks a leaf.
type gbtNode struct {
	value       float64
	left, right int32
	pos, block  int32
}

// gbtJSON is the layout of sehstr_gbtr_trees.json: per tree, parallel
// arrays indexed by node, node 0 the root.
type gbtJSON struct {
	Baseline  float64 `json:"baseline"`
	NFeatures int     `json:"n_features"`
	Trees     []struct {
		Value       []float64 `json:"value"`
		Feature     []int     `json:"feature"`
		Threshold   []float64 `json:"threshold"`
		MissingLeft []int     `json:"missing_left"`
		Left        []int     `json:"left"`
		Right       []int     `json:"right"`
		IsLeaf      []int     `json:"is_leaf"`
	} `json:"trees"`
}

// parseForest compiles the JSON trees for strings of n tokens over a
// symbols. It checks the structure the compiled test relies on.
func parseForest(b []byte, n, a int) (*forest, error) {
	var g gbtJSON
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("biochem: sEH proxy: %v", err)
	}
	if g.NFeatures != n*a {
		return nil, fmt.Errorf("biochem: sEH proxy has %d features, want %d·%d", g.NFeatures, n, a)
	}
	f := &forest{baseline: g.Baseline}
	for ti, tr := range g.Trees {
		m := len(tr.Value)
		if m == 0 || len(tr.Feature) != m || len(tr.Threshold) != m || len(tr.Left) != m || len(tr.Right) != m || len(tr.IsLeaf) != m {
			return nil, fmt.Errorf("biochem: sEH proxy tree %d: arrays of unequal or zero length", ti)
		}
		base := int32(len(f.nodes))
		f.roots = append(f.roots, base)
		for i := range m {
			nd := gbtNode{value: tr.Value[i], left: -1, right: -1}
			if tr.IsLeaf[i] == 0 {
				// Children after their parent make every walk end.
				if tr.Left[i] <= i || tr.Left[i] >= m || tr.Right[i] <= i || tr.Right[i] >= m {
					return nil, fmt.Errorf("biochem: sEH proxy tree %d node %d: children %d, %d", ti, i, tr.Left[i], tr.Right[i])
				}
				if ft := tr.Feature[i]; ft < 0 || ft >= n*a {
					return nil, fmt.Errorf("biochem: sEH proxy tree %d node %d: feature %d", ti, i, ft)
				}
				if th := tr.Threshold[i]; !(th >= 0 && th < 1) {
					return nil, fmt.Errorf("biochem: sEH proxy tree %d node %d: threshold %v is not in [0, 1)", ti, i, th)
				}
				nd.left, nd.right = base+int32(tr.Left[i]), base+int32(tr.Right[i])
				nd.pos, nd.block = int32(tr.Feature[i]/a), int32(tr.Feature[i]%a)
			}
			f.nodes = append(f.nodes, nd)
		}
	}
	return f, nil
}

// predict is the proxy's prediction for one valid row.
func (f *forest) predict(x []int32) float64 {
	p := f.baseline
	for _, r := range f.roots {
		nd := &f.nodes[r]
		for nd.left >= 0 {
			if x[nd.pos] == nd.block {
				nd = &f.nodes[nd.right]
			} else {
				nd = &f.nodes[nd.left]
			}
		}
		p += nd.value
	}
	return p
}

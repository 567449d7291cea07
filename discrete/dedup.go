package discrete

// Groups assigns equal states the same id, in order of first occurrence,
// with an open-addressing hash table reused between calls.
type Groups struct {
	table []int32 // id+1 of the group in each slot, 0 if empty
	rep   []int32 // the first row of each group
}

// Assign gives each of the n states (rows of w words) a group id in ids
// and returns the representative row of each group.
func (g *Groups) Assign(states []int32, n, w int, ids []int32) []int32 {
	size := 1
	for size < 2*n {
		size <<= 1
	}
	if cap(g.table) < size {
		g.table = make([]int32, size)
	}
	g.table = g.table[:size]
	clear(g.table)
	g.rep = g.rep[:0]
	mask := uint64(size - 1)
	for i := range n {
		s := states[i*w : (i+1)*w]
		h := uint64(14695981039346656037)
		for _, v := range s {
			h ^= uint64(uint32(v))
			h *= 1099511628211
		}
		h ^= h >> 29
		for j := h & mask; ; j = (j + 1) & mask {
			e := g.table[j]
			if e == 0 {
				g.table[j] = int32(len(g.rep)) + 1
				ids[i] = int32(len(g.rep))
				g.rep = append(g.rep, int32(i))
				break
			}
			r := int(g.rep[e-1])
			if equal(states[r*w:(r+1)*w], s) {
				ids[i] = e - 1
				break
			}
		}
	}
	return g.rep
}

func equal(a, b []int32) bool {
	for i, v := range a {
		if b[i] != v {
			return false
		}
	}
	return true
}

package teacher

// Budget counts reward calls against a limit. Replays cost none; the
// family charges each fresh batch (and each local-search round) it scores.
// The zero value has no limit.
type Budget struct {
	Limit int // 0: unlimited
	Used  int
}

// Allows reports whether n more calls fit in the budget.
func (b Budget) Allows(n int) bool { return b.Limit == 0 || b.Used+n <= b.Limit }

// Spend records n calls.
func (b *Budget) Spend(n int) { b.Used += n }

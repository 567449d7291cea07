package seqtrain

import "github.com/gfngo/gfn/biochem"

// ForTask is DefaultConfig with a biochemical task's row of the reference
// settings: its rounds, ε and SSR width (H = E = 128 for TFbind8 and
// L14-RNA1, 1,024 for QM9str and sEHstr). Its evaluation period and size
// are t.Settings().EvalEvery and EvalSamples (RunOptions).
func ForTask(t *biochem.Task) Config {
	c := DefaultConfig()
	s := t.Settings()
	c.Rounds, c.Epsilon = s.Rounds, s.Epsilon
	c.Policy.Hidden, c.Policy.Embed = s.Width, s.Width
	return c
}

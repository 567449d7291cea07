package seqtrain

import "testing"

// policyWeights counts the values of the parameters New builds for each
// policy kind and MDP (log Z apart).
func TestPolicyWeights(t *testing.T) {
	task := toyTask{A: 3, L: 4}
	for _, p := range []struct {
		mdp    string
		policy Policy
	}{
		{"pa", Policy{Kind: "ssr", Hidden: 5, Embed: 3}},
		{"append", Policy{Kind: "ssr", Hidden: 2, Embed: 7}},
		{"pa", Policy{Kind: "mlp", Hidden: 6}},
		{"append", Policy{Kind: "mlp", Hidden: 4, Layers: 3}},
		{"pa", Policy{Kind: "mlp", Hidden: 3, Layers: 1}},
	} {
		cfg := toyConfig(TB)
		cfg.MDP, cfg.Policy = p.mdp, p.policy
		tr, err := New(task, cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, q := range tr.Student.Model.Params() {
			want += len(q.Value)
		}
		if got := policyWeights(cfg, task.L, task.A); got != float64(want) {
			t.Errorf("%s %+v: %v weights, want %d", p.mdp, p.policy, got, want)
		}
	}
}

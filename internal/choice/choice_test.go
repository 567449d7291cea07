package choice

import "testing"

type method string

func TestList(t *testing.T) {
	for _, c := range []struct {
		in   []method
		want string
	}{
		{nil, ""},
		{[]method{"tb"}, "tb"},
		{[]method{"tb", "eps", "teacher-per"}, "tb, eps, teacher-per"},
	} {
		if got := List(c.in); got != c.want {
			t.Errorf("List(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

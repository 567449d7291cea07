package choice

import "strings"

// List joins the values with ", ": List([]Method{"tb", "eps"}) is "tb, eps".
func List[T ~string](values []T) string {
	var b strings.Builder
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(v))
	}
	return b.String()
}

package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	out, err := run(40)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "log Z 2.70: ELBO") {
		t.Errorf("output %q", out)
	}
}

package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	out, err := run(20)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "sequences seen; ELBO") {
		t.Errorf("output %q", out)
	}
}

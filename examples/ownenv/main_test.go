package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	out, err := run(6, 16*600)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "modes found 2 of 2") {
		t.Errorf("output %q", out)
	}
}

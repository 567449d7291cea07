package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// undefinedFlag matches the flag package's error for a flag no flag set
// defines.
var undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+([^ =]+)$`)

// flagFamilyHint answers a gfn train flag that the task's family does not
// take but another does ("--rounds is a flag of the sequence tasks
// (tfbind8, qm9str, sehstr, rna); task hypergrid does not take it"), or
// returns "".
func flagFamilyHint(ctx context.Context, err error, args []string) string {
	if err == nil {
		return ""
	}
	m := undefinedFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	name := m[1]
	t := flagValue(args, "task")
	if t == "" {
		t = "hypergrid"
	}
	var takers []string
	for _, f := range families {
		if slices.Contains(f.tasks, t) || !slices.Contains(familyFlags(ctx, f.tasks[0]), name) {
			continue
		}
		takers = append(takers, fmt.Sprintf("%s (%s)", f.name, strings.Join(f.tasks, ", ")))
	}
	if len(takers) == 0 {
		return ""
	}
	return fmt.Sprintf("--%s is a flag of %s; task %s does not take it (gfn train --task %s --help lists its flags)", name, strings.Join(takers, " and "), t, t)
}

// familyFlags lists the flags gfn train takes for task, read from its
// --help.
func familyFlags(ctx context.Context, task string) []string {
	var out bytes.Buffer
	if err := runTrain(ctx, []string{"--task", task, "--help"}, &out, &out); err != nil {
		return nil
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^  -(\S+)`).FindAllStringSubmatch(out.String(), -1) {
		names = append(names, m[1])
	}
	return names
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gfngo/gfn/biochem"
	"github.com/gfngo/gfn/diffusion"
	"github.com/gfngo/gfn/energy"
	gfnrun "github.com/gfngo/gfn/run"
	"github.com/gfngo/gfn/safetensors"
	"github.com/gfngo/gfn/seqtrain"
	"github.com/gfngo/gfn/task"
	"github.com/gfngo/gfn/train"
)

const migrateSynopsis = `Convert the checkpoints of runs written by an earlier gfn (format 1: each family's own layout)
to the checkpoint format of this one (format 2: one layout for every family, with checksums), in
place, so that --resume, sample, eval and extension take them. A directory already in format 2 is
left as it is. The runs of reward programs keep format 1: resume them with the gfn that wrote them.`

// runMigrate converts each directory's checkpoint.
func runMigrate(args []string, stdout io.Writer) error {
	fs := newFlagSet("migrate DIR...", migrateSynopsis)
	var dirs []string
	if err := parseWithArgs(fs, args, stdout, func(a string) { dirs = append(dirs, a) }); err != nil {
		if errors.Is(err, errHelp) {
			return nil
		}
		return err
	}
	if len(dirs) == 0 {
		return usagef("migrate: give the run directories to convert")
	}
	for _, dir := range dirs {
		done, err := migrate(dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "gfn migrate: %s: %s\n", dir, done)
	}
	return nil
}

// migrate converts dir's checkpoint and says what it did.
func migrate(dir string) (string, error) {
	_, err := gfnrun.Open(dir)
	var legacy *gfnrun.LegacyError
	switch {
	case err == nil:
		return "already in format 2", nil
	case !errors.As(err, &legacy):
		return "", err
	}
	f, err := os.Open(filepath.Join(dir, gfnrun.CheckpointFile))
	if err != nil {
		return "", err
	}
	_, meta, err := safetensors.Read(f)
	f.Close()
	if err != nil {
		return "", err
	}
	// The fields of each old layout that name its problem.
	var st struct {
		Env  json.RawMessage `json:"env"`  // the grid's task.Spec
		Task string          `json:"task"` // a diffusion energy's or a sequence task's name
	}
	if err := json.Unmarshal([]byte(meta[legacy.Key]), &st); err != nil {
		return "", fmt.Errorf("migrate: %s: %w", legacy.Path, err)
	}
	switch legacy.Key {
	case "gfn_train_state":
		env, err := task.BuildJSON(st.Env)
		if err != nil {
			return "", fmt.Errorf("migrate: %s: %w", dir, err)
		}
		err = train.Migrate(dir, env)
		return "grid checkpoint converted", err
	case "gfn_state":
		e, err := energy.Named(st.Task)
		if err != nil {
			return "", fmt.Errorf("migrate: %s: %w", dir, err)
		}
		err = diffusion.Migrate(dir, e)
		return "diffusion checkpoint converted", err
	default:
		t, err := biochem.Named(st.Task)
		if err != nil {
			return "", fmt.Errorf("migrate: %s: %w", dir, err)
		}
		err = seqtrain.Migrate(dir, t)
		return "sequence checkpoint converted", err
	}
}

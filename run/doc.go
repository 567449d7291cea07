// Package run holds what the three training families (train, diffusion,
// seqtrain) do alike around their training loops: the files of a run
// directory and the order in which a finished run writes them, the curve
// as CSV and the summary as JSON, the checkpoint's safetensors container,
// the error of a run stopped by a failure together with what became of
// the checkpoint taken after it, the wall-clock time across resumes and
// the per-iteration timing statistics.
//
// Every file is written atomically (package safefile): a crash or a
// failed encoder leaves the previous file whole and no partial one. The
// package prints nothing; its errors are those of safefile and
// encoding/json, unwrapped, so that a family's messages are what they
// were before it used the package.
//
// What stays in each family is what differs: the points of its curve and
// the columns they make, the summary's fields, the tensors and state of
// its checkpoint, when it evaluates and when it checkpoints.
package run

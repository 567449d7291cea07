// Package python holds gfn_load.py, which reads gfn runs (checkpoints,
// metrics.csv, summary.json) into PyTorch modules of the reference
// architectures and pandas DataFrames, and the test that checks it: the
// log-probabilities it computes from a checkpoint equal gfn's to float32
// precision (docs/python.md). There is no Go API here.
package python

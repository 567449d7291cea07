"""The Python side of python_test.go: evaluates the cases in argv[1]
(run directories and inputs) with gfn_load and writes the values to
argv[2] as JSON (null for -inf)."""

import contextlib
import io
import json
import math
import os
import re
import shutil
import struct
import sys
import tempfile

try:
    import numpy as np
    import pandas  # noqa: F401 (gfn_load.metrics needs it)
    import torch
except ImportError as e:
    print("no %s" % e.name)
    sys.exit(77)  # python_test.go's skipStatus

import gfn_load


def values(t):
    """A tensor as nested lists, non-finite values as None."""
    def conv(v):
        return v if math.isfinite(v) else None
    a = t.tolist()
    if isinstance(a, list) and a and isinstance(a[0], list):
        return [[conv(v) for v in row] for row in a]
    return [conv(v) for v in a]


def main(src, dst):
    with open(src) as f:
        cases = json.load(f)
    res = {"grid": [], "diffusion": [], "sequence": [], "metrics": []}
    for c in cases["grid"]:
        p = gfn_load.load(c["dir"], c["agent"])
        cells = torch.tensor(c["cells"])
        r = {"log_pf": values(p.log_pf(cells)), "log_z": p.log_z, "log_flow": None}
        if p.extra:
            r["log_flow"] = values(p.log_flow(cells))
        res["grid"].append(r)
    for c in cases["diffusion"]:
        p = gfn_load.diffusion_policy(c["dir"], c["agent"])
        blocks = []
        for b in c["blocks"]:
            t = p.time(b["step"])
            blk = {"out": values(p.outputs(b["x"], t)), "log_pf": values(p.log_pf(b["x"], b["x_next"], t)), "log_flow": None}
            if p.flow is not None:
                blk["log_flow"] = values(p.log_flow(b["x"], t))
            blocks.append(blk)
        res["diffusion"].append({"blocks": blocks, "log_z": p.log_z})
    for c in cases["sequence"]:
        p = gfn_load.sequence_policy(c["dir"], c["agent"], alphabet=c.get("alphabet"))
        r = {"logits": values(p.logits(c["states"])), "log_pf": values(p.log_pf(c["states"])), "log_z": p.log_z, "log_flow": None}
        if p.heads:
            r["log_flow"] = values(p.log_flow(c["states"]))
        res["sequence"].append(r)
    for d in cases["metrics"]:
        curve, summary = gfn_load.metrics(d)
        ck = gfn_load.Checkpoint(d).curve()
        same = list(ck.columns) == list(curve.columns) and ck.shape == curve.shape and \
            np.allclose(ck.to_numpy(float), curve.to_numpy(float), rtol=1e-6, atol=1e-12, equal_nan=True)
        res["metrics"].append({"rows": len(curve), "columns": list(curve.columns), "summary_steps": int(summary["steps"][0]),
                               "summary_task": str(summary["task"][0]), "curve_matches_checkpoint": bool(same),
                               "checkpoint_rows": len(ck)})
    res["corrupt"] = corrupt(cases["grid"][0]["dir"])
    res["docs"] = docs(cases["docs"]["path"], cases["docs"]["runs"])
    res["sequence_tasks"] = gfn_load.SEQUENCE_TASKS
    # CRC-32C of i*i mod 251 for i < n, sizes on both sides of the
    # chunked path's threshold (the checkpoints' tensors here are small).
    res["crc32c"] = {str(n): gfn_load.crc32c(bytes((i * i) % 251 for i in range(n))) for n in (9, 65535, 300007, 2000003)}
    with open(dst, "w") as f:
        json.dump(res, f)


def docs(path, runs):
    """Runs the ```python blocks of the page at path, each in a fresh
    namespace, its run directories replaced by the test's: their line
    numbers and errors."""
    with open(path) as f:
        lines = f.read().split("\n")
    out, block, start = [], None, 0
    for i, line in enumerate(lines, 1):
        if block is None and line.strip() == "```python":
            block, start = [], i + 1
        elif block is not None and line.strip() == "```":
            code = "\n".join(block)
            for k, v in runs.items():
                code = code.replace('"%s"' % k, repr(v))
            err = ""
            if re.search(r'"runs/', code):
                err = "a run directory the test does not map: %s" % re.search(r'"runs/[^"]*"', code).group(0)
            else:
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        exec(compile(code, "%s:%d" % (path, start), "exec"), {"__name__": "__doc__"})
                except Exception as e:  # noqa: BLE001 (reported to the test)
                    err = "%s: %s" % (type(e).__name__, e)
            out.append({"line": start, "error": err})
            block = None
        elif block is not None:
            block.append(line)
    return out


def corrupt(run_dir):
    """Loads a copy of the run with one weight's byte flipped: the error."""
    tmp = tempfile.mkdtemp()
    try:
        path = os.path.join(tmp, gfn_load.CHECKPOINT)
        shutil.copy(os.path.join(run_dir, gfn_load.CHECKPOINT), path)
        with open(path, "r+b") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            lo = json.loads(f.read(n))["student.model.0.weight"]["data_offsets"][0]
            f.seek(8 + n + lo + 5)
            b = f.read(1)
            f.seek(8 + n + lo + 5)
            f.write(bytes([b[0] ^ 0x10]))
        gfn_load.grid_policy(tmp)
    except ValueError as e:
        return str(e)
    finally:
        shutil.rmtree(tmp)
    return ""


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

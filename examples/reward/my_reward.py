#!/usr/bin/env python3
"""A reward program for gfn train --reward-cmd (protocol gfn-reward, version 1).

    gfn train --reward-cmd "python3 examples/reward/my_reward.py" --task seq --alphabet ACGT --length 8
    gfn train --reward-cmd "python3 examples/reward/my_reward.py" --task points --dim 2
    gfn train --reward-cmd "python3 examples/reward/my_reward.py" --task hypergrid --dim 2 --side 16

gfn writes one JSON line per message to this program's standard input and
reads one JSON line per answer from its standard output:

    > {"protocol":"gfn-reward","version":1,"kind":"sequence","length":8,"alphabet":["A","C","G","T"]}
    < {"ok":true}
    > {"batch":1,"n":2,"x":["ACGTACGT","GGGGCCCC"]}
    < {"batch":1,"log_reward":[-3.0,-6.0]}

Standard output belongs to the protocol: print anything else to standard
error. Log-rewards must be finite numbers. Replace the three log_reward_*
functions with your own; only the standard library is used.
"""

import json
import math
import sys


def log_reward_sequence(s, shape):
    """Sequences (strings over the alphabet): minus the number of places
    where s differs from the best string, the alphabet repeated
    (ACGTACGT for ACGT and length 8); the best string has log R = 0."""
    alphabet = shape["alphabet"]
    best = [alphabet[i % len(alphabet)] for i in range(len(s))]
    return -float(sum(a != b for a, b in zip(s, best)))


def log_reward_points(x, shape):
    """Points in R^d: a mixture of four Gaussians (standard deviation 0.5)
    at (+-2, +-2) in the first two coordinates, standard normal in the
    others (one Gaussian at +-2 for d = 1)."""
    sigma2 = 0.25
    head = min(len(x), 2)
    terms = []
    for corner in range(2 ** head):
        sq = 0.0
        for i in range(head):
            centre = 2.0 if (corner >> i) & 1 else -2.0
            sq += (x[i] - centre) ** 2
        terms.append(-sq / (2 * sigma2))
    m = max(terms)
    log_mix = m + math.log(sum(math.exp(t - m) for t in terms) / len(terms))
    rest = sum(v * v for v in x[head:]) / 2
    return log_mix - rest


def log_reward_grid(x, shape):
    """Cells of {0..H-1}^d: the original hypergrid reward (Bengio et al.
    2021), R = 0.1 + 0.5 [all |x_i/(H-1) - 0.5| > 0.25] + 2 [all in (0.3, 0.4)]."""
    h = shape["side"]
    a = [abs(v / (h - 1) - 0.5) for v in x]
    r = 0.1
    if all(t > 0.25 for t in a):
        r += 0.5
    if all(0.3 < t < 0.4 for t in a):
        r += 2.0
    return math.log(r)


SCORERS = {
    "sequence": log_reward_sequence,
    "points": log_reward_points,
    "grid": log_reward_grid,
}


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def main():
    shape = json.loads(sys.stdin.readline())
    if shape.get("protocol") != "gfn-reward" or shape.get("version") != 1:
        send({"ok": False, "error": "this program speaks gfn-reward version 1"})
        return
    score = SCORERS.get(shape["kind"])
    if score is None:
        send({"ok": False, "error": "unknown kind " + str(shape["kind"])})
        return
    print("my_reward.py: scoring", shape, file=sys.stderr)
    send({"ok": True})
    for line in sys.stdin:  # one batch per line, until gfn closes the input
        req = json.loads(line)
        try:
            out = [score(x, shape) for x in req["x"]]
        except Exception as e:  # report it: gfn stops the run with this message
            send({"batch": req["batch"], "error": repr(e)})
            continue
        send({"batch": req["batch"], "log_reward": out})


if __name__ == "__main__":
    main()

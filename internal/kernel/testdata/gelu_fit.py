#!/usr/bin/env python3
"""Fits the coefficients of the GELU kernels (gen_gelu.go).

Each fit is a relative (weighted) minimax approximation on a grid, by
iteratively reweighted least squares on the linearised error P - f·Q
(Loeb's iteration for the denominator, Lawson's weights for the maximum),
then rounded to float32 one coefficient at a time, refitting the others
after each rounding. References come from mpmath at 50 digits.

Needs numpy and mpmath (Debian: python3-numpy python3-mpmath). Prints the
float32 coefficients, highest degree first as gen_gelu.go lists them, and
each fit's weighted error: about a minute.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 50
SQ2PI = mp.sqrt(2 * mp.pi)
C = 1 / SQ2PI


def f32(x):
    return mp.mpf(float(np.float32(float(x))))


def mills(a):  # Φ(-a)·exp(a²/2), Mills' ratio over √(2π)
    a = mp.mpf(a)
    return mp.erfc(a / mp.sqrt(2)) / 2 * mp.exp(a * a / 2)


A0 = mp.findroot(lambda a: mills(a) - a * C, 0.75)  # GELU'(-a0) = 0


def samples(f, lo, hi, n=2000):
    t = np.cos(np.pi * (np.arange(n) + 0.5) / n)[::-1]
    a = np.sort(np.concatenate([lo + (hi - lo) * (t + 1) / 2, np.linspace(lo, hi, n)]))
    return a, np.array([float(f(x)) for x in a])


def fitw(a, fv, wt, p, q, fixed, iters=200):
    """min max |P/Q - f|·wt over coefficients [P0..Pp, Q0..Qq] not fixed."""
    n = p + q + 2
    vp = np.vander(a, p + 1, increasing=True)
    vq = np.vander(a, q + 1, increasing=True)
    m = np.hstack([vp, -fv[:, None] * vq])
    free = [i for i in range(n) if i not in fixed]
    cf = np.array([fixed.get(i, 0.0) for i in range(n)])
    w, qk, best = np.ones(len(a)), np.ones(len(a)), None
    for _ in range(iters):
        s = np.sqrt(w) * wt / qk
        af = m[:, free] * s[:, None]
        cn = np.linalg.norm(af, axis=0)
        sol, *_ = np.linalg.lstsq(af / cn, -(m @ cf) * s, rcond=None)
        c = cf.copy()
        c[free] = sol / cn
        pv, qv = vp @ c[: p + 1], vq @ c[p + 1 :]
        err = (pv / qv - fv) * wt
        e = np.max(np.abs(err))
        if best is None or e < best[0]:
            best = (e, c.copy())
        qk = np.abs(qv)
        w = np.maximum(w * np.abs(err) / np.sum(w * np.abs(err)), 1e-200)
        if not np.all(np.isfinite(w)):
            break
    return best


def fit32(name, f, wfun, lo, hi, p, q, fixed):
    a, fv = samples(f, lo, hi)
    wt = np.array([wfun(x, y) for x, y in zip(a, fv)])
    fixed = dict(fixed)
    e, c = fitw(a, fv, wt, p, q, fixed)
    for i in [i for i in range(p + q + 2) if i not in fixed]:
        fixed[i] = float(np.float32(c[i]))
        if len(fixed) < p + q + 2:
            e, c = fitw(a, fv, wt, p, q, fixed)
    c = np.array([fixed[i] for i in range(p + q + 2)], dtype=np.float32).astype(float)
    aa = np.linspace(lo, hi, 20001)[1::2]
    ff = np.array([float(f(x)) for x in aa])
    ww = np.array([wfun(x, y) for x, y in zip(aa, ff)])
    r = np.polyval(c[: p + 1][::-1], aa) / np.polyval(c[p + 1 :][::-1], aa)
    print(f"{name}: weighted error {np.max(np.abs(r - ff) * ww):.3g}")
    print("  P (high first):", [repr(x) for x in c[: p + 1][::-1]])
    if q > 0:
        print("  Q (high first):", [repr(x) for x in c[p + 1 :][::-1]])


K = f32(SQ2PI)  # √(2π) as the kernels hold it

# Forward: a·Φ(-a) = e·x/(K·x + P), x = a·Q, so P/Q = √(2π)/M(a)... written
# as the target √(2π)·(1/M - a) + (√(2π) - K)·a, M = √(2π)·mills; the
# error that matters is relative to K·a + P/Q.
fit32("forward P/Q", lambda a: 1 / mills(a) - K * mp.mpf(a),
      lambda a, f: 1 / (a * float(K) + f), 0, 16, 4, 5, {5: 1.0})

# Gradient: D = e·(a - a0)·(H - c), c = float32(1/√(2π)); H - c relative.
c32 = f32(C)
fit32("gradient H", lambda a: (mills(a) - C * a) / (a - A0) + c32,
      lambda a, f: 1 / abs(f - float(c32)), 0, 16, 4, 4, {5: 1.0})

# Series: (Φ(z) - 1/2)/z = R(z²) for |z| < 1/2, weighted by what an error
# of R costs GELU(-|z|) relatively: |z|/Φ(-|z|).
def series(w):
    w = mp.mpf(w)
    if w == 0:
        return C
    return (mp.ncdf(mp.sqrt(w)) - mp.mpf(1) / 2) / mp.sqrt(w)


fit32("series R", series, lambda w, f: float(mp.sqrt(w) / mp.ncdf(-mp.sqrt(w))),
      1e-12, 0.25, 3, 0, {4: 1.0})

# exp(-u/2) on |u| ≤ ln 2 (a little more for rounding), constant term 1.
fit32("exp(-u/2)", lambda u: mp.exp(-mp.mpf(u) / 2), lambda u, f: 1 / f,
      -0.6935, 0.6935, 6, 0, {0: 1.0, 7: 1.0})

print("a0 =", mp.nstr(A0, 20))

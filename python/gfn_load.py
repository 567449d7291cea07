"""Load gfn runs into PyTorch modules and pandas DataFrames.

A gfn run directory holds checkpoint.safetensors (the networks, in
PyTorch's layout, and a "gfn" JSON header describing the run),
metrics.csv and summary.json. This module reads them with the standard
library, numpy, torch and pandas only (no safetensors package): the
safetensors header is parsed here, the header's and the loaded tensors'
CRC-32C checksums are verified as gfn verifies them. docs/python.md shows
each family's use; python_test.go checks it against gfn.

    import gfn_load
    curve, summary = gfn_load.metrics("runs/hypergrid-d4-H20-teacher-seed0")
    grid = gfn_load.load("runs/hypergrid-d4-H20-teacher-seed0")   # GridPolicy
    grid.model                       # the reference nn.Sequential
    grid.log_pf(torch.tensor([[0, 3, 1, 0]]))   # log P_F(. | s), B x (d+1)

One loader per family, each returning a small wrapper around torch modules
of the reference architectures, loaded with load_state_dict(strict=True):

  grid_policy(run)       GridPolicy: .model is nn.Sequential(Linear,
                         LeakyReLU, ..., Linear) on the one-hot cell (the
                         adaptive-teacher grid code's network).
  diffusion_policy(run)  DiffusionPolicy: .net is FourierMLP (the reference
                         code's default network, t_model / s_model /
                         joint_model) or PISNet (pis_architectures).
  sequence_policy(run)   SequencePolicy: .net is SSR (the state x state ->
                         R edge scorer: enc and scorer nn.Sequential) or
                         the mlp policy's nn.Sequential.

Every wrapper has .log_z (the agent's learned log Z; None if it has none)
and .log_pf(...), the forward policy's log-probabilities, computed as gfn
computes them (float32 networks, float64 where gfn sums in float64).
"""

import json
import math
import os
import re
import struct
from collections import namedtuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

CHECKPOINT = "checkpoint.safetensors"

# The negative slope of gfn's LeakyReLU layers (torch's default).
LEAKY_SLOPE = 0.01
# The clip of SSR's edge scores (the reference's clip_policy_logit_min/max).
SSR_CLIP = 50.0
# The range rho of a learned log-variance: log sigma^2 + rho * tanh(v).
VARIANCE_RANGE = 4.0

# The sequence tasks gfn knows by name: (alphabet size, length).
SEQUENCE_TASKS = {
    "tfbind8": (4, 8),
    "qm9str": (11, 5),
    "sehstr": (18, 6),
    "rna": (4, 14),
    "l14-rna1": (4, 14),
}

_DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4",
    "I8": "i1", "U8": "u1", "BOOL": "?",
}


# --- safetensors and the checkpoint -------------------------------------

def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()
_CRC_TABLE_NP = np.array(_CRC_TABLE, dtype=np.uint32)


def _crc_bytes(crc, data):
    """The CRC-32C register crc advanced through data, byte by byte."""
    t = _CRC_TABLE
    for b in bytes(data):
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def _apply(op, x):
    """A linear map of 32-bit registers (op[k]: the image of bit k) at x."""
    y, k = 0, 0
    while x:
        if x & 1:
            y ^= op[k]
        x >>= 1
        k += 1
    return y


def _zeros_op(n):
    """The map that advances the CRC-32C register through n zero bytes."""
    op = [_crc_bytes(1 << k, b"\0") for k in range(32)]
    result = [1 << k for k in range(32)]
    while n:
        if n & 1:
            result = [_apply(op, r) for r in result]
        op = [_apply(op, r) for r in op]
        n >>= 1
    return result


def crc32c(data):
    """The CRC-32C (Castagnoli) of a bytes-like object. Large inputs are
    cut into K chunks of L bytes whose registers (from 0) numpy advances
    together, then joined: the register is linear, so that of A+B is that
    of A advanced through len(B) zero bytes, xor B's from 0."""
    b = np.frombuffer(data, dtype=np.uint8)
    n = len(b)
    K = max(1024, int(2 * math.sqrt(n)))
    if n < 64 * K:
        return _crc_bytes(0xFFFFFFFF, b) ^ 0xFFFFFFFF
    L = n // K
    cols = np.ascontiguousarray(b[: K * L].reshape(K, L).T)  # L x K: byte j of every chunk
    s = np.zeros(K, dtype=np.uint32)
    t = _CRC_TABLE_NP
    for row in cols:
        s = t[(s ^ row) & 0xFF] ^ (s >> 8)
    shift = _zeros_op(L)
    crc = 0xFFFFFFFF
    for r in s.tolist():
        crc = _apply(shift, crc) ^ r
    return _crc_bytes(crc, b[K * L:]) ^ 0xFFFFFFFF


def read_safetensors(path):
    """Read a safetensors file: (tensors, raw, metadata), where tensors
    maps names to torch tensors, raw names to their data bytes, and
    metadata is the __metadata__ dict (strings)."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError("%s: too short for a safetensors file" % path)
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        raise ValueError("%s: header of %d bytes runs past the end" % (path, n))
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = memoryview(blob)[8 + n:]
    meta = header.pop("__metadata__", None) or {}
    tensors, raw = {}, {}
    for name, e in header.items():
        dtype = _DTYPES.get(e["dtype"])
        if dtype is None:
            raise ValueError("%s: tensor %r has dtype %s, not read here" % (path, name, e["dtype"]))
        lo, hi = e["data_offsets"]
        shape = tuple(e["shape"])
        if hi > len(data) or hi - lo != int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize:
            raise ValueError("%s: tensor %r: offsets %s do not match shape %s" % (path, name, (lo, hi), shape))
        a = np.frombuffer(data[lo:hi], dtype=dtype).reshape(shape)
        tensors[name] = torch.from_numpy(a.astype(a.dtype.newbyteorder("="), copy=True))
        raw[name] = data[lo:hi]
    return tensors, raw, meta


class Checkpoint:
    """A gfn checkpoint (format 2): .header is the "gfn" metadata JSON
    (kind, unit, done, total, columns, config, ...), .config its
    configuration, .tensors every tensor by name."""

    def __init__(self, run, verify=True):
        path = os.path.join(run, CHECKPOINT) if os.path.isdir(run) else run
        self.path, self.verify = path, verify
        self.tensors, self._raw, meta = read_safetensors(path)
        raw = meta.get("gfn")
        if raw is None:
            for k in ("gfn_train_state", "gfn_state", "gfn_seq_state"):
                if k in meta:
                    raise ValueError("%s is a checkpoint of an earlier gfn (format 1): convert it with gfn migrate" % path)
            raise ValueError("%s is not a gfn checkpoint (no \"gfn\" metadata)" % path)
        if verify and meta.get("gfn_crc32c") != "%x" % crc32c(raw.encode("utf-8")):
            raise ValueError("%s: the header's checksum does not match: the file is corrupt" % path)
        self.header = json.loads(raw)
        if self.header.get("format") != 2:
            raise ValueError("%s has format %s; this module reads 2" % (path, self.header.get("format")))
        self.kind = self.header["kind"]
        self.config = self.header.get("config") or {}
        self._checked = set()

    def tensor(self, name):
        """The named tensor, its checksum verified (unless verify=False)."""
        if name not in self.tensors:
            raise KeyError("%s has no tensor %r" % (self.path, name))
        if self.verify and name not in self._checked:
            want = self.header.get("crc32c", {}).get(name)
            got = "%x" % crc32c(self._raw[name])
            if want != got:
                raise ValueError("%s: tensor %r has checksum %s, recorded %s: the file is corrupt" % (self.path, name, got, want))
            self._checked.add(name)
        return self.tensors[name]

    def agents(self):
        """The agents stored: "student", "teacher", ..."""
        return list(self.header.get("agents") or [])

    def state_dict(self, prefix):
        """The tensors named prefix + key (optimiser state excluded), by key."""
        if prefix and not prefix.endswith("."):
            prefix += "."
        sd = {}
        for name in self.tensors:
            if name.startswith(prefix) and ".optim." not in "." + name[len(prefix):]:
                sd[name[len(prefix):]] = self.tensor(name)
        if not sd:
            raise KeyError("%s has no tensors under %r (agents: %s)" % (self.path, prefix, self.agents()))
        return sd

    def log_z(self, agent="student"):
        name = agent + ".logZ"
        return float(self.tensor(name)) if name in self.tensors else None

    def curve(self):
        """The run.curve tensor (every curve point so far, metrics.csv's
        rows) as a DataFrame."""
        import pandas as pd
        c = self.tensor("run.curve").numpy()
        return pd.DataFrame(c.reshape(-1, len(self.header["columns"])), columns=self.header["columns"])


def _checkpoint(run, verify=True):
    return run if isinstance(run, Checkpoint) else Checkpoint(run, verify)


# --- metrics -----------------------------------------------------------

Metrics = namedtuple("Metrics", "curve summary")


def metrics(run_dir):
    """metrics.csv and summary.json as DataFrames: (curve, summary). The
    curve has one row per evaluation point (empty cells are NaN); the
    summary is one row, nested fields flattened ("student_exact.l1").
    summary is None while the run has not finished."""
    import pandas as pd
    curve = pd.read_csv(os.path.join(run_dir, "metrics.csv"))
    path = os.path.join(run_dir, "summary.json")
    summary = None
    if os.path.exists(path):
        with open(path) as f:
            summary = pd.json_normalize(json.load(f))
    return Metrics(curve, summary)


# --- shared pieces -----------------------------------------------------

def _indexed_sequential(sd, act):
    """nn.Sequential(Linear, act, Linear, act, ..., Linear) from a state
    dict with keys "0.weight", "0.bias", "2.weight", ..."""
    idx = sorted({int(k.split(".")[0]) for k in sd})
    if idx != list(range(0, 2 * len(idx), 2)):
        raise ValueError("layers %s are not those of nn.Sequential(Linear, activation, ...)" % idx)
    layers = []
    for j, i in enumerate(idx):
        out, inp = sd["%d.weight" % i].shape
        layers.append(nn.Linear(inp, out))
        if j < len(idx) - 1:
            layers.append(act())
    m = nn.Sequential(*layers)
    m.load_state_dict(sd, strict=True)
    return m.eval()


def _leaky():
    return nn.LeakyReLU(LEAKY_SLOPE)


def _masked_log_softmax(logits, mask):
    """Row-wise log-softmax over the allowed entries (-inf elsewhere),
    summed in float64 as gfn does, returned in float32."""
    x = logits.double().masked_fill(~mask, -math.inf)
    return torch.log_softmax(x, dim=-1).float()


# --- the hypergrid (gfn train) ----------------------------------------

class GridPolicy:
    """A hypergrid agent: .model (nn.Sequential on the d*H one-hot cell,
    outputs d+1 logits then .extra heads: the state flow log F(s) for
    db/subtb and GAFN), .d, .H, .log_z."""

    def __init__(self, model, d, H, extra, log_z):
        self.model, self.d, self.H, self.extra, self.log_z = model, d, H, extra, log_z

    def features(self, cells):
        """The one-hot encoding of cells (B x d integer coordinates):
        index i*H + x_i, as gfn's and the reference code's."""
        cells = torch.as_tensor(cells, dtype=torch.long)
        return F.one_hot(cells, self.H).reshape(cells.shape[0], -1).float()

    def mask(self, cells):
        """The valid forward actions: increment coordinate i < H-1, or
        stop (the last action)."""
        cells = torch.as_tensor(cells, dtype=torch.long)
        stop = torch.ones(cells.shape[0], 1, dtype=torch.bool)
        return torch.cat([cells < self.H - 1, stop], dim=1)

    @torch.no_grad()
    def outputs(self, cells):
        return self.model(self.features(cells))

    def log_pf(self, cells):
        """log P_F(a | s) for the non-terminal cells, B x (d+1), -inf for
        invalid actions."""
        out = self.outputs(cells)[:, : self.d + 1]
        return _masked_log_softmax(out, self.mask(cells))

    def log_flow(self, cells):
        """The state-flow head log F(s) (db, subtb, GAFN), B."""
        if self.extra < 1:
            raise ValueError("this agent has no state-flow head")
        return self.outputs(cells)[:, self.d + 1]


def grid_policy(run, agent="student", verify=True):
    """The hypergrid agent of a gfn train run (GridPolicy)."""
    ck = _checkpoint(run, verify)
    if ck.kind != "grid":
        raise ValueError("%s is a %s checkpoint, not a grid one" % (ck.path, ck.kind))
    sd = ck.state_dict(agent + ".model")
    model = _indexed_sequential(sd, _leaky)
    env = ck.config.get("env") or {}
    if env.get("dim") and env.get("side"):
        d, H = env["dim"], env["side"]
    else:
        m = re.match(r"hypergrid\(d=(\d+), H=(\d+)", ck.config.get("env_name", ""))
        if not m:
            raise ValueError("%s: no hypergrid size in the configuration" % ck.path)
        d, H = int(m.group(1)), int(m.group(2))
    out, inp = model[-1].out_features, model[0].in_features
    if inp != d * H or out - (d + 1) not in (0, 1):
        raise ValueError("%s: a network %d -> %d does not fit hypergrid d=%d, H=%d" % (ck.path, inp, out, d, H))
    return GridPolicy(model, d, H, out - (d + 1), ck.log_z(agent))


# --- diffusion samplers (gfn diffusion) ---------------------------------

class TimeEncoding(nn.Module):
    """The reference t_model: phi(t) = [sin(t w), cos(t w)], w_k = 2 pi k,
    then Linear, GELU, Linear, GELU."""

    def __init__(self, harmonics, hidden, t_emb):
        super().__init__()
        self.register_buffer("pe", torch.arange(1, harmonics + 1).float().unsqueeze(0) * 2 * math.pi)
        self.t_model = nn.Sequential(nn.Linear(2 * harmonics, hidden), nn.GELU(), nn.Linear(hidden, t_emb), nn.GELU())

    def forward(self, t):
        a = t * self.pe
        return self.t_model(torch.cat([a.sin(), a.cos()], dim=-1))


class StateEncoding(nn.Module):
    def __init__(self, dim, hidden, s_emb):
        super().__init__()
        self.x_model = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, s_emb), nn.GELU())

    def forward(self, x):
        return self.x_model(x)


class JointPolicy(nn.Module):
    def __init__(self, s_emb, t_emb, hidden, out, layers):
        super().__init__()
        mods = [nn.Linear(s_emb + t_emb, hidden), nn.GELU()]
        for _ in range(layers - 1):
            mods += [nn.Linear(hidden, hidden), nn.GELU()]
        mods.append(nn.Linear(hidden, out))
        self.model = nn.Sequential(*mods)

    def forward(self, s, t):
        return self.model(torch.cat([s, t.expand(s.shape[0], -1)], dim=-1))


class FourierMLP(nn.Module):
    """The reference code's default network (its GFN module's t_model,
    s_model and joint_model): x (B x d), t -> (drift, raw log-variance),
    B x 2d."""

    def __init__(self, dim, hidden, harmonics, s_emb, t_emb, layers, out=None):
        super().__init__()
        self.t_model = TimeEncoding(harmonics, hidden, t_emb)
        self.s_model = StateEncoding(dim, hidden, s_emb)
        self.joint_model = JointPolicy(s_emb, t_emb, hidden, out or 2 * dim, layers)

    def forward(self, x, t):
        return self.joint_model(self.s_model(x), self.t_model(_times(t, x)))


class TimeEncodingPIS(nn.Module):
    """PIS's t_model: phi(t) = [sin(t w + phase), cos(t w + phase)],
    w = linspace(0.1, 100, H), then Linear, GELU, Linear."""

    def __init__(self, harmonics, hidden):
        super().__init__()
        self.register_buffer("pe", torch.linspace(0.1, 100, harmonics).unsqueeze(0))
        self.timestep_phase = nn.Parameter(torch.zeros(1, harmonics))
        self.t_model = nn.Sequential(nn.Linear(2 * harmonics, hidden), nn.GELU(), nn.Linear(hidden, hidden))

    def forward(self, t):
        a = t * self.pe + self.timestep_phase
        return self.t_model(torch.cat([a.sin(), a.cos()], dim=-1))


class StateEncodingPIS(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.x_model = nn.Linear(dim, hidden)

    def forward(self, x):
        return self.x_model(x)


class JointPolicyPIS(nn.Module):
    def __init__(self, hidden, out, layers):
        super().__init__()
        self.model = nn.Sequential(nn.GELU(), *[nn.Sequential(nn.Linear(hidden, hidden), nn.GELU()) for _ in range(layers)],
                                   nn.Linear(hidden, out))

    def forward(self, s, t):
        return self.model(s + t)


class PISNet(nn.Module):
    """The path-integral-sampler network (pis_architectures)."""

    def __init__(self, dim, hidden, harmonics, layers, out=None):
        super().__init__()
        self.t_model = TimeEncodingPIS(harmonics, hidden)
        self.s_model = StateEncodingPIS(dim, hidden)
        self.joint_model = JointPolicyPIS(hidden, out or 2 * dim, layers)

    def forward(self, x, t):
        return self.joint_model(self.s_model(x), self.t_model(_times(t, x)))


def _times(t, x):
    """t as a column of float32 times: one per row of x, or one shared."""
    t = torch.as_tensor(t, dtype=torch.float32)
    if t.dim() == 0:
        t = t.reshape(1, 1)
    return t.reshape(-1, 1)


class DiffusionPolicy:
    """A diffusion sampler's agent: .net (FourierMLP or PISNet), .dim,
    the process (.steps, .sigma2, .learned_variance, .drift_clip) and
    .log_z; .flow, the flow network of the objectives db, subtb, fl-db
    and fl-subtb (the same architecture with one output), or None. Step i
    of the sampler runs at time t_i = i/steps."""

    def __init__(self, net, dim, steps, sigma2, learned_variance, drift_clip, log_z, flow=None):
        self.net, self.dim, self.steps, self.sigma2 = net, dim, steps, sigma2
        self.learned_variance, self.drift_clip, self.log_z = learned_variance, drift_clip, log_z
        self.flow = flow

    @torch.no_grad()
    def log_flow(self, x, t):
        """The flow network's output F(x, t), B: the learned log-flow of
        db and subtb; fl-db and fl-subtb add (1 - t) log p_ref(x) +
        t log R(x) to it (docs/objectives.md)."""
        if self.flow is None:
            raise ValueError("this agent has no flow network (objectives db, subtb, fl-db, fl-subtb)")
        return self.flow(torch.as_tensor(x, dtype=torch.float32), t)[:, 0]

    def time(self, i):
        """The float32 time of step i, as gfn computes it."""
        return float(np.float32(i * (1.0 / self.steps)))

    @torch.no_grad()
    def outputs(self, x, t):
        """The raw network outputs (drift, log-variance), B x 2d."""
        return self.net(torch.as_tensor(x, dtype=torch.float32), t)

    def drift_logvar(self, x, t):
        """The drift u (clipped to +-drift_clip) and the log-variance
        lambda of each coordinate (float64, B x d each)."""
        out = self.outputs(x, t).double()
        u, v = out[:, : self.dim], out[:, self.dim:]
        if self.drift_clip > 0:
            u = u.clamp(-self.drift_clip, self.drift_clip)
        lam = torch.full_like(v, math.log(self.sigma2))
        if self.learned_variance:
            lam = lam + VARIANCE_RANGE * torch.tanh(v)
        return u, lam

    def log_pf(self, x, x_next, t):
        """log P_F(x_next | x) of one step at time t: the Gaussian
        N(x + dt u, dt e^lambda) per coordinate, summed; float64, B."""
        dt = 1.0 / self.steps
        u, lam = self.drift_logvar(x, t)
        r = torch.as_tensor(x_next, dtype=torch.float32).double() - (torch.as_tensor(x, dtype=torch.float32).double() + dt * u)
        v = dt * torch.exp(lam)
        return -0.5 * (r * r / v + math.log(2 * math.pi) + math.log(dt) + lam).sum(dim=1)


def diffusion_policy(run, agent="student", verify=True):
    """The diffusion sampler agent of a gfn diffusion run (DiffusionPolicy)."""
    ck = _checkpoint(run, verify)
    if ck.kind != "diffusion":
        raise ValueError("%s is a %s checkpoint, not a diffusion one" % (ck.path, ck.kind))
    cfg = ck.config
    sd = ck.state_dict(agent)
    sd.pop("logZ", None)
    flow_sd = {k[len("flow_model."):]: sd.pop(k) for k in list(sd) if k.startswith("flow_model.")}
    dim = cfg["dim"]
    arch = (cfg.get("net") or {}).get("Arch") or "reference"
    net = _diffusion_net(ck, arch, dim, sd)
    flow = _diffusion_net(ck, arch, dim, flow_sd, out=1).eval() if flow_sd else None
    return DiffusionPolicy(net.eval(), dim, cfg["steps"], cfg["sigma2"], bool(cfg.get("learned_variance")),
                           float(cfg.get("drift_clip") or 0), ck.log_z(agent), flow)


def _diffusion_net(ck, arch, dim, sd, out=None):
    """The network of architecture arch whose weights are sd, loaded."""
    if arch == "pis":
        H = sd["t_model.timestep_phase"].shape[1]
        h = sd["s_model.x_model.weight"].shape[0]
        layers = len({k for k in sd if k.startswith("joint_model.model.") and k.endswith(".0.weight")})
        net = PISNet(dim, h, H, layers, out)
    elif arch == "reference":
        H = sd["t_model.t_model.0.weight"].shape[1] // 2
        h = sd["t_model.t_model.0.weight"].shape[0]
        t_emb = sd["t_model.t_model.2.weight"].shape[0]
        s_emb = sd["s_model.x_model.2.weight"].shape[0]
        layers = len([k for k in sd if k.startswith("joint_model.model.") and k.endswith(".weight")]) - 1
        net = FourierMLP(dim, h, H, s_emb, t_emb, layers, out)
    else:
        raise ValueError("%s: network architecture %r is unknown" % (ck.path, arch))
    sd["t_model.pe"] = net.t_model.pe  # a fixed function of H, not stored
    net.load_state_dict(sd, strict=True)
    return net


# --- sequences (gfn seq) -------------------------------------------------

class SequenceEnv:
    """gfn's sequence MDP: prepend-append ("pa": action 0 stops a full
    string, 1+c prepends token c, 1+A+c appends it) or append-only (1+c
    appends). A state is a list of tokens (non-terminal)."""

    def __init__(self, alphabet, length, prepend_append=True):
        self.A, self.n, self.pa = alphabet, length, prepend_append

    @property
    def num_actions(self):
        return 1 + 2 * self.A if self.pa else 1 + self.A

    def mask(self, s):
        """The valid forward actions of the non-terminal state s. Where
        appending equals prepending (the root; a string of one repeated
        token), only the prepend is valid: each child once."""
        m = [False] * self.num_actions
        l = len(s)
        if l == self.n:
            m[0] = True
            return m
        for c in range(self.A):
            m[1 + c] = True
        if self.pa and l > 0:
            for c in range(self.A):
                m[1 + self.A + c] = True
            if all(t == s[0] for t in s):
                m[1 + self.A + s[0]] = False
        return m

    def step(self, s, a):
        """The child of s by action a (for Stop, the leaf: the same tokens)."""
        if a == 0:
            return list(s)
        c = a - 1
        if not self.pa:
            return list(s) + [c]
        return [c] + list(s) if c < self.A else list(s) + [c - self.A]

    def features(self, states):
        """One-hot encodings, B x (n*A): token c at position i sets i*A+c."""
        x = torch.zeros(len(states), self.n * self.A)
        for r, s in enumerate(states):
            for i, c in enumerate(s):
                x[r, i * self.A + c] = 1
        return x


class SSR(nn.Module):
    """The SSR policy: an edge s -> s' scores
    clamp(scorer([enc(s), enc(s')]), -50, 50), with enc = Linear,
    LeakyReLU, Linear and scorer = Linear, LeakyReLU, Linear(., 1); with
    flow=True a state-flow head log F(s) = flow(enc(s)), Linear(embed, 1)
    (objectives db and subtb)."""

    def __init__(self, features, hidden, embed, flow=False):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(features, hidden), _leaky(), nn.Linear(hidden, embed))
        self.scorer = nn.Sequential(nn.Linear(2 * embed, hidden), _leaky(), nn.Linear(hidden, 1))
        self.flow = nn.Linear(embed, 1) if flow else None

    def forward(self, parent, child):
        s = self.scorer(torch.cat([self.enc(parent), self.enc(child)], dim=-1)).squeeze(-1)
        return torch.nan_to_num(s.clamp(-SSR_CLIP, SSR_CLIP), nan=0.0)


class SequencePolicy:
    """A sequence agent: .net (SSR, or the mlp policy's nn.Sequential),
    .kind ("ssr" or "mlp"), .env (SequenceEnv), .heads (1 with a
    state-flow head: SSR's flow layer, the mlp's output after the logits)
    and .log_z."""

    def __init__(self, net, kind, env, heads, log_z):
        self.net, self.kind, self.env, self.heads, self.log_z = net, kind, env, heads, log_z

    @torch.no_grad()
    def logits(self, states):
        """B x num_actions logits of the non-terminal states (lists of
        tokens), -inf for invalid actions: SSR's clipped edge scores, or
        the mlp's outputs."""
        env = self.env
        mask = torch.tensor([env.mask(s) for s in states], dtype=torch.bool)
        if self.kind == "mlp":
            out = self.net(env.features(states))[:, : env.num_actions]
            return out.masked_fill(~mask, -math.inf)
        rows, acts, parents, children = [], [], [], []
        for r, s in enumerate(states):
            for a, ok in enumerate(env.mask(s)):
                if ok:
                    rows.append(r)
                    acts.append(a)
                    parents.append(s)
                    children.append(env.step(s, a))
        out = torch.full((len(states), env.num_actions), -math.inf)
        out[rows, acts] = self.net(env.features(parents), env.features(children))
        return out

    def log_pf(self, states):
        """log P_F(a | s), B x num_actions, -inf for invalid actions."""
        lg = self.logits(states)
        return _masked_log_softmax(lg, torch.isfinite(lg))

    @torch.no_grad()
    def log_flow(self, states):
        """The state-flow head log F(s) (objectives db, subtb), B."""
        if self.heads < 1:
            raise ValueError("this agent has no state-flow head")
        x = self.env.features(states)
        if self.kind == "ssr":
            return self.net.flow(self.net.enc(x))[:, 0]
        return self.net(x)[:, self.env.num_actions]


def sequence_policy(run, agent="student", alphabet=None, verify=True):
    """The agent of a gfn seq run (SequencePolicy). alphabet (its size,
    or its symbols) is needed for the ssr policy of a task gfn does not
    know by name (SEQUENCE_TASKS)."""
    ck = _checkpoint(run, verify)
    if ck.kind != "sequence":
        raise ValueError("%s is a %s checkpoint, not a sequence one" % (ck.path, ck.kind))
    cfg = ck.config.get("config") or {}
    pol = cfg.get("policy") or {}
    kind = pol.get("kind", "ssr")
    pa = cfg.get("mdp", "pa") == "pa"
    sd = ck.state_dict(agent + ".policy")
    if alphabet is not None and not isinstance(alphabet, int):
        alphabet = len(alphabet)
    if kind == "ssr":
        features = sd["enc.0.weight"].shape[1]
        if alphabet is None:
            task = ck.config.get("task", "").lower()
            if task not in SEQUENCE_TASKS:
                raise ValueError("%s: task %r: give its alphabet (size or symbols)" % (ck.path, task))
            alphabet = SEQUENCE_TASKS[task][0]
        heads = 1 if "flow.weight" in sd else 0
        net = SSR(features, sd["enc.0.weight"].shape[0], sd["enc.2.weight"].shape[0], flow=heads > 0)
        net.load_state_dict(sd, strict=True)
    elif kind == "mlp":
        # gfn names the mlp's layers policy..0.weight (prefix "policy." +
        # ".0"): the keys left here start with a dot.
        net = _indexed_sequential({k.lstrip("."): v for k, v in sd.items()}, _leaky)
        features = net[0].in_features
        heads = 1 if cfg.get("objective") in ("db", "subtb") else 0
        actions = net[-1].out_features - heads
        a = (actions - 1) // 2 if pa else actions - 1
        if alphabet is not None and alphabet != a:
            raise ValueError("%s: the network has %d actions, not those of an alphabet of %d" % (ck.path, actions, alphabet))
        alphabet = a
    else:
        raise ValueError("%s: policy %r is unknown" % (ck.path, kind))
    if features % alphabet:
        raise ValueError("%s: %d features do not fit an alphabet of %d" % (ck.path, features, alphabet))
    env = SequenceEnv(alphabet, features // alphabet, pa)
    return SequencePolicy(net.eval(), kind, env, heads, ck.log_z(agent))


# --- any run ------------------------------------------------------------

def load(run, agent="student", **kw):
    """The agent of any gfn run: grid_policy, diffusion_policy or
    sequence_policy by the checkpoint's kind."""
    ck = _checkpoint(run, kw.pop("verify", True))
    loaders = {"grid": grid_policy, "diffusion": diffusion_policy, "sequence": sequence_policy}
    if ck.kind not in loaders:
        raise ValueError("%s: kind %r has no loader here" % (ck.path, ck.kind))
    return loaders[ck.kind](ck, agent, **kw)

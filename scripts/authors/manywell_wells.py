# manywell_wells.py: which of Manywell's 16 left wells a Student (and its Teacher) of the
# authors' diffusion code covers, from a scripts/authors/diffusion_run.py checkpoint. Not part
# of gfn and not run by its tests; scripts/manywell_wells.py reads gfn's own checkpoints (through
# `gfn eval --weights`) and prints the same report.
#
#   cd <checkout>/diffusion/.. && PYTHONPATH=<dir with wandb/einops stubs> OPENBLAS_NUM_THREADS=1 \
#     /usr/bin/python3 manywell_wells.py --code diffusion DIR/checkpoint.pt
#
# Manywell's density is a product of 16 independent pairs (x1, x2), (x3, x4), ...; each odd
# coordinate has a heavy right well and a light left one (x < 0, about 15.6% of the mass). The
# report gives, for --n exact samples, the mean log weight log R + log P_B - log P_F (the EUBO's
# terms) grouped by how many left wells the sample is in, and for --n samples of each agent the
# fraction of samples in each coordinate's left well.
import argparse
import sys

ap = argparse.ArgumentParser(description="left-well coverage of the authors' Manywell Student and Teacher")
ap.add_argument('--code', required=True, help="the authors' diffusion/ directory")
ap.add_argument('--n', type=int, default=10000, help='exact samples and samples of each agent')
ap.add_argument('--seed', type=int, default=1)
ap.add_argument('checkpoint')
opts = ap.parse_args()

import numpy as np
import torch

torch.set_num_threads(1)
ck = torch.load(opts.checkpoint)
sys.path.insert(0, opts.code)
sys.argv = ['train.py'] + ck['train_args']
import train as T  # parses the run's flags

args = T.args
energy = T.get_energy()
if energy.data_ndim != 32 or args.energy != 'many_well':
    sys.exit(f'manywell_wells.py: {opts.checkpoint} is a {args.energy} run, not Manywell')


def make(log_var_range, langevin, state):
    m = T.GFN(energy.data_ndim, args.s_emb_dim, args.hidden_dim, args.harmonics_dim, args.t_emb_dim,
              trajectory_length=args.T, clipping=args.clipping, lgv_clip=args.lgv_clip, gfn_clip=args.gfn_clip,
              langevin=langevin, learned_variance=args.learned_variance,
              partial_energy=args.partial_energy, log_var_range=log_var_range,
              pb_scale_range=args.pb_scale_range, t_scale=args.t_scale,
              langevin_scaling_per_dimension=args.langevin_scaling_per_dimension,
              conditional_flow_model=args.conditional_flow_model, learn_pb=args.learn_pb,
              pis_architectures=args.pis_architectures, lgv_layers=args.lgv_layers,
              joint_layers=args.joint_layers, zero_init=args.zero_init, device=T.device)
    m.load_state_dict(state)
    m.eval()
    return m


def draw(m, n):
    out = []
    with torch.no_grad():
        for c in range(0, n, 1000):
            states, _, _, _ = m.get_trajectory_fwd(torch.zeros(min(1000, n - c), energy.data_ndim), None,
                                                   energy.log_reward)
            out.append(states[:, -1])
    return torch.cat(out)


def coverage(name, x):
    left = x[:, 0::2] < 0
    print(f'{name} left-well fraction per coordinate: ' + ' '.join(f'{v:.3f}' for v in left.float().mean(0).tolist()))
    print(f'{name} samples by left wells: ' + ' '.join(f'{k}:{c}' for k, c in enumerate(np.bincount(left.sum(1).numpy())) if c))


torch.manual_seed(opts.seed)
student = make(args.log_var_range, args.langevin, ck['student'])
exact = energy.sample(opts.n)
with torch.no_grad():
    lw = []
    for c in exact.split(1000):
        _, logpf, logpb, _ = student.get_trajectory_bwd(c, None, energy.log_reward)
        lw.append(energy.log_reward(c) + logpb.sum(-1) - logpf.sum(-1))
    lw = torch.cat(lw)
print(f'checkpoint at iteration {ck["start"]}: EUBO {lw.mean().item():.1f} on {opts.n} exact samples '
      f'(log Z {energy.gt_logz():.3f})')
print('| left wells in the exact sample | samples | mean log w |')
print('|---|---|---|')
k = (exact[:, 0::2] < 0).sum(1)
for j in range(int(k.max()) + 1):
    sel = k == j
    if sel.any():
        print(f'| {j} | {int(sel.sum())} | {lw[sel].mean().item():.1f} |')
coverage('exact', exact)
coverage('Student', draw(student, opts.n))
if args.teacher:
    coverage('Teacher', draw(make(4.0, False, ck['teacher']), opts.n))  # the Teacher as diffusion_run.py builds it
b = ck.get('buffer')
if b is not None:
    coverage('buffer', torch.stack(list(b['samples'])) if not torch.is_tensor(b['samples']) else b['samples'])

# manywell_wells.py: the authors' Manywell Student (and Teacher) from a
# scripts/authors/diffusion_run.py checkpoint, written as the CSV of `gfn eval --weights`
# (agent, set, log_w, x1..x32) so that scripts/manywell_wells.py reports which of Manywell's 16
# left wells they cover, as it does for gfn's checkpoints. Not part of gfn and not run by its tests.
#
#   cd <checkout>/diffusion/.. && PYTHONPATH=<dir with wandb/einops stubs> OPENBLAS_NUM_THREADS=1 \
#     /usr/bin/python3 manywell_wells.py --code diffusion DIR/checkpoint.pt > w.csv &&
#     python3 scripts/manywell_wells.py w.csv
#
# Rows: --n exact samples with the Student's log R + log P_B - log P_F on backward trajectories
# (set exact; their mean is the EUBO), --n samples of each agent with their own log weights (set
# model; the ELBO), and the checkpoint's replay buffer (agent buffer, set stored, no weight).
import argparse
import csv
import sys

ap = argparse.ArgumentParser(description="the authors' Manywell Student and Teacher as gfn eval --weights CSV")
ap.add_argument('--code', required=True, help="the authors' diffusion/ directory")
ap.add_argument('--n', type=int, default=10000, help='exact samples and samples of each agent')
ap.add_argument('--seed', type=int, default=1)
ap.add_argument('checkpoint')
opts = ap.parse_args()

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


def rows(agent, set_, x, lw=None):
    for i in range(x.shape[0]):
        w = '' if lw is None else repr(lw[i].item())
        out.writerow([agent, set_, w] + [repr(v) for v in x[i].tolist()])


def model(m, n):
    with torch.no_grad():
        for c in range(0, n, 1000):
            states, logpf, logpb, _ = m.get_trajectory_fwd(torch.zeros(min(1000, n - c), energy.data_ndim), None,
                                                           energy.log_reward)
            x = states[:, -1]
            yield x, energy.log_reward(x) + logpb.sum(-1) - logpf.sum(-1)


torch.manual_seed(opts.seed)
student = make(args.log_var_range, args.langevin, ck['student'])
exact = energy.sample(opts.n)
out = csv.writer(sys.stdout, lineterminator='\n')
out.writerow(['agent', 'set', 'log_w'] + [f'x{i + 1}' for i in range(energy.data_ndim)])
with torch.no_grad():
    for c in exact.split(1000):
        _, logpf, logpb, _ = student.get_trajectory_bwd(c, None, energy.log_reward)
        rows('student', 'exact', c, energy.log_reward(c) + logpb.sum(-1) - logpf.sum(-1))
for x, lw in model(student, opts.n):
    rows('student', 'model', x, lw)
if args.teacher:
    for x, lw in model(make(4.0, False, ck['teacher']), opts.n):  # the Teacher as diffusion_run.py builds it
        rows('teacher', 'model', x, lw)
b = ck.get('buffer')
if b is not None:
    rows('buffer', 'stored', b['samples'] if torch.is_tensor(b['samples']) else torch.stack(list(b['samples'])))
print(f'manywell_wells.py: checkpoint at iteration {ck["start"]}', file=sys.stderr)

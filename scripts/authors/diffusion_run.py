# diffusion_run.py: run the authors' diffusion sampler code (alstn12088/adaptive-teacher,
# diffusion/train.py) for a whole training, resumably, to compare its end point with gfn's
# under the same settings. Not part of gfn and not run by its tests.
#
#   cd <checkout>/diffusion/.. && PYTHONPATH=<dir with wandb/einops stubs> OPENBLAS_NUM_THREADS=1 \
#     /usr/bin/python3 diffusion_run.py --code diffusion --out DIR -- --energy many_well --teacher
#
# Everything after "--" is train.py's own command line. The loop is train()'s: the same set-up
# order (energy, 2,000 exact evaluation samples, Student, Teacher, optimisers, MultiStepLR at
# epochs-6000 and epochs-2000, buffer, threshold from one untrained batch), then for every
# iteration their train_step, train_step_adv and the schedulers' steps. What this adds:
#   - a checkpoint every --checkpoint-every iterations (networks, optimisers, schedulers,
#     buffer contents, the RNG states), written atomically; the run continues from it;
#   - ELBO, ELBO-IS (their log_partition_function) and EUBO (their eval_step's log_Z_ub) every
#     --eval-every iterations on the fixed 2,000 exact samples, in DIR/metrics.csv, and at the
#     end on 10,000 fresh ones as their final_eval, in DIR/summary.json;
#   - --stop-at N: a probe that stops after its checkpoint at iteration N (a multiple of
#     --checkpoint-every), keeping the checkpoint for scripts/authors/manywell_wells.py.
# One departure, needed to checkpoint: the buffer's draws. Their ReplayBuffer.sample keeps a
# DataLoader iterator (not picklable) until it is exhausted, so a pass drawn with the weights
# of its creation indexes the buffer as it is at each later draw. The replacement keeps the
# same semantics (one multinomial draw of len(buffer) indices with the weights of the latest
# add at the pass's start, consumed batch_size at a time, drop_last) in a picklable list. It
# does not draw the DataLoader's base seed from the global RNG, so the random stream differs
# from an uninterrupted train.py run; the process is the same.
import argparse
import csv
import json
import os
import random
import sys
import time
import types

ap = argparse.ArgumentParser(description="run the authors' diffusion train.py loop resumably")
ap.add_argument('--code', required=True, help="the authors' diffusion/ directory")
ap.add_argument('--out', required=True, help='run directory (created; resumed if it holds a checkpoint)')
ap.add_argument('--eval-every', type=int, default=500)
ap.add_argument('--checkpoint-every', type=int, default=250)
ap.add_argument('--threads', type=int, default=1)
ap.add_argument('--stop-at', type=int, default=0,
                help='stop after the checkpoint at this iteration, without the final evaluation (0: run to the end)')
ap.add_argument('train_args', nargs=argparse.REMAINDER)
opts = ap.parse_args()
if opts.stop_at < 0 or opts.stop_at % opts.checkpoint_every:
    ap.error(f'--stop-at {opts.stop_at} must be 0 or a positive multiple of --checkpoint-every {opts.checkpoint_every}')
targs = opts.train_args[1:] if opts.train_args[:1] == ['--'] else opts.train_args

import numpy as np
import torch

torch.set_num_threads(opts.threads)
sys.path.insert(0, opts.code)
sys.argv = ['train.py'] + targs
import train as T  # parses train.py's flags and seeds every RNG, as running train.py does
from buffer import ReplayBuffer, RewardDataset, SampleDataset
from evaluations import log_partition_function

args = T.args
os.makedirs(opts.out, exist_ok=True)
ckpt_path = os.path.join(opts.out, 'checkpoint.pt')
metrics_path = os.path.join(opts.out, 'metrics.csv')
summary_path = os.path.join(opts.out, 'summary.json')
if os.path.exists(summary_path):
    print('finished:', summary_path)
    sys.exit(0)


def sample(self):
    if not getattr(self, 'pending', None):
        idx = torch.multinomial(self.sampler.weights, self.sampler.num_samples, True)
        self.pending = [b for b in idx.split(self.batch_size) if len(b) == self.batch_size]
    ix = self.pending.pop(0)
    return self.sample_dataset.sample_list[ix].detach(), self.reward_dataset.rewards[ix].detach()


ReplayBuffer.sample = sample

# train()'s set-up, in its order (the RNG stream depends on it).
energy = T.get_energy()
eval_data = energy.sample(T.eval_data_size).to(T.device)


def make(log_var_range, langevin):
    return T.GFN(energy.data_ndim, args.s_emb_dim, args.hidden_dim, args.harmonics_dim, args.t_emb_dim,
                 trajectory_length=args.T, clipping=args.clipping, lgv_clip=args.lgv_clip, gfn_clip=args.gfn_clip,
                 langevin=langevin, learned_variance=args.learned_variance,
                 partial_energy=args.partial_energy, log_var_range=log_var_range,
                 pb_scale_range=args.pb_scale_range,
                 t_scale=args.t_scale, langevin_scaling_per_dimension=args.langevin_scaling_per_dimension,
                 conditional_flow_model=args.conditional_flow_model, learn_pb=args.learn_pb,
                 pis_architectures=args.pis_architectures, lgv_layers=args.lgv_layers,
                 joint_layers=args.joint_layers, zero_init=args.zero_init, device=T.device).to(T.device)


gfn_model = make(args.log_var_range, args.langevin)
gfn_adv = make(4.0, False)
opt = T.get_gfn_optimizer(gfn_model, args.lr_policy, args.lr_flow, args.lr_back, args.learn_pb,
                          args.conditional_flow_model, args.use_weight_decay, args.weight_decay)
opt_adv = T.get_gfn_optimizer(gfn_adv, 5 * args.lr_policy, args.lr_flow, 5 * args.lr_back, args.learn_pb,
                              args.conditional_flow_model, args.use_weight_decay, args.weight_decay)
milestones = [args.epochs - 6000, args.epochs - 2000]
sched = T.MultiStepLR(opt, milestones=milestones, gamma=0.1)
sched_adv = T.MultiStepLR(opt_adv, milestones=milestones, gamma=0.1)
buffer = ReplayBuffer(args.buffer_size, T.device, energy.log_reward, args.batch_size, args,
                      data_ndim=energy.data_ndim, beta=args.beta, rank_weight=args.rank_weight,
                      prioritized=args.prioritized)
gfn_model.train()
gfn_adv.train()
first = gfn_model.sample(args.batch_size, energy.log_reward)
threshold = torch.quantile(energy.log_reward(first), 0.9).item()
start, wall, sums = 0, 0.0, [0.0, 0.0, 0]

if os.path.exists(ckpt_path):
    ck = torch.load(ckpt_path)
    gfn_model.load_state_dict(ck['student'])
    gfn_adv.load_state_dict(ck['teacher'])
    opt.load_state_dict(ck['opt'])
    opt_adv.load_state_dict(ck['opt_adv'])
    sched.load_state_dict(ck['sched'])
    sched_adv.load_state_dict(ck['sched_adv'])
    eval_data = ck['eval_data']
    threshold, start, wall, sums = ck['threshold'], ck['start'], ck['wall'], ck['sums']
    b = ck['buffer']
    if b is not None:
        buffer.sample_dataset = SampleDataset(b['samples'])
        buffer.reward_dataset = RewardDataset(b['rewards'])
        buffer.sampler = types.SimpleNamespace(weights=b['weights'], num_samples=b['num_samples'])
        buffer.pending = b['pending']
    torch.set_rng_state(ck['rng_torch'])
    np.random.set_state(ck['rng_numpy'])
    random.setstate(ck['rng_python'])
    print(f'resumed at iteration {start}', flush=True)
    if 0 < opts.stop_at <= start:
        print(f'stopped: the checkpoint is at iteration {start}, --stop-at {opts.stop_at}', flush=True)
        sys.exit(0)
    if os.path.exists(metrics_path):  # drop rows written after the checkpoint
        with open(metrics_path) as f:
            rows = list(csv.reader(f))
        rows = [rows[0]] + [r for r in rows[1:] if int(r[0]) < start]
        with open(metrics_path + '.tmp', 'w', newline='') as f:
            csv.writer(f, lineterminator='\n').writerows(rows)
        os.replace(metrics_path + '.tmp', metrics_path)


def save(next_it):
    b = None
    if buffer.reward_dataset is not None:
        b = dict(samples=buffer.sample_dataset.sample_list, rewards=buffer.reward_dataset.rewards,
                 weights=torch.as_tensor(buffer.sampler.weights), num_samples=buffer.sampler.num_samples,
                 pending=getattr(buffer, 'pending', None))
    ck = dict(student=gfn_model.state_dict(), teacher=gfn_adv.state_dict(), opt=opt.state_dict(),
              opt_adv=opt_adv.state_dict(), sched=sched.state_dict(), sched_adv=sched_adv.state_dict(),
              eval_data=eval_data, threshold=threshold, start=next_it, wall=wall, sums=sums, buffer=b,
              rng_torch=torch.get_rng_state(), rng_numpy=np.random.get_state(), rng_python=random.getstate(),
              train_args=targs)
    torch.save(ck, ckpt_path + '.tmp')
    os.replace(ckpt_path + '.tmp', ckpt_path)


def evaluate(data):
    gfn_model.eval()
    n = data.shape[0]
    _, log_z, log_z_lb, log_z_learned = log_partition_function(
        torch.zeros(n, energy.data_ndim).to(T.device), gfn_model, energy.log_reward)
    with torch.no_grad():
        _, logpf, logpb, _ = gfn_model.get_trajectory_bwd(data, None, energy.log_reward)
        eubo = (energy.log_reward(data) + logpb.sum(-1) - logpf.sum(-1)).mean()
    gfn_model.train()
    return dict(elbo=log_z_lb.item(), elbo_is=log_z.item(), eubo=eubo.item(), log_z=log_z_learned.item())


if not os.path.exists(metrics_path):
    with open(metrics_path, 'w') as f:
        f.write('step,student_loss,teacher_loss,student_logz,elbo,elbo_is,eubo,wall_seconds\n')

t0 = time.time() - wall
for i in range(start, args.epochs + 1):
    loss, samples, adv_reward, threshold = T.train_step(energy, gfn_model, opt, gfn_adv, buffer, i, threshold, args)
    adv_loss = T.train_step_adv(energy, gfn_adv, opt_adv, samples, adv_reward, i, threshold, args) if args.teacher else 0.0
    sched.step()
    if args.teacher:
        sched_adv.step()
    sums = [sums[0] + loss, sums[1] + float(adv_loss), sums[2] + 1]
    if i % opts.eval_every == 0:
        m = evaluate(eval_data)
        wall = time.time() - t0
        with open(metrics_path, 'a') as f:
            f.write(f'{i},{sums[0] / sums[2]:.6f},{sums[1] / sums[2]:.6f},{m["log_z"]:.6f},'
                    f'{m["elbo"]:.6f},{m["elbo_is"]:.6f},{m["eubo"]:.6f},{wall:.1f}\n')
        print(f'{i}: loss {sums[0] / sums[2]:.3f} teacher {sums[1] / sums[2]:.3f} '
              f'ELBO {m["elbo"]:.3f} ELBO-IS {m["elbo_is"]:.3f} EUBO {m["eubo"]:.3f} ({wall:.0f} s)', flush=True)
        sums = [0.0, 0.0, 0]
    if (i + 1) % opts.checkpoint_every == 0:
        wall = time.time() - t0
        save(i + 1)
        if i + 1 == opts.stop_at:
            print(f'stopped at iteration {i + 1} (--stop-at)', flush=True)
            sys.exit(0)

final = energy.sample(T.final_eval_data_size).to(T.device)
m = evaluate(final)
m.update(iterations=args.epochs + 1, wall_seconds=time.time() - t0, train_args=targs)
with open(summary_path + '.tmp', 'w') as f:
    json.dump(m, f, indent=1)
os.replace(summary_path + '.tmp', summary_path)
if os.path.exists(ckpt_path):
    os.remove(ckpt_path)
print('final:', json.dumps(m), flush=True)

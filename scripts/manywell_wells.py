# manywell_wells.py: which of Manywell's 16 left wells a gfn Student (and its Teacher) covers,
# from the per-sample log weights that `gfn eval --weights` writes:
#
#   gfn eval --checkpoint DIR --seed 1 --weights w.csv && python3 scripts/manywell_wells.py w.csv
#
# Manywell's density is a product of 16 independent pairs (x1, x2), (x3, x4), ...; each odd
# coordinate has a heavy right well and a light left one (x < 0, about 15.6% of the mass). For
# each agent in the file the report gives the mean log weight of the exact samples grouped by
# how many left wells they are in (the EUBO's terms), and the fraction of the agent's own
# samples in each coordinate's left well (and of any other set in the file, such as the
# replay buffer that scripts/authors/manywell_wells.py writes from the authors' checkpoints).
import collections
import csv
import sys

if len(sys.argv) != 2:
    sys.exit('usage: manywell_wells.py WEIGHTS.csv (from gfn eval --weights)')
rows = collections.defaultdict(list)
with open(sys.argv[1]) as f:
    for r in csv.DictReader(f):
        if 'x32' not in r or 'x33' in r:
            sys.exit(f'manywell_wells.py: {sys.argv[1]} is not a Manywell (32-d) weights file')
        rows[r['agent'], r['set']].append(r)


def lefts(r):
    return [float(r[f'x{2 * i + 1}']) < 0 for i in range(16)]


def coverage(name, rs):
    ls = [lefts(r) for r in rs]
    print(f'{name} left-well fraction per coordinate: ' +
          ' '.join(f'{sum(l[i] for l in ls) / len(ls):.3f}' for i in range(16)))
    c = collections.Counter(sum(l) for l in ls)
    print(f'{name} samples by left wells: ' + ' '.join(f'{k}:{c[k]}' for k in sorted(c)))


exact_reported = False
for agent in dict.fromkeys(a for a, _ in rows):  # agents in the file's order
    exact = rows.get((agent, 'exact'))
    if exact:
        groups = collections.defaultdict(list)
        for r in exact:
            groups[sum(lefts(r))].append(float(r['log_w']))
        print(f'{agent}: EUBO {sum(sum(g) for g in groups.values()) / len(exact):.1f} on {len(exact)} exact samples')
        print('| left wells in the exact sample | samples | mean log w |')
        print('|---|---|---|')
        for k in sorted(groups):
            print(f'| {k} | {len(groups[k])} | {sum(groups[k]) / len(groups[k]):.1f} |')
        if not exact_reported:
            coverage('exact', exact)
            exact_reported = True
    for (a, set_), rs in rows.items():
        if a == agent and set_ != 'exact':
            coverage(agent.capitalize(), rs)

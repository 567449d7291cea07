// Package biochem holds the four sequence-design tasks of the paper's
// "biological and chemical discovery" experiments, as the authors' code
// (alstn12088/adaptive-teacher, discovery/, built on maxwshen/gflownet)
// defines them, with their data compiled into the binary.
//
// A string is a row of Length int32 tokens in [0, |A|); a batch is rows
// laid end to end. Token k is the k-th symbol of Alphabet, which is also the
// one-hot column the reference's featurisation gives it (sklearn's
// OneHotEncoder sorts the alphabet, and every alphabet here is sorted).
//
//	task     n   |A|  alphabet          raw score                 beta  reward max  modes
//	tfbind8  8   4    A C G T           y, SIX6 binding (0..1)    20    10          328 pre-defined
//	qm9str   5   11   0-9 a (blocks)    r, QM9 proxy (max 17.37)  20    100         805 (top 0.5% by r)
//	sehstr   6   18   0-9 a-h (blocks)  p, sEH tree proxy         6     10          129 (Tanimoto-diverse top 0.01%)
//	rna      14  4    A C G U           f, L14-RNA1 binding       40    10          8967 (Hamming-ball top 0.01%)
//
// TFbind8 also accepts the reference's digits 0-3 (its x_idx form, used by
// its mode file) in Encode. The block tokens of qm9str are the blocks of
// block_qm9str_v1.json (0 C, 1 O, 2 N, 3 C-F, 4 C=O, 5 C=C, 6 C#C,
// 7 c1ccccc1, 8 C1CCCCC1, 9 C1CCNC1, a CCC) and of sehstr those of
// block_18.json (0 CO, 1 O=c1[nH]cnc2[nH]cnc12, 2 S, 3 C1CNCCN1,
// 4 c1cc[nH+]cc1, 5 c1ccccc1, 6 C1CCCCC1, 7 CC(C)C, 8 C1CCOCC1, 9 c1cn[nH]c1,
// a C1CCNC1, b c1cncnc1, c O=c1nc2[nH]c3ccccc3nc-2c(=O)[nH]1, d c1ccncc1,
// e O=c1nccc[nH]1, f O=c1cc[nH]c(=O)[nH]1, g C1CCOC1, h C1CCNCC1); the
// reference's symbol for block k is the k-th character of
// "0123456789abcdefgh…".
//
// # Rewards
//
// With s the raw score (Score) and s⁺ = max(s, ScoreMin = 1e-3), the reward
// the reference trains on is
//
//	tfbind8  R = max(10·s⁺^20 / max_x s⁺^20, 1e-20)        max_x y = 1
//	qm9str   R = 100·s⁺^20 / max_x r^20 + 1e-12             max r = 17.374774932861328 at 11111
//	sehstr   R = max(10·s⁺^6 / sehMax^6, 1e-32)              sehMax = 7.033253064721926 at ag550c
//	rna      R = 1.1953257013780185·s⁺^40 + 1e-12           (10 over the largest fitness^40)
//
// LogReward computes log R in log space (log scale + beta·log s⁺, then the
// floor or the log-space sum with the additive constant), so no power
// underflows. TFbind8's y and QM9's r are the tables' float32 values; sEH's
// p is the float64 prediction of the tree proxy; RNA's f is FLEXS's binding
// fitness, duplex energy(target, x) over 14/100 of the target's perfect
// duplex energy (package rna; negative when the best duplex has a positive
// energy, which the clamp s⁺ absorbs).
//
// # Evaluation (trainers.evaluate of the reference)
//
// The reference's "real reward" is max(s, 1e-3) (the tasks' real_reward,
// clamped again in evaluate): RealReward. evaluate averages it over the
// Student's 2048 samples (the expected-reward metric) and correlates its
// log with the Student's log P_F over target samples (Pearson; the code
// passes only the last chunk of 128 target samples to the correlation).
//
// EUBO and the correlation use target samples (TargetSamples): exact draws
// for tfbind8 (Gumbel-max over the table in the reference) and qm9str
// (numpy categorical draws), the stored sets for sehstr and rna (2048 each,
// the true_samples key; the reference also evaluates a second,
// "scaled" set, identical for rna).
//
// LogZ is log Σ_x R(x) of the reward above, over all strings:
//   - tfbind8, qm9str: exact, by enumeration on first use (4^8 and 11^5
//     strings), the floors included.
//   - sehstr: the constant sehLogZ, computed once by enumerating all 18^6
//     strings through the tree proxy (TestSEHExhaustive).
//   - rna: logz_scaled of the reference's L14_RNA1_info.csv at beta 40
//     (the authors' float32 enumeration of all 4^14 strings with FLEXS) plus
//     the 4^14·1e-12 of the additive constant.
//
// The reference compares its log Z estimate with two values: logZ =
// log Σ s⁺^beta (without the scale) and logZ_scaled = logZ + log scale,
// computed in float32 and without the floors; the latter equals LogZ up to
// float32 rounding and the floors it leaves out (at most 1.5e-6 in log Z,
// rna's 4^14·1e-12) for tfbind8, qm9str and rna. For sehstr the reference
// does not use the proxy at all there: it takes s from
// datasets/sehstr/block_18_stop6.pkl, the neural-network proxy values the
// trees were fitted to (not published with the code), for both its log Z
// values and, by the code path, its stored target samples; so its sEH log Z
// differs from LogZ (by an amount that cannot be computed without that
// file). The stored samples are nevertheless consistent with the trees'
// target: the Kolmogorov–Smirnov distance between their p and the exact
// target law of p is 0.017 (the scaled set 0.021; 1% critical value 0.036
// for 2048 samples), and their mean log p is 1.6746 against the exact
// 1.6772 ± 0.0028 (TestSEHExhaustive).
//
// # Data
//
// The score tables, mode lists, stored samples and the tree proxy are
// embedded with go:embed, compressed (about 0.69 MB in all), and decoded on
// first use of a task, so importing the package costs nothing.
// data/PROVENANCE.md gives each file's source, commit, conversion and
// verification; `go generate` rebuilds them from the shared task data
// (internal/gendata).
package biochem

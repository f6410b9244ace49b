"""SSFI: semi-supervised feature importance (SSFI paper, Alg. 1-4).

Committee (Alg. 1 steps 3-11): N members (eq. 1 unless ``n_members``), each with
a random subspace of m = sqrt(p) features, a bootstrap L_bag of the labeled and
U_bag of the unlabeled samples (out-of-bag sets L_oob, U_oob fixed from these
draws) and a scikit-learn decision tree trained on L_bag.

Co-training refinement (steps 12-20, Alg. 2-3). Each round, every unlabeled sample
x is labeled by majority vote of H_x, the members for which x is out of bag, with
confidence = fraction of H_x agreeing (Alg. 3, conf = max_k P(x)); as the paper
states, "a given example x, in a given iteration t, will have the same label for
all the committee members", so the votes are taken once per round from the current
committee and all members are then updated (Jacobi order). Member i takes, for each
class k, the n_k most confident samples of its U_bag labeled k (ties broken by a
random order drawn from the member's seed), adds each once to L_bag with its label,
removes it from U_bag and is retrained. Growth rate n_k = max(1, round(n * Pr_k))
with Pr_k the class frequencies of L and n = ``sample_size`` (the paper's n = 1
would otherwise round to no growth at all). Samples with empty H_x are not labeled.
Stops after ``max_iter`` rounds or when no member changed.

Importance (steps 21-34, Alg. 4): O^i = the out-of-bag labeled samples member i
predicts correctly (confidence 1) and its out-of-bag unlabeled samples on which it
agrees with the final committee vote (confidence = that vote's agreement). For each
feature f of RSM^i its values are permuted over O^i and imp(f) gains the confidence
of every sample whose prediction changes. imp is divided by N ("averaged over N,
the committee size"; ``average="members"`` divides by the number of members that
drew f instead). Permuting a feature the tree does not split on changes nothing,
so only split features are permuted (exactly the same result). Features never drawn
get NaN. Higher is better.

Randomness: every member's subspace, bootstraps, tree seed and tie-breaking order are
drawn up front from ``rng``; the trees (scikit-learn's builder, ``forest.fit_tree``) are
fitted one at a time and are deterministic given their seed, so the result does not
depend on the number of cores. (Fitting the trees in 2 threads, tried: no gain end to end
on the shared 2-core machine, so there is no ``n_jobs``.)

Speed (tens of thousands of tiny trees): trees are built through scikit-learn's tree
builder without the estimator's per-call checks, only members whose L_bag changed are
refitted, and the votes, the confidence-ranked picks and the permuted predictions are
computed for all members at once (``forest.FlatForest``); every floating-point sum keeps
the order of the member-by-member algorithm, so the scores are bit-identical to it.
"""

from __future__ import annotations

import numbers
from typing import Annotated, Literal

import numpy as np

from .._progress import track
from .._validation import dense
from ..errors import InputError
from ..params import NonNegInt, PosFloat, PosInt, Range
from ..registry import SelectionResult, register
from ._shared.committee import draw_subspaces, resolve_members
from .forest import FlatForest, SplitterSeed, fit_tree

_BLOCK = 1 << 18  # (member, sample) pairs handled at once: bounds the temporary arrays


class _Committee:
    """State of the SSFI committee (arrays indexed by member first). ``X`` stacks the
    labeled rows (0..nl-1) over the unlabeled ones (nl + j)."""

    def __init__(self, XL, yl, XU, rng, n_members, subspace, tree_params):
        self.X = np.ascontiguousarray(np.vstack([XL, XU]), dtype=np.float32)
        self.XT = np.ascontiguousarray(self.X.T)  # for FlatForest (features x samples)
        self.yl = yl
        nl, nu, p = XL.shape[0], XU.shape[0], XL.shape[1]
        self.nl, self.nu = nl, nu
        self.N, self.m = resolve_members(p, n_members, subspace)
        self.features = draw_subspaces(p, self.N, self.m, rng)
        lboot = rng.integers(0, nl, size=(self.N, nl))
        uboot = rng.integers(0, nu, size=(self.N, nu)) if nu else np.zeros((self.N, 0), np.int64)
        self.tree_seeds = rng.integers(0, 2**31 - 1, size=self.N)
        self.member_seeds = rng.integers(0, 2**31 - 1, size=self.N)
        self.tree_params = tree_params
        self._splitter_seeds = [SplitterSeed(s) for s in self.tree_seeds]
        # training set of member i: rows of X (L_bag with repeats, then pseudo-labeled U rows)
        self.rows = [lb for lb in lboot]
        self.labels = [yl[lb] for lb in lboot]
        self.l_oob = np.ones((self.N, nl), dtype=bool)
        self.u_in = np.zeros((self.N, nu), dtype=bool)  # U_bag (shrinks as samples are moved to L_bag)
        np.put_along_axis(self.l_oob, lboot, False, axis=1)
        np.put_along_axis(self.u_in, uboot, True, axis=1)
        self.u_oob = ~self.u_in
        self._oob_pairs = None
        self.trees = [None] * self.N
        self.refit(range(self.N))

    def _fit(self, i):
        Xi = self.X[self.rows[i][:, None], self.features[i][None, :]]
        return fit_tree(Xi, self.labels[i], self._splitter_seeds[i], **self.tree_params)

    def refit(self, members):
        for i in members:
            self.trees[i] = self._fit(i)
        self.forest = FlatForest(self.trees, self.features)

    def _member_blocks(self, width):
        step = max(1, _BLOCK // max(1, width))
        return [np.arange(s, min(s + step, self.N)) for s in range(0, self.N, step)]

    def votes(self, n_classes):
        """Committee label and confidence of every unlabeled sample (Alg. 3 over H_x):
        every member predicts its own out-of-bag unlabeled samples."""
        nu = self.nu
        if self._oob_pairs is None:  # U_oob is fixed: (member, sample) pairs by block, once
            self._oob_pairs = [(blk[mi], j) for blk in self._member_blocks(nu)
                               for mi, j in [np.nonzero(self.u_oob[blk])] if mi.size]
        counts = np.zeros(nu * n_classes)
        for members, j in self._oob_pairs:
            pred = self.forest.predict(self.XT, members, self.nl + j)
            counts += np.bincount(j * n_classes + pred, minlength=nu * n_classes)  # integer counts: exact
        counts = counts.reshape(nu, n_classes)
        total = counts.sum(axis=1)
        label = np.argmax(counts, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            conf = np.where(total > 0, counts.max(axis=1) / total, 0.0)
        return label, conf, total > 0


def _growth(yl, n_classes, sample_size):
    prior = np.bincount(yl, minlength=n_classes) / yl.size
    return np.maximum(1, np.round(sample_size * prior)).astype(np.int64)


def _tie_ranks(com: _Committee):
    """Per member, the rank of each unlabeled sample in the member's random tie-breaking
    order (uniform keys from the member's seed; equal keys in index order)."""
    rank = np.empty((com.N, com.nu), dtype=np.int32 if com.nu < 2**31 else np.int64)
    for blk in com._member_blocks(com.nu):
        keys = np.empty((blk.size, com.nu))
        for b, i in enumerate(blk):  # loop over members: one seeded stream each
            keys[b] = np.random.default_rng(int(com.member_seeds[i])).random(com.nu)
        np.put_along_axis(rank[blk[0]:blk[-1] + 1], np.argsort(keys, axis=1, kind="stable"),
                          np.arange(com.nu)[None, :], axis=1)
    return rank


def _select(com: _Committee, blk, label, conf_rank, known, tie_rank, n_k):
    """Alg. 2 for the members in ``blk``: for each class k the n_k[k] samples of U_bag
    labeled k with the highest confidence (then the lowest tie rank). Returns the picks
    (members x slots, class by class, best first) and which slots hold a pick."""
    nu = com.nu
    BIG = np.iinfo(np.int64).max
    # position in "confidence descending, then tie order": unique within a member's row
    key = np.where(com.u_in[blk] & known[None, :], conf_rank[None, :] * nu + tie_rank[blk], BIG)
    picks, valid = [], []
    for k, nk in enumerate(n_k):
        kk = np.where(label[None, :] == k, key, BIG)
        nk = min(int(nk), nu)
        if nk == 1:  # the usual growth rate: the best candidate
            idx = np.argmin(kk, axis=1)[:, None]
        elif nk < nu:
            idx = np.argpartition(kk, nk - 1, axis=1)[:, :nk]
        else:
            idx = np.broadcast_to(np.arange(nu), kk.shape)
        idx = np.take_along_axis(idx, np.argsort(np.take_along_axis(kk, idx, axis=1), axis=1), axis=1)
        picks.append(idx)
        valid.append(np.take_along_axis(kk, idx, axis=1) < BIG)
    return np.hstack(picks), np.hstack(valid)


def _refine(com: _Committee, n_classes, n_k, max_iter):
    """Alg. 1 steps 12-20 with Alg. 2 (SelectConfidentExamples)."""
    nu = com.nu
    if nu == 0:
        return 0
    tie_rank = _tie_ranks(com)
    for t in track(range(1, max_iter + 1), f"ssfi self-training rounds (at most {max_iter}, {com.N} trees)"):
        label, conf, known = com.votes(n_classes)
        conf_rank = np.unique(-conf, return_inverse=True)[1].astype(np.int64)
        changed = []
        for blk in com._member_blocks(nu):
            pick, ok = _select(com, blk, label, conf_rank, known, tie_rank, n_k)
            for b in np.flatnonzero(ok.any(axis=1)):
                i, pi = blk[b], pick[b][ok[b]]
                com.rows[i] = np.concatenate((com.rows[i], com.nl + pi))
                com.labels[i] = np.concatenate((com.labels[i], label[pi]))
                com.u_in[i, pi] = False
                changed.append(i)
        if not changed:
            return t
        com.refit(changed)
    return max_iter


def _importance(com: _Committee, n_classes, p):
    """Alg. 1 steps 21-32 with Alg. 4 (BuildOOBMatrix): summed confidence of changed predictions.

    Member i's O^i (out-of-bag labeled rows, then out-of-bag unlabeled rows its tree
    predicts like the committee / like the true label) is permuted one split feature at a
    time with permutations from the member's own stream; the permuted predictions of many
    members are made at once, and the sums run member by member in the original order."""
    label, conf, known = com.votes(n_classes)
    imp = np.zeros(p)
    splits_t, splits_f = com.forest.split_features()
    first_split = np.searchsorted(splits_t, np.arange(com.N + 1))
    batch = _PermutedBatch(com, imp)
    for blk in com._member_blocks(com.nl + com.nu):
        lm, lo = np.nonzero(com.l_oob[blk])
        um, uo = np.nonzero(com.u_oob[blk] & known[None, :])
        member = blk[np.r_[lm, um]]
        order = np.argsort(member, kind="stable")  # per member: labeled rows, then unlabeled rows
        member, rows = member[order], np.r_[lo, com.nl + uo][order]
        target = np.r_[com.yl[lo], label[uo]][order]
        w = np.r_[np.ones(lo.size), conf[uo]][order]
        keep = com.forest.predict(com.XT, member, rows) == target
        member, rows, w, base = member[keep], rows[keep], w[keep], target[keep]
        start = np.searchsorted(member, np.r_[blk, blk[-1] + 1])
        for b, i in enumerate(blk):
            s0, s1 = start[b], start[b + 1]
            feats = splits_f[first_split[i]:first_split[i + 1]]
            if s1 > s0 and feats.size:
                batch.add(i, feats, rows[s0:s1], base[s0:s1], w[s0:s1])
    batch.flush()
    return imp


class _PermutedBatch:
    """Permuted predictions of several members at once (Alg. 4), added to ``imp`` in member order."""

    def __init__(self, com: _Committee, imp):
        self.com, self.imp = com, imp
        self.pending, self.parts, self.size = [], [], 0

    def add(self, i, feats, rows, base, w):
        n, nf = rows.size, feats.size
        r = np.random.default_rng(int(self.com.member_seeds[i]) + 1)
        perm = np.concatenate([r.permutation(n) for _ in range(nf)])  # one per split feature, in order
        self.parts.append((np.full(n * nf, i), np.tile(rows, nf), rows[perm],
                           np.repeat(self.com.features[i][feats], n), np.tile(base, nf), np.tile(w, nf)))
        self.pending.append((i, feats, n, self.size))
        self.size += n * nf
        if self.size >= _BLOCK:
            self.flush()

    def flush(self):
        if not self.pending:
            return
        tree, rows, prow, pfeat, base, w = (np.concatenate(c) for c in zip(*self.parts, strict=True))
        vals = (self.com.forest.predict(self.com.XT, tree, rows, pfeat, prow) != base) * w
        for i, feats, n, a in self.pending:  # member order, one row sum per feature as before
            self.imp[self.com.features[i][feats]] += vals[a:a + n * feats.size].reshape(feats.size, n).sum(axis=1)
        self.pending, self.parts, self.size = [], [], 0


@register("ssfi", higher_is_better=True, needs=("labels",), invariances=("scale", "unit"))
def ssfi(X, y, constraints, rng, *, n_members: PosInt | None = None, subspace: PosInt | None = None,
         sample_size: PosFloat = 1, max_iter: NonNegInt = 10,
         min_samples_split: Annotated[int, Range(2)] | Annotated[float, Range(0, 1, low_open=True)] = 2,
         max_depth: PosInt | None = None, average: Literal["committee", "members"] = "committee"):
    """Semi-supervised feature importance (SSFI paper Alg. 1-4), higher is better.

    ``n_members`` (default eq. 1), ``subspace`` (default sqrt(p)), ``sample_size`` n and
    ``max_iter`` (paper: 1 and 10) as in Alg. 1; ``min_samples_split``/``max_depth``: the
    decision tree (scikit-learn's, fully grown by default); ``average``: "committee"
    (divide by N, the paper) or "members" (by the number of members drawing the feature).
    The number of refinement rounds run is reported in ``extra["rounds"]``.
    """
    if average not in ("committee", "members"):
        raise InputError(f"ssfi: average must be 'committee' or 'members', got {average!r}")
    if max_iter < 0:
        raise InputError(f"ssfi: max_iter must be >= 0, got {max_iter}")
    if isinstance(min_samples_split, (bool, np.bool_)) or not (
            (isinstance(min_samples_split, numbers.Integral) and min_samples_split >= 2)
            or (not isinstance(min_samples_split, numbers.Integral) and isinstance(min_samples_split, numbers.Real)
                and 0 < min_samples_split <= 1)):
        raise InputError(
            f"ssfi: min_samples_split must be an int >= 2 or a fraction in (0, 1], got {min_samples_split!r}"
        )
    if max_depth is not None and not (isinstance(max_depth, numbers.Integral) and max_depth >= 1):
        raise InputError(f"ssfi: max_depth must be None or an int >= 1, got {max_depth!r}")
    Xd = np.asarray(dense(X, method="ssfi"), dtype=np.float32)
    lab = y >= 0
    classes, yl = np.unique(y[lab], return_inverse=True)
    K = classes.size
    com = _Committee(Xd[lab], yl, Xd[~lab], rng, n_members, subspace,
                     dict(min_samples_split=min_samples_split, max_depth=max_depth))
    del Xd  # the committee keeps its own copies
    rounds = _refine(com, K, _growth(yl, K, sample_size), max_iter)
    imp = _importance(com, K, X.shape[1])
    drawn = np.bincount(com.features.ravel(), minlength=X.shape[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(drawn > 0, imp / (com.N if average == "committee" else drawn), np.nan)
    return SelectionResult(scores=scores, extra={"rounds": rounds, "n_members": com.N})

"""Pairwise constraints: must-link (ML) and cannot-link (CL) sample pairs.

A :class:`Constraints` holds two ``(k, 2)`` integer arrays of sample indices
(each pair stored once with ``i < j``). Constructors build them from partial
labels (all pairs, as CLS does), by random sampling of ``l`` ML + ``l`` CL pairs
(constraint-score paper, Section 3.2) or from a TSV file; closure and noise are
functions returning new objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from ._checked import read_checked_tsv
from .errors import InputError, SupervisionError

if TYPE_CHECKING:
    import pandas as pd


def _canon(pairs) -> np.ndarray:
    """Pairs as sorted unique (i < j) int64 rows; indices that are not whole numbers, or rows
    that are not pairs, are one-line :class:`SupervisionError` (never truncated)."""
    try:
        raw = np.asarray(pairs, dtype=float if not isinstance(pairs, np.ndarray) else None)
    except (TypeError, ValueError):
        raise SupervisionError(f"constraints must be pairs of sample indices, got {pairs!r}"[:200]) from None
    if raw.size and (raw.ndim != 2 or raw.shape[1] != 2) and not (raw.ndim == 1 and raw.size == 2):
        raise SupervisionError(f"constraints must be pairs of sample indices (n x 2), got shape {raw.shape}")
    whole = raw.dtype.kind in "iu" or (raw.dtype.kind == "f" and bool(np.all(raw == np.round(raw))) and
                                       bool(np.isfinite(raw).all()))
    if raw.size and not whole:
        bad = raw[(raw != np.round(raw)) | ~np.isfinite(raw)].ravel()[0] if raw.dtype.kind == "f" else raw.ravel()[0]
        raise SupervisionError(f"constraint indices must be whole sample positions, got {bad}")
    a = raw.astype(np.int64).reshape(-1, 2)
    if a.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    a = np.sort(a, axis=1)
    a = a[a[:, 0] != a[:, 1]]
    return np.unique(a, axis=0) if a.size else np.zeros((0, 2), dtype=np.int64)


@dataclass(frozen=True)
class Constraints:
    ml: np.ndarray
    cl: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "ml", _canon(self.ml))
        object.__setattr__(self, "cl", _canon(self.cl))

    # ------------------------------------------------------------------ basics
    @classmethod
    def empty(cls) -> Constraints:
        return cls(np.zeros((0, 2)), np.zeros((0, 2)))

    def __len__(self) -> int:
        return len(self.ml) + len(self.cl)

    @property
    def n_ml(self) -> int:
        return len(self.ml)

    @property
    def n_cl(self) -> int:
        return len(self.cl)

    def samples(self) -> np.ndarray:
        """Sorted indices of the samples involved in any constraint."""
        return np.unique(np.concatenate([self.ml.ravel(), self.cl.ravel()]))

    def unconstrained(self, n: int) -> np.ndarray:
        """Boolean mask of the n samples in no constraint (X_U when constraints come from labels)."""
        free = np.ones(int(n), dtype=bool)
        free[self.samples()] = False
        return free

    def validate(self, n: int) -> Constraints:
        """Check indices are within ``0..n-1`` and that no pair is both ML and CL."""
        for kind, arr in (("must-link", self.ml), ("cannot-link", self.cl)):
            if arr.size and (arr.min() < 0 or arr.max() >= n):
                bad = arr[(arr < 0).any(1) | (arr >= n).any(1)][0]
                raise SupervisionError(
                    f"{kind} constraint ({bad[0]}, {bad[1]}) refers to a sample outside 0..{n - 1}"
                )
        if self.ml.size and self.cl.size:
            both = _intersect_rows(self.ml, self.cl)
            if both.size:
                i, j = both[0]
                raise SupervisionError(
                    f"contradictory constraints: pair ({i}, {j}) is both must-link and cannot-link "
                    f"({len(both)} such pair(s))"
                )
        return self

    def subset(self, idx: np.ndarray) -> Constraints:
        """Constraints among samples ``idx``, re-indexed to positions in ``idx``."""
        idx = np.asarray(idx, dtype=np.int64)
        pos = np.full(int(max(idx.max(initial=-1), self.samples().max(initial=-1))) + 1, -1)
        pos[idx] = np.arange(idx.size)

        def keep(a):
            if not a.size:
                return a
            m = pos[a]
            return m[(m >= 0).all(1)]

        return Constraints(keep(self.ml), keep(self.cl))

    def remap(self, idx: np.ndarray) -> Constraints:
        """Map local indices back to global ones: pair (a, b) becomes (idx[a], idx[b])."""
        idx = np.asarray(idx, dtype=np.int64)
        return Constraints(idx[self.ml] if self.ml.size else self.ml, idx[self.cl] if self.cl.size else self.cl)

    # ------------------------------------------------------------ constructors
    #: the label vector when the constraints are all pairs of labeled samples (closed forms)
    labels = None

    @classmethod
    def from_labels(cls, y) -> Constraints:
        """All pairs of labeled samples (``y >= 0``): same class -> ML, different -> CL.
        Returned as :class:`LabelConstraints`: the pairs are built only when read."""
        return LabelConstraints(y)

    @classmethod
    def pairs_from_labels(cls, y) -> Constraints:
        """:meth:`from_labels` with the pairs built now (a plain :class:`Constraints`)."""
        y = np.asarray(y)
        lab = np.flatnonzero(y >= 0)
        if lab.size < 2:
            return cls.empty()
        i, j = np.triu_indices(lab.size, k=1)
        same = y[lab[i]] == y[lab[j]]
        pairs = np.column_stack([lab[i], lab[j]])
        return cls(pairs[same], pairs[~same])

    @classmethod
    def sample(cls, y, n_ml: int, n_cl: int, rng: np.random.Generator) -> Constraints:
        """``n_ml`` random must-link and ``n_cl`` random cannot-link pairs (distinct)
        among the samples with known labels ``y >= 0``; as in the constraint-score
        paper's protocol. Refuses when not enough distinct pairs exist."""
        y = np.asarray(y)
        lab = np.flatnonzero(y >= 0)
        all_c = cls.pairs_from_labels(y)
        out = []
        for kind, pool, k in (("must-link", all_c.ml, n_ml), ("cannot-link", all_c.cl, n_cl)):
            if k > len(pool):
                raise SupervisionError(
                    f"asked for {k} {kind} constraints but the {lab.size} labeled samples only "
                    f"give {len(pool)} distinct {kind} pairs"
                )
            out.append(pool[rng.choice(len(pool), size=k, replace=False)] if k else pool[:0])
        return cls(out[0], out[1])

    # ---------------------------------------------------------- transformations
    def transitive_closure(self, n: int | None = None) -> Constraints:
        """ML closure (connected components of the ML graph are cliques) and the CL
        pairs it entails: if a-b is CL then every member of a's ML component is CL
        with every member of b's. Refuses contradictory input."""
        idx = self.samples()
        if idx.size == 0:
            return self
        n = int(idx.max()) + 1 if n is None else n
        self.validate(n)
        if self.ml.size:
            A = sparse.coo_matrix((np.ones(len(self.ml)), (self.ml[:, 0], self.ml[:, 1])), shape=(n, n))
            from scipy.sparse.csgraph import connected_components

            _, comp = connected_components(A, directed=False)
        else:
            comp = np.arange(n)
        ml_pairs = []
        members = {}
        for c in np.unique(comp[idx]):
            m = idx[comp[idx] == c]
            members[c] = m
            if m.size > 1:
                a, b = np.triu_indices(m.size, 1)
                ml_pairs.append(np.column_stack([m[a], m[b]]))
        cl_pairs = []
        comp_pairs = np.unique(np.sort(comp[self.cl], axis=1), axis=0) if self.cl.size else []
        for ca, cb in comp_pairs:
            if ca == cb:
                raise SupervisionError(
                    "contradictory constraints: a cannot-link pair joins two samples that "
                    "must-link constraints put in the same group"
                )
            ma, mb = members[ca], members[cb]
            cl_pairs.append(np.column_stack([np.repeat(ma, mb.size), np.tile(mb, ma.size)]))
        ml = np.vstack(ml_pairs) if ml_pairs else np.zeros((0, 2))
        cl = np.vstack(cl_pairs) if cl_pairs else np.zeros((0, 2))
        return Constraints(ml, cl)

    def with_noise(self, fraction: float, rng: np.random.Generator) -> Constraints:
        """Flip ``round(fraction * len(self))`` randomly chosen constraints (ML <-> CL)."""
        if not 0.0 <= fraction <= 1.0:
            raise SupervisionError(f"noise fraction must be in [0, 1], got {fraction}")
        allp = np.vstack([self.ml, self.cl])
        is_ml = np.r_[np.ones(len(self.ml), bool), np.zeros(len(self.cl), bool)]
        k = int(round(fraction * len(allp)))
        flip = rng.choice(len(allp), size=k, replace=False) if k else np.zeros(0, int)
        is_ml[flip] = ~is_ml[flip]
        return Constraints(allp[is_ml], allp[~is_ml])

    def bootstrap(self, rng: np.random.Generator) -> Constraints:
        """Resample ML and CL pairs with replacement (duplicates collapse)."""
        ml = self.ml[rng.integers(0, len(self.ml), len(self.ml))] if len(self.ml) else self.ml
        cl = self.cl[rng.integers(0, len(self.cl), len(self.cl))] if len(self.cl) else self.cl
        return Constraints(ml, cl)

    # --------------------------------------------------------------------- I/O
    def to_frame(self) -> pd.DataFrame:
        import pandas as pd  # lazy: pandas is I/O only, not on a method's path

        return pd.DataFrame(
            {
                "i": np.r_[self.ml[:, 0], self.cl[:, 0]].astype(np.int64),
                "j": np.r_[self.ml[:, 1], self.cl[:, 1]].astype(np.int64),
                "kind": ["ML"] * len(self.ml) + ["CL"] * len(self.cl),
            }
        )

    def tsv_frame(self) -> pd.DataFrame:
        """The rows :meth:`to_tsv` writes (and :meth:`from_tsv` reads back): one per pair."""
        return self.to_frame()

    def to_tsv(self, path) -> None:
        self.tsv_frame().to_csv(path, sep="\t", index=False)

    @classmethod
    def from_tsv(cls, path, *, checked: bool = False) -> Constraints:
        """Constraints of a file written by :meth:`to_tsv` (columns ``i``, ``j``, ``kind``);
        ``checked``: a workflow result with its end-of-table line (:mod:`ssfs._checked`),
        refused in one line when cut short."""
        path = Path(path)
        if not path.exists():
            raise InputError(f"constraint file {path} does not exist")
        import pandas as pd

        try:
            df = (read_checked_tsv(path, dtype={"kind": str}) if checked
                  else pd.read_csv(path, sep="\t", dtype={"kind": str}))
        except pd.errors.EmptyDataError:
            raise InputError(f"constraint file {path} is empty (expected columns i, j, kind)") from None
        missing = {"i", "j", "kind"} - set(df.columns)
        if missing:
            raise InputError(f"constraint file {path} lacks column(s) {sorted(missing)} (expected i, j, kind)")
        if len(df) == 0:  # no pair (e.g. a label-free dataset without a constraints_file)
            return cls.empty()
        kinds = set(df["kind"].astype(str).str.upper())
        if kinds - {"ML", "CL"} and kinds != {"CLASS"}:
            raise InputError(f"constraint file {path}: kind must be ML or CL (or class on every row), "
                             f"found {sorted(kinds - {'ML', 'CL'})}")
        for c in ("i", "j"):
            if not pd.api.types.is_integer_dtype(df[c]):
                raise InputError(f"constraint file {path}: column {c} must hold integer sample indices")
        if kinds == {"CLASS"}:  # all pairs of these labeled samples, written by LabelConstraints.to_tsv
            i, code = df["i"].to_numpy(), df["j"].to_numpy()
            if (i < 0).any() or (code < 0).any() or np.unique(i).size != i.size:
                raise InputError(f"constraint file {path}: class rows need distinct samples i >= 0 and classes j >= 0")
            labels = np.full(int(i.max()) + 1, -1, dtype=np.int64)
            labels[i] = code
            return LabelConstraints(labels)
        k = df["kind"].astype(str).str.upper()
        return cls(df.loc[k == "ML", ["i", "j"]].to_numpy(), df.loc[k == "CL", ["i", "j"]].to_numpy())


def read_sample_constraints(path, sample_ids, *, where: str = "constraints") -> Constraints:
    """User constraints by sample id: a table with columns ``sample_a``, ``sample_b``,
    ``kind`` (``ML`` / ``CL``; tab-, comma- or whitespace-separated by the header).

    Unknown ids, unknown kinds and contradictions (a pair both must-link and
    cannot-link, directly or through the must-link closure) are one-line
    :class:`SupervisionError` / :class:`InputError` naming them. Returns indices into
    ``sample_ids``.
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{where}: constraints file not found: {path}")
    import csv

    try:
        if not path.read_text(errors="replace").strip():
            raise pd.errors.EmptyDataError
        df = pd.read_csv(path, sep=None, engine="python", dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise InputError(f"{where}: constraints file {path} is empty (expected columns sample_a, sample_b, kind)") \
            from None
    except (pd.errors.ParserError, csv.Error) as e:
        raise InputError(f"{where}: cannot parse constraints file {path}: {str(e).strip()}") from None
    df.columns = [str(c).strip() for c in df.columns]
    missing = [c for c in ("sample_a", "sample_b", "kind") if c not in df.columns]
    if missing:
        raise InputError(
            f"{where}: constraints file {path} lacks column(s) {', '.join(missing)} "
            f"(expected sample_a, sample_b, kind; found {', '.join(map(str, df.columns))})"
        )
    df = df.apply(lambda c: c.str.strip())
    kind = df["kind"].str.upper()
    bad = ~kind.isin(["ML", "CL"])
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise InputError(
            f"{where}: constraints file {path} line {i + 2}: kind must be ML or CL, got {df['kind'].iat[i]!r}"
        )
    ids = pd.Index([str(s) for s in sample_ids])
    pos = pd.Series(np.arange(ids.size), index=ids)
    for col in ("sample_a", "sample_b"):
        unknown = ~df[col].isin(ids)
        if unknown.any():
            names = pd.unique(df.loc[unknown, col])
            raise SupervisionError(
                f"{where}: constraints file {path}: {names.size} unknown sample id(s) in {col} "
                f"(e.g. {', '.join(repr(v) for v in names[:3])}); ids must be sample names of the data"
            )
    a, b = pos[df["sample_a"]].to_numpy(), pos[df["sample_b"]].to_numpy()
    same = a == b
    if same.any():
        raise SupervisionError(f"{where}: constraints file {path} pairs sample {ids[a[same][0]]!r} with itself")
    ml = np.column_stack([a, b])[(kind == "ML").to_numpy()]
    cl = np.column_stack([a, b])[(kind == "CL").to_numpy()]
    cons = Constraints(ml, cl)
    check_consistent(cons, ids, where=f"{where}: constraints file {path}")
    return cons


def check_consistent(cons: Constraints, names=None, *, where: str = "constraints") -> None:
    """Refuse a cannot-link pair whose samples are must-linked, directly or through the
    must-link closure, naming the samples (``names[i]``; indices when None)."""

    def nm(i):
        return repr(str(names[i])) if names is not None else str(int(i))

    if not cons.cl.size or not cons.ml.size:
        return
    n = int(max(cons.ml.max(), cons.cl.max())) + 1
    A = sparse.coo_matrix((np.ones(len(cons.ml)), (cons.ml[:, 0], cons.ml[:, 1])), shape=(n, n))
    from scipy.sparse.csgraph import connected_components

    _, comp = connected_components(A, directed=False)
    clash = comp[cons.cl[:, 0]] == comp[cons.cl[:, 1]]
    if clash.any():
        i, j = cons.cl[clash][0]
        direct = _intersect_rows(cons.ml, cons.cl[clash][:1]).size > 0
        group = np.flatnonzero(comp == comp[i])
        how = "directly" if direct else (
            "through the must-link closure (group " + ", ".join(nm(g) for g in group[:6])
            + (" ..." if group.size > 6 else "") + ")")
        raise SupervisionError(
            f"{where}: contradictory constraints: {nm(i)} and {nm(j)} are cannot-link but must-link {how}"
            f" ({int(clash.sum())} such pair(s))"
        )


class LabelConstraints(Constraints):
    """All pairs of labeled samples, held as the labels themselves (issue 16): ``ml`` / ``cl``
    are built (O(n_labeled^2)) only when a method reads them; counts, the samples involved,
    validation and subsets cost O(n). Methods with closed forms read ``labels`` instead:
    a sum over the must-link pairs of class c is n_c sum f^2 - (sum f)^2 (per-class sums)."""

    def __init__(self, y):
        y = np.array(y, dtype=np.int64).ravel()
        lab = np.flatnonzero(y >= 0)
        if lab.size < 2:
            y = np.full(y.shape, -1, dtype=np.int64)  # one labeled sample gives no pair
        object.__setattr__(self, "labels", y)
        object.__setattr__(self, "_pairs", None)

    def _materialise(self) -> Constraints:
        if self._pairs is None:
            object.__setattr__(self, "_pairs", Constraints.pairs_from_labels(self.labels))
        return self._pairs

    @property
    def ml(self) -> np.ndarray:  # type: ignore[override]
        return self._materialise().ml

    @property
    def cl(self) -> np.ndarray:  # type: ignore[override]
        return self._materialise().cl

    def class_counts(self) -> np.ndarray:
        """Number of labeled samples per class code 0..max (0 for absent codes)."""
        lab = self.labels[self.labels >= 0]
        return np.bincount(lab) if lab.size else np.zeros(0, dtype=np.int64)

    @property
    def n_ml(self) -> int:
        c = self.class_counts().astype(np.int64)
        return int((c * (c - 1) // 2).sum())

    @property
    def n_cl(self) -> int:
        c = self.class_counts().astype(np.int64)
        total = int(c.sum())
        return int((total * total - int((c * c).sum())) // 2)

    def __len__(self) -> int:
        return self.n_ml + self.n_cl

    def __repr__(self) -> str:
        return f"LabelConstraints({int((self.labels >= 0).sum())} labeled: {self.n_ml} ML, {self.n_cl} CL pairs)"

    def __eq__(self, other):
        if isinstance(other, LabelConstraints):
            return np.array_equal(self.labels, other.labels)
        if isinstance(other, Constraints):
            return np.array_equal(self.ml, other.ml) and np.array_equal(self.cl, other.cl)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def samples(self) -> np.ndarray:
        return np.flatnonzero(self.labels >= 0)

    def tsv_frame(self) -> pd.DataFrame:
        """One row per labeled sample (``i``, its class code ``j``, kind ``class``) instead of the
        n_labeled^2 / 2 pairs; :meth:`Constraints.from_tsv` reads it back as these constraints."""
        import pandas as pd  # lazy: pandas is I/O only, not on a method's path

        i = self.samples()
        return pd.DataFrame({"i": i, "j": self.labels[i], "kind": "class"})

    def validate(self, n: int) -> Constraints:
        if self.labels.size != int(n) and (self.labels >= 0).any() and self.samples().max() >= n:
            raise SupervisionError(
                f"labels of {self.labels.size} samples give constraints on samples outside 0..{n - 1}")
        return self  # pairs from labels never contradict each other

    def subset(self, idx: np.ndarray) -> Constraints:
        idx = np.asarray(idx, dtype=np.int64)
        if np.unique(idx).size != idx.size:
            return self._materialise().subset(idx)
        ok = idx < self.labels.size
        return LabelConstraints(np.where(ok, self.labels[np.minimum(idx, self.labels.size - 1)], -1))

    def transitive_closure(self, n: int | None = None) -> Constraints:
        return self  # classes are already cliques, and every pair of classes is cannot-linked


def _intersect_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    dt = np.dtype([("i", np.int64), ("j", np.int64)])
    av = np.ascontiguousarray(a, dtype=np.int64).view(dt).ravel()
    bv = np.ascontiguousarray(b, dtype=np.int64).view(dt).ravel()
    return np.intersect1d(av, bv).view(np.int64).reshape(-1, 2)

"""What a simulation returns: the data and its truth (classes, planted markers, their effects)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from ..singlecell import normalize_log1p


def as_generator(rng) -> np.random.Generator:
    """``rng`` itself if it is a Generator, else ``numpy.random.default_rng(rng)``."""
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


@dataclass
class Simulation:
    """A simulated dataset and its truth.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix or numpy.ndarray
        Samples x genes. ``kind == "counts"``: raw counts (CSR, float64; normalise them
        with :meth:`expression`); ``kind == "microarray"``: dense log-scale expression.
    classes : numpy.ndarray
        True class (cell type) of every sample, int codes ``0 .. n_classes - 1``.
    membership : numpy.ndarray
        Boolean ``(n_classes, n_genes)``: ``membership[k, g]`` when gene g is a planted
        marker of class k (a shared marker is a member of two classes).
    effect : numpy.ndarray
        Float ``(n_classes, n_genes)``, 0 off the markers: the natural-log fold change of
        the mean count (counts) or the mean shift in units of the gene's sd (microarray).
    kind : str
        ``"counts"`` or ``"microarray"``.
    batch : numpy.ndarray
        Batch of every sample (all 0 with one batch).
    knobs : dict
        The generator's arguments (without ``rng``), for the record.
    """

    X: sparse.csr_matrix | np.ndarray
    classes: np.ndarray
    membership: np.ndarray
    effect: np.ndarray
    kind: str
    batch: np.ndarray
    knobs: dict = field(default_factory=dict)

    @property
    def n_classes(self) -> int:
        return int(self.membership.shape[0])

    @property
    def cell_type(self) -> np.ndarray:
        """Alias of :attr:`classes` (single-cell vocabulary)."""
        return self.classes

    @property
    def markers(self) -> np.ndarray:
        """Every planted marker gene, sorted (a shared marker once)."""
        return np.flatnonzero(self.membership.any(axis=0))

    def markers_of(self, k: int) -> np.ndarray:
        """The marker genes of class ``k``, sorted."""
        return np.flatnonzero(self.membership[k])

    def expression(self, target_sum: float = 1e4):
        """What an analysis reads: counts library-size normalised to ``target_sum`` and
        log1p-transformed (scanpy's ``normalize_total`` + ``log1p``; CSR), microarray
        values as they are."""
        return normalize_log1p(self.X, target_sum) if self.kind == "counts" else self.X

    def recall(self, order, top: int | None = None) -> float:
        """Share of the planted markers among the first ``top`` genes of ``order``
        (``top`` defaults to the number of markers: recall = precision at that size)."""
        mk = self.markers
        top = mk.size if top is None else int(top)
        return float(np.isin(mk, np.asarray(order)[:top]).sum() / mk.size)

    def to_anndata(self):
        """AnnData with ``X`` as simulated, ``obs['cell_type']`` (and ``obs['batch']`` when
        there are batches) and ``var['marker_of']`` (the first class a gene marks, -1 for
        other genes)."""
        import anndata as ad
        import pandas as pd

        obs = pd.DataFrame({"cell_type": pd.Categorical(self.classes.astype(str))},
                           index=[f"cell{i}" for i in range(self.X.shape[0])])
        if self.batch.any():
            obs["batch"] = pd.Categorical(self.batch.astype(str))
        marked = self.membership.any(axis=0)
        var = pd.DataFrame({"marker_of": np.where(marked, self.membership.argmax(axis=0), -1)},
                           index=[f"gene{j}" for j in range(self.X.shape[1])])
        return ad.AnnData(X=self.X, obs=obs, var=var)

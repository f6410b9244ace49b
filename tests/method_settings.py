"""Per-method settings that keep one call in milliseconds on the small data of the
registry-driven tests (tests/methods/test_contract.py, the numerics rows of tests/test_faults_table.py)."""

from __future__ import annotations

#: ``p`` = number of features; the random-subspace ensembles draw every feature
FAST = {
    "bcs": lambda p: {"n_bags": 4},
    "bootstrap_rank": lambda p: {"n_boot": 3},
    "efsis": lambda p: {"n_boot": 3},
    "enscls": lambda p: {"n_members": 3, "subspace": p},
    "ssfi": lambda p: {"n_members": 3, "subspace": p, "max_iter": 2},
    "rf": lambda p: {"n_estimators": 10},
    "fwsemifs": lambda p: {"sampling_times": 3, "max_iterations": 2, "cv": 2},
    "csfsr": lambda p: {"h": min(6, p)},
    "pca": lambda p: {"n_components": min(3, p)},
    "ssdr": lambda p: {"n_components": min(3, p)},
    "l2gfs": lambda p: {"n_init": 2},
    "wckm": lambda p: {"n_init": 2},
    "mrmr": lambda p: {"n_features": min(6, p)},
}


def fast_settings(name: str, p: int) -> dict:
    """The parameters of :data:`FAST` for method ``name`` on ``p`` features (none for most)."""
    return FAST.get(name, lambda p: {})(p)


def former_graphs(p: int) -> dict:
    """``propagate``'s graphs before session 37 on ``p`` features: 15 neighbours, and the refined graphs on 10 % of
    the genes within 100-500 whatever the number of samples. The cases the later rules were found on keep them
    (docs/labels_that_count.md, "Neighbours and genes for small studies": the defaults now adapt to small studies)."""
    from ssfs.methods.propagate import refine_genes

    return {"k": 15, "genes": refine_genes("auto", p)}

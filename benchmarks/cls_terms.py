"""Why the papers' CLS degrades as labels are added: its terms, measured (docs/semi_supervised.md, part 1).

    python benchmarks/cls_terms.py            # 3,000 cells x 1,000 genes, fold change 4, raw-gene graph

Prints, for 3 and 20 labeled cells per type, the medians (planted markers / other genes) of
the four terms of the literal CLS (kNN-graph numerator, must-link numerator, variance
denominator over the unlabeled cells, cannot-link denominator), then the fraction of the
planted markers in the top 100 for the literal CLS (both kNN readings) and the balanced
default, all on the raw-gene graph (``space="raw"``).
"""

from __future__ import annotations

import numpy as np

from ssfs import run_method
from ssfs.constraints import Constraints
from ssfs.methods._shared.cls import cls_denominator
from ssfs.methods._shared.graph import (
    constrained_graph,
    degree,
    heat_kernel_graph,
    laplacian_quad,
    pair_weights,
    pairs_matrix,
)
from ssfs.simulate import few_labels, simulate_singlecell


def main() -> None:
    n = 3000
    X, sim = simulate_singlecell(n, 1000, 5, 20, 0)
    mk = sim.markers.ravel()
    is_mk = np.zeros(X.shape[1], bool)
    is_mk[mk] = True
    S0, t = heat_kernel_graph(X, k=10)
    print(f"bandwidth {t:.4g}, mean kNN edge weight {S0.data.mean():.2f}")
    for per in (3, 20):
        y = few_labels(sim.cell_type, per, 1)
        c = Constraints.pairs_from_labels(y)
        w = pair_weights(X, c.ml, t)
        S, _ = constrained_graph(X, c, k=10)
        d = degree(S)
        ml = pairs_matrix(c.ml, n, w)
        terms = {
            "graph numerator": laplacian_quad(S - S.multiply(ml > 0), X),
            "ML numerator": laplacian_quad(ml, X),
            "variance denominator": cls_denominator(X, d, c.unconstrained(n), np.zeros((0, 2), int)),
            "CL denominator": cls_denominator(X, d, np.zeros(n, bool), c.cl),
        }
        terms["score"] = (terms["graph numerator"] + terms["ML numerator"]) / (
            terms["variance denominator"] + terms["CL denominator"])
        print(f"{per} labeled per type: {c.n_ml} ML, {c.n_cl} CL pairs, mean ML weight {w.mean():.2f}")
        for name, v in terms.items():
            print(f"  {name:<22} markers {np.median(v[is_mk]):.3g}  others {np.median(v[~is_mk]):.3g}")
    print("labeled/type  literal  literal(knn_edges=unlabeled)  balanced")
    for per in (1, 3, 10, 20):
        y = few_labels(sim.cell_type, per, 1)
        got = [np.isin(run_method("cls", X, y, space="raw", **kw).order[:mk.size], mk).mean()
               for kw in ({"weights": "literal"}, {"weights": "literal", "knn_edges": "unlabeled"}, {})]
        print(f"{per:>12}  " + "  ".join(f"{v:.2f}" for v in got))


if __name__ == "__main__":
    main()

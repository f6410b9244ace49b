"""Table 4.3's protocol: constrained clustering scored on held-out samples."""

import numpy as np
import pytest

from ssfs.experiment.constrained import compare_constrained


def test_compare_constrained_on_separated_blobs():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 30)
    X = np.array([[0, 0], [8, 0], [0, 8]])[y] + rng.normal(0, 0.5, (90, 2))
    out = compare_constrained(X, y, np.random.default_rng(1), labeled_per_class=3)
    assert len(out) == 6 and set(out.setting) == {"unconstrained", "constrained"}
    assert (out.n_heldout == 81).all() and (out.n_constraints == 36).all()  # 9 labeled: 9 * 8 / 2 pairs
    assert out.rand.to_numpy() == pytest.approx(1.0)  # every algorithm finds well-separated blobs

"""ssfs.pl: the stability path and the dot plot of ssfs.tl.select_stable's results (issue #29 item 6)."""

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection

import ssfs
from ssfs.errors import InputError


@pytest.fixture(scope="module")
def selected():
    """Planted data: gene g0 marks class b, g1 class c (+3 sd), 28 noise genes; 40 % labeled."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 30))
    cls = np.repeat([0, 1, 2], 20)
    X[cls == 1, 0] += 3
    X[cls == 2, 1] += 3
    lab = np.array(["a", "b", "c"])[cls].astype(object)
    lab[rng.random(60) < 0.6] = np.nan
    import anndata as ad

    adata = ad.AnnData(X, var=pd.DataFrame(index=[f"g{i}" for i in range(30)]))
    adata.obs["t"] = pd.Categorical(lab)
    ssfs.tl.select_stable(adata, groupby="t", resamples=6, methods=["fisher", "laplacian"])
    return adata


def test_stability_path_draws_the_selected_features_in_colour(selected, tmp_path):
    assert sorted(selected.uns["ssfs_selection"]["features"]) == ["g0", "g1"]
    fig = ssfs.pl.stability_path(selected, path=tmp_path / "path.svg")
    gids = {ln.get_gid() for ax in fig.axes for ln in ax.get_lines()}
    assert {"g0", "g1"} <= gids
    assert "other:g5" in gids
    assert (tmp_path / "path.svg").read_text().lstrip().startswith("<?xml")


def test_dotplot_rows_are_the_selected_features_by_class(selected, tmp_path):
    fig = ssfs.pl.dotplot(selected, path=tmp_path / "dots.png")
    dots = [c for ax in fig.axes for c in ax.collections if isinstance(c, PathCollection) and c.get_gid() == "dots"]
    assert len(dots) == 1
    assert len(dots[0].get_offsets()) == 2 * 3  # 2 features x 3 classes
    assert (tmp_path / "dots.png").read_bytes()[:4] == b"\x89PNG"
    assert selected.var.loc["g0", "ssfs_selection_marks"] == "b"
    assert selected.var.loc["g1", "ssfs_selection_marks"] == "c"


def test_plots_refuse_in_one_line(selected):
    with pytest.raises(InputError, match=r"adata.uns\['other'\] holds no stable selection"):
        ssfs.pl.stability_path(selected, key="other")
    with pytest.raises(InputError, match="g99 are not among"):
        ssfs.pl.dotplot(selected, features=["g0", "g99"])

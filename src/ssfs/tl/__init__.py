"""scanpy-style tools: the features of an AnnData ranked by one method
(:func:`rank_features`) or selected stably by several (:func:`select_stable`).

>>> import ssfs
>>> ssfs.tl.rank_features(adata, "cls", groupby="cell_type", k=15)
>>> adata.var["cls_score"], adata.var["cls_rank"], adata.uns["cls"]
>>> ssfs.tl.rank_features(adata, "propagate", groupby="cell_type")   # + per-class markers
>>> ssfs.tl.markers_df(adata, "B cell")    # as scanpy.get.rank_genes_groups_df
>>> ssfs.tl.select_stable(adata, groupby="cell_type")   # propagate, laplacian, fisher, cls
>>> adata.var["ssfs_selection_selected"], adata.uns["ssfs_selection"]["features"]

As in scanpy: labels come from an ``obs`` column (NaN = unlabeled), the expression from
``adata.raw`` when it exists (``use_raw``, as :func:`scanpy.tl.rank_genes_groups`), else
``X`` or a ``layer``; results go to ``adata.var`` (per gene) and ``adata.uns[key]`` (what was
done, with which labels), and ``copy=True`` returns a new AnnData. A sparse matrix stays
sparse. 10x Genomics output is read with scanpy first
(``adata = sc.read_10x_mtx("filtered_feature_bc_matrix/")`` or ``sc.read_10x_h5``); the
command line reads it directly (``ssfs select filtered_feature_bc_matrix/ --labels-file
labels.csv``).
"""

from ._markers import markers_df
from ._rank import rank_features
from ._select import select_stable

__all__ = ["markers_df", "rank_features", "select_stable"]

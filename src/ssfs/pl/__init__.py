"""scanpy-style plots of :func:`ssfs.tl.select_stable`'s results, read from the AnnData.

>>> ssfs.tl.select_stable(adata, groupby="cell_type")
>>> ssfs.pl.stability_path(adata)                 # selection frequency against q
>>> ssfs.pl.dotplot(adata, path="dotplot.svg")    # the selected genes by class

Both return a :class:`matplotlib.figure.Figure` (no pyplot state: show it in a notebook by
evaluating it, or write it with ``path``); they draw what the report and ``ssfs select``
draw (:func:`ssfs.report.figures.stability_path`, :func:`ssfs.report.figures.dotplot`).
"""

from ._selection import dotplot, stability_path

__all__ = ["dotplot", "stability_path"]

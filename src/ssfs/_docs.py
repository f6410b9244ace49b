"""Parameter text shared by the public API's docstrings and the command line's help (as
scanpy's ``_docs``): one wording per parameter, whatever the door.

:data:`TEXT` holds each parameter's description once; :data:`PARAMS` makes numpydoc entries
of them (name line, description wrapped and indented), and the command line's options take
the same sentences as their help. A docstring holds a line ``{name}`` (alone, indented as a
parameter entry) where an entry belongs; :func:`doc_params` replaces it, indented the same,
when the module is imported. An unknown name is a KeyError at import, so a typo cannot
reach the rendered docs.

>>> @doc_params
... def f(adata, groupby=None):
...     '''Parameters
...     ----------
...     {groupby}
...     '''
"""

from __future__ import annotations

import inspect
import re
import textwrap

#: what makes a sample unlabeled, at every door
UNLABELED = ("A sample is unlabeled when its label is missing (None, NaN, a missing category, a blank "
             "or NA cell) or -1 in integer codes (scikit-learn's semi-supervised convention).")

#: each parameter's description, once (numpydoc entries below; the CLI's help reuses them)
TEXT: dict[str, str] = {
    "adata": "The annotated data matrix (cells or samples x genes or features).",
    "method": "A registered method's name (``ssfs methods`` lists them with what each needs and its "
              "parameters). Default ``propagate``, the semi-supervised score that beat the label-free and the "
              "labels-only tools on held-out data (docs/labels_that_count.md).",
    "method_params": "The method's parameters (``ssfs methods -v``; e.g. ``k=15`` for ``cls``), checked against "
                     "their declared types and ranges: a wrong name or value is a "
                     ":class:`~ssfs.errors.MethodError` naming the accepted ones.",
    "y": "Class labels of the samples: integer codes, or class names (strings, a pandas Categorical or "
         f"Series). {UNLABELED} Error messages and outputs name the classes.",
    "unlabeled_values": 'Label values meaning "no label" besides the missing ones (None, NaN; blank and NA '
                        "cells always mean unlabeled), compared as text (e.g. unknown, -1).",
    "constraints": "A :class:`ssfs.Constraints` (must-link / cannot-link pairs of sample indices); default: "
                   "the pairs of the labeled samples (same class: must-link, different classes: cannot-link).",
    "labeled": "How the labeled samples enter the resamples: ``split`` between the halves like the others, "
               "``rotated`` (only the unlabeled samples halved; every resample holds the labeled samples but a "
               "few of each class, left out in turn, so that no chance pattern of one labeled sample reaches the "
               "threshold), ``shared`` by every resample (the error bound then holds given the labels), or "
               "``auto``: with fewer than 10 labels in the smallest class, at least as many unlabeled samples, "
               "50 samples or more and methods ``auto`` or propagate, decided by the weight propagate gives the "
               "propagated samples on all samples: 0.5 or more (the graph carries the classes) shared from 150 "
               "samples and rotated below, less rotated from 150 samples and split below; split otherwise "
               "(:func:`ssfs.experiment.selection.labeled_resampling`).",
    "random_state": "The seed of every random choice (resamples, tie-breaking among equal scores): the same "
                    "seed gives the same result, whatever the number of threads.",
    "groupby": f"The ``adata.obs`` column of the class labels. {UNLABELED} None: no labels (label-free "
               "methods only).",
    "use_raw": "Rank ``adata.raw.X`` (genes ``adata.raw.var_names``) instead of ``adata.X``. Default (None): "
               "True when ``adata.raw`` exists and no ``layer`` is given, as scanpy's "
               ":func:`~scanpy.tl.rank_genes_groups` (which tests the log-normalised expression kept in "
               "``.raw``, not the scaled ``X``). True together with ``layer`` is an error.",
    "layer": "Rank ``adata.layers[layer]`` instead of ``adata.X`` (then ``use_raw`` defaults to False).",
    "batch_key": "The ``adata.obs`` column of every cell's batch (sample, donor, run), or None. The methods "
                 "with a ``batch`` parameter (``propagate``) then compare cells within batches (as scanpy's "
                 "``batch_key``); methods whose scores ignore a feature's offset (``fisher``, ``laplacian``, "
                 "``cls`` ...) rank the data centred within batches; the others rank it as given, with a "
                 "warning (:func:`ssfs.runner.within_batches`).",
    "graph": "The cell graph of the graph-based scores (the methods with a ``graph`` parameter: "
             '``laplacian``, ``cls``). ``"auto"``: ``adata.obsp["connectivities"]`` '
             '(:func:`scanpy.pp.neighbors`) when present, else a kNN graph (the method\'s ``k``) on '
             '``adata.obsm["X_pca"]`` when present, else the method\'s own kNN graph in gene space; an '
             "``obsp`` key: that graph; None: the method's own graph. The heat-kernel weights are computed "
             "in gene space on the graph's edges.",
    "key_added": "The key of the results in ``adata.uns`` and the prefix of the ``adata.var`` columns.",
    "copy": "Return a modified copy of ``adata`` instead of writing into it.",
    "show": "Show the figure (default: when ``save`` and ``ax`` are not given, as scanpy's plots).",
    "save": "Write the figure to this file (its suffix gives the format: .png, .pdf, .svg).",
    "ax": "A matplotlib Axes to draw into (then the figure is neither shown nor saved).",
}
#: the parameter name a numpydoc entry shows, where it differs from the TEXT key
_SHOWN = {"method_params": "**params"}


def _entry(name: str, shown: str | None = None) -> str:
    body = textwrap.fill(TEXT[name], width=88, initial_indent="    ", subsequent_indent="    ",
                         break_on_hyphens=False, break_long_words=False)
    return f"{shown or _SHOWN.get(name, name)}\n{body}"


#: numpydoc entries: ``name`` line, then the description wrapped and indented by 4 spaces
PARAMS: dict[str, str] = {name: _entry(name) for name in TEXT}


def cli_help(name: str) -> str:
    """:data:`TEXT` ``[name]`` for an option's help: without reST markup, first letter lower case."""
    text = plain(TEXT[name])
    return text[0].lower() + text[1:]


_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)\{(?P<name>\w+)(?:=(?P<shown>\w+))?\}[ \t]*$", re.MULTILINE)


def fill(doc: str, entries: dict[str, str] | None = None) -> str:
    """``doc`` with every ``{name}`` line replaced by ``entries[name]`` (default :data:`PARAMS`),
    indented as the placeholder; ``{name=other}`` shows the entry under the name ``other``
    (``{method=name}`` for a function whose parameter ``name`` is a method)."""
    entries = PARAMS if entries is None else entries

    def indented(m) -> str:
        text = entries[m["name"]] if not m["shown"] else _entry(m["name"], m["shown"])
        return "\n".join(m["indent"] + line if line else line for line in text.splitlines())

    return _PLACEHOLDER.sub(indented, doc)


def doc_params(obj):
    """Decorator: fill the ``{name}`` lines of ``obj``'s docstring (:func:`fill`)."""
    if obj.__doc__:
        obj.__doc__ = fill(obj.__doc__)
    return obj


# ------------------------------------------------------------ registered methods' parameters
#: the arguments every registered method takes (``run_method`` checks and converts them first)
METHOD_ARGS = {
    "X": ("array-like or sparse matrix of shape (n_samples, n_features)",
          "The data, samples as rows (checked and converted by :func:`ssfs.run_method`)."),
    "y": ("numpy.ndarray of int of shape (n_samples,)",
          "Class codes 0 .. C-1, -1 for an unlabeled sample (:func:`ssfs.run_method` encodes names)."),
    "constraints": ("ssfs.Constraints", "Must-link and cannot-link pairs of sample indices (derived from the "
                                        "labels when none are given)."),
    "rng": ("numpy.random.Generator", "The source of every random choice (derived from the seed)."),
}

#: the description of every registered method's parameters, once: the registry renders each
#: method's numpydoc Parameters section from its annotations (type, range, default) and this text,
#: and ``ssfs methods -v`` prints the same text. A plain key (``"k"``) is shared by every method
#: with that parameter; ``"method.param"`` words a parameter that means something else in one method.
#: A method whose docstring has its own Parameters section is described there, one entry per parameter.
METHOD_TEXT: dict[str, str] = {
    # ------------------------------------------------ graphs (spectral scores, csfs, sselect, ...)
    "k": "The number of nearest neighbours of each sample in the kNN graph.",
    "bandwidth": "The heat-kernel parameter t of the graph's edge weights exp(-d^2 / t): a number, or "
                 '"auto" / "mean" (the mean squared kNN distance) or "median" (its median).',
    "space": 'Where the kNN graph is built: "raw" (the features), "pca" (``n_pcs`` principal components) or '
             '"auto" (PCA when the input is single-cell-like: sparse, non-negative, non-integer, >= 500 '
             "samples).",
    "n_pcs": "The number of principal components the graph is built on (``space`` \"pca\").",
    "embedding": "A precomputed embedding (n_samples rows, e.g. scanpy's ``obsm['X_pca']``) to build the "
                 "kNN graph on, instead of ``space``.",
    "graph": "A precomputed graph (n_samples x n_samples connectivities, e.g. scanpy's "
             "``obsp['connectivities']``) instead of the method's kNN graph; its heat-kernel weights are "
             "measured on the features.",
    "laplacian.use_labels": "Add the must-link pairs to the kNN graph (the thesis's semi-supervised Laplacian "
                            "score, eq. 2.5).",
    "laplacian.symmetric": "Join i and j when either is among the other's k nearest neighbours (True), or only "
                           "when j is among i's (False: the directed graph whose Iris orderings match the "
                           "thesis's 3.6.2 and He et al.'s).",
    # ------------------------------------------------ the labels' weight against the graph
    "weights": '"balanced" (each labeled sample contributes one mean over its must-link / cannot-link '
               'partners, the labels\' share set by ``label_weight``) or "literal" (the paper\'s all-pairs '
               "terms).",
    "c4.weights": '"balanced" (the weighted geometric mean LS^(1-s) x C1^s, C1 per constrained sample, s the '
                  'labels\' share set by ``label_weight`` or ``label_share``) or "literal" (the paper\'s product '
                  "LS x C1, eq. 7).",
    "label_weight": "The weight w of a labeled sample against an unlabeled one: the labels' share is "
                    "s = w m / (w m + n), m labeled samples of n (``weights`` \"balanced\").",
    "label_share": "The labels' share s itself, in [0, 1] (None: from ``label_weight``).",
    # ------------------------------------------------ constrained Laplacian scores (cls, csfs, enscls)
    "mean": 'The centre mu of a feature in the denominator: "uniform" (the plain mean, thesis eq. 2.7) or '
            '"degree" (the degree-weighted mean, eq. 3.9).',
    "som": "Replace the samples that are neither labeled nor constrained by the reference vectors of a "
           "self-organising map trained on them (thesis 3.3.2) before scoring.",
    "knn_edges": '"all" (kNN edges between any two samples) or "unlabeled" (EnsCLS eq. 2 literally: kNN edges '
                 "only among the samples in no constraint, which must-link edges alone join to the others).",
    "denominator": '"variance" (cannot-link pairs plus every unconstrained sample\'s deviation from mu, EnsCLS '
                   'eq. 1 with alpha of eq. 3) or "cannot_link" (eq. 1 / 3 literally: the cannot-link terms '
                   "only; the variance form when there is no cannot-link pair).",
    # ------------------------------------------------ constraint scores
    "c3.gamma": "The weight gamma of a must-link pair in the within-class graph S^W (constraint-score paper "
                "eq. 5; a kNN edge touching an unconstrained sample weighs 1).",
    "lam": "The weight lambda of the cannot-link sum in constraint score 2, sum_ML - lambda sum_CL (eq. 2.18).",
    "scale": 'The unit of the constraint score 2 difference: each feature\'s variance over the constrained '
             'samples ("constrained"), over all samples ("all"), or none ("none": the literal eq. 2.18, which '
             "ranks low-variance features first).",
    "n_bags": "The number of bootstrap bags of the must-link and of the cannot-link set (Algorithm 5).",
    "bcs.base": 'The constraint score of each bag: "cs1" (eq. 2.17) or "cs2" (eq. 2.18, with ``lam`` and '
                "``scale``).",
    # ------------------------------------------------ csfs, csfsr
    "neighbourhood": '"adaptive" (the samples of the same cluster of a Ward clustering cut where the '
                     'Davies-Bouldin index is best, thesis 3.4.4) or "knn" (the ``k`` nearest neighbours).',
    "csfs.k": 'The number of nearest neighbours of each sample (``neighbourhood`` "knn").',
    "csfsr.k": 'The number of nearest neighbours of each sample (``neighbourhood`` "knn").',
    "select_constraints": "Keep only the coherent constraints (thesis eq. 3.15-3.17, Algorithm 9) before "
                          "scoring.",
    "csfs.select_constraints": "Keep only the coherent constraints (thesis eq. 3.15-3.17, Algorithm 9) before "
                               'scoring (None: only with ``weights`` "literal", the thesis\'s reading).',
    "max_clusters": "The largest number of clusters the adaptive neighbourhood tries (None: floor(sqrt(n)); "
                    '``neighbourhood`` "adaptive").',
    "h": "The number of best features by the CSFS score that the redundancy tree is built on (never more "
         "than n, thesis 3.8.5).",
    "csfsr.relevance": '"permutation" (keep the features whose score phi beats that of row-permuted shadow '
                       'copies of them) or "all" (the ``h`` features as they are, Algorithm 12 literally).',
    "relevance_z": "How many robust standard deviations (1.4826 MAD) a feature's phi must lie below the "
                   "shadows' median to count as relevant.",
    "relevance_quantile": "The shadows' quantile of the second relevance rule: the features whose phi is below "
                          "it, used when they far outnumber those the ``relevance_z`` rule keeps.",
    "relevance_blocks": "The number of groups the shadow copies are permuted in: the graph is rebuilt once per "
                        "group, so each rebuild loses 1 / blocks of the pool's structure.",
    "redundancy_alpha": "The independence level: tree edges whose mutual information (eq. 3.31) is below the "
                        "(1 - alpha) quantile of its null under independence are cut before the elimination "
                        "(0: none is cut, the literal reading).",
    # ------------------------------------------------ ensembles (enscls, ssfi, efsis, bootstrap_rank)
    "enscls.n_members": "The committee size N (None: EnsCLS eq. 4).",
    "ssfi.n_members": "The committee size N (None: the SSFI paper's eq. 1).",
    "subspace": "The number of random features each member draws (None: sqrt(p), rounded).",
    "average": 'The divisor of a feature\'s summed member scores: the committee size N ("committee", the '
               'papers\' algorithm) or the number of members that scored the feature ("members").',
    "enscls.som": "Replace each member's unlabeled samples by the reference vectors of a self-organising map "
                  "(thesis 3.3.2; at most ``som_nodes`` nodes).",
    "som_nodes": "The maximum number of nodes of each member's self-organising map (None: sqrt(u), u the member's "
                 "unlabeled samples).",
    "bootstrap": '"rows" (each drawn copy a row of its own, copies must-linked: EnsCLS Alg. 2 step 4) or '
                 '"unique" (each drawn sample once: the bootstrap as a set).',
    "enscls.space": 'The members\' graph: "subspace" (each member\'s kNN graph on its own random features, the '
                    'paper), "pca" (one graph on ``n_pcs`` principal components of all features, shared by '
                    'every member) or "auto" ("pca" with balanced members and no SOM, else "subspace").',
    "sample_size": "The growth rate n of a co-training round: each member adds max(1, round(n Pr_k)) of its "
                   "most confident samples of each class k (SSFI Alg. 1; paper: 1).",
    "ssfi.max_iter": "The maximum number of co-training rounds (SSFI Alg. 1; paper: 10); fewer when no member changed.",
    "min_samples_split": "The least number of samples a decision-tree node needs to be split (scikit-learn's "
                         "``min_samples_split``; 2: fully grown trees).",
    "max_depth": "The maximum depth of each decision tree (None: fully grown, as the paper's).",
    "n_estimators": "The number of trees (None: the SSFI paper's eq. 1 committee size, as SSFI's).",
    "max_features": 'The candidate features of each split (scikit-learn\'s: "sqrt", "log2", a number, or a '
                    "fraction of the features; None: all).",
    "rankers": "The registered rankers of the ensemble, a name or a list (the paper's: SAM, GeoDE, ReliefF "
               "and information gain).",
    "ranker_params": 'Each ranker\'s parameters by its name, e.g. {"relieff": {"k": 70}} (None: their '
                     "defaults), checked as that method's.",
    "n_boot": "The number of bootstrap resamples of the labeled samples (the same resamples for every ranker).",
    "efsis.top_percent": "The threshold t of the stability weights (eq. 1), in percent of the features (the "
                         "paper: 0.3 to 5); a list gives one final list per threshold.",
    "bootstrap_rank.top_percent": "The top t of each resample's ranking, in percent of the features, whose "
                                  "stability (EFSIS eq. 1) is reported in ``extra``; the ranking does not "
                                  "depend on it.",
    "efsis.weights": 'The weight of each ranker in the aggregate: "paper" (1 - its stability), '
                     '"stability_rank" (the rank of its stability) or "none" (equal weights).',
    "stratified": "Draw each bootstrap within each class, keeping the class sizes (the EFSIS code); False "
                  "draws from all labeled samples at once (the paper's text).",
    "bootstrap_rank.base": "The registered ranker run on every bootstrap resample.",
    "aggregate": '"product" (the rank product, as a sum of log ranks), "mean", "median" or "min" of each '
                 "feature's ranks over the resamples.",
    "base_params": "The parameters of ``base`` (None: its defaults), checked as that method's.",
    "n_jobs": "Threads (None: the job's threads, ``$SSFS_THREADS``); the result is the same whatever the "
              "number.",
    # ------------------------------------------------ feature weighting by clustering (wckm, l2gfs)
    "beta": "The exponent beta of the feature weights in the clustering objective (thesis eq. 4.4 / 4.24; "
            "-0.1 as in the thesis); a weight is proportional to E_j^(1 / (beta - 1)) (eq. 4.23 / 4.28).",
    "n_clusters": "The number of clusters K (None: the number of labeled classes, thesis Alg. 13 step 3).",
    "n_init": "The number of runs from random centroids and weights: the weights returned are their average, "
              "the clustering that of the run with the lowest objective (thesis 4.4.2).",
    "standardize_features": "Z-score every feature before clustering (off by default: eq. 4.23 as written "
                            "weights a feature by its raw within-cluster dispersion, wCKM module doc).",
    "wckm.max_iter": "The maximum number of alternating rounds (memberships, centroids, weights) of a run; "
                     "fewer when no membership moves by more than ``tol``.",
    "l2gfs.max_iter": "The maximum number of COP-KMeans rounds of a run; fewer when the assignment no longer "
                      "changes (thesis Lemma 4).",
    "tol": "The convergence threshold: a run stops when no membership moves by more than this.",
    "penalty": "The weight of a constraint violation in the memberships' penalty (eq. 4.12, theta_ML and "
               "theta_CL of eq. 4.4; 1 in the thesis).",
    # ------------------------------------------------ extraction (pca, ssdr)
    "pca.n_components": "The number of principal components kept (at most min(n - 1, p)).",
    "ssdr.n_components": "The number of projections kept, largest eigenvalue of X^T L X first (eq. 2.14).",
    "ssdr.alpha": "The weight alpha of the cannot-link pairs in S: alpha / |CL| on each (eq. 2.13; 1 in the "
                  "SSDR paper).",
    "ssdr.beta": "The weight beta of the must-link pairs in S: -beta / |ML| on each (eq. 2.13; 20 in the SSDR "
                 "paper).",
    # ------------------------------------------------ sselect
    "eta": 'The weight eta of the graph term against the label term (eq. 2.9), in [0, 1]; "auto": 1 - s, s '
           "the labels' share set by ``label_weight`` (0.1: the SSFI paper's setting).",
    "sselect.label_weight": 'The weight w of a labeled sample against an unlabeled one that sets ``eta`` "auto" '
                            "= 1 - w l / (w l + n), l labeled samples of n.",
    # ------------------------------------------------ fwsemifs (thesis Alg. 7)
    "size_fs": "The number of features selected (sizeFS; 10 in the SSFI paper).",
    "sampling_rate": "The fraction of the unlabeled samples added, with their predicted labels, in each "
                     "sampling (samplingRate; 0.5 in the SSFI paper).",
    "sampling_times": "The number of samplings per iteration, each followed by a forward selection of "
                      "``fnstep`` features (samplingTimes; 10 in the SSFI paper).",
    "fnstep": "The number of features each sampling's forward selection picks (6 in the SSFI paper).",
    "startfn": "The number of features chosen by forward selection on the labeled samples alone before the "
               "first iteration (5 in the SSFI paper).",
    "max_iterations": "The maximum number of iterations (None: 2 x ``size_fs``; the papers give no value).",
    "classifier": 'The classifier: "tree" (a decision tree, the SSFI paper\'s), "nb" (Gaussian naive Bayes) or '
                  '"knn" (1-nearest neighbour).',
    "prefilter": "The number of features with the highest ANOVA F statistic each forward selection considers.",
    "cv": "The number of stratified cross-validation folds of the forward selection's accuracy (capped by "
          "the smallest class).",
    # ------------------------------------------------ the EFSIS rankers and other baselines
    "geode.gamma": "The shrinkage gamma of the covariance estimate, S = gamma Dd + (1 - gamma) sigma I, in "
                   "[0, 1] (1: no shrinkage, as in EFSIS).",
    "min_var_share": "The least share of the total variance a principal component needs to be kept (GeoDE: "
                     "0.001).",
    "multiclass": 'More than two classes: the largest one-vs-rest |b_c| ("max") or their root mean square '
                  '("rms").',
    "discretize": '"mdl" (Fayyad & Irani\'s entropy cuts with the MDL stopping rule, as FSelectorRcpp) or '
                  '"equal_width" (``n_bins`` bins between the feature\'s min and max).',
    "infogain.n_bins": 'The number of equal-width bins (``discretize`` "equal_width").',
    "relieff.k": "The number of nearest hits and misses (per class) of each sample.",
    "weighting": '"equal" (each of the k neighbours weighs 1 / k) or "exprank" (CORElearn\'s exponential rank '
                 "weights exp(-(r / sigma)^2), normalised within each class).",
    "sigma": 'The width sigma of the "exprank" neighbour weights (20 as in the EFSIS code).',
    "miss_weights": '"prior" (miss class c weighs P(c) / (1 - P(y_i)), Kononenko\'s priors) or "neighbourhood" '
                    "(scikit-rebate's multi-class weights).",
    "instances": 'The samples whose neighbours are searched: "all" labeled samples, a random "sqrt" or "log" '
                 "of their number, or that many (drawn with the method's seed).",
    "ramp": "CORElearn's ramp (eq, diff): a difference counts 0 below eq x range and 1 above diff x range "
            "(None: the plain range-normalised difference).",
    "discrete_threshold": "Features with at most this many distinct values are compared by equality "
                          "(scikit-rebate's categorical_threshold; 0: every feature continuous).",
    "score": '"abs" (rank by |d|, as the EFSIS code) or "signed" (by d itself: with two classes, up in the '
             "larger class code first).",
    "s0": "The exchangeability factor s0 >= 0 added to each gene's standard deviation; \"auto\": samr's "
          "est.s0 (the percentile of the s_i minimising the coefficient of variation of d's spread across "
          "bins of s_i).",
    "n_features": "The number of features selected (at most p).",
    "mrmr.relevance": 'The relevance measure of ``mrmr.mrmr_classif`` ("f": the ANOVA F statistic, its '
                      "default).",
    "redundancy": 'The redundancy measure of ``mrmr.mrmr_classif`` ("c": the absolute Pearson correlation, its '
                  "default).",
    "flavor": '"seurat" (log data; expm1 inside) or "cell_ranger", scanpy\'s flavors that need no extra '
              "package.",
    "scanpy_hvg.n_bins": "The number of mean-expression bins the dispersions are normalised in (scanpy's).",
    "scanpy_rank_genes.method": 'scanpy\'s test: "t-test", "t-test_overestim_var" (t statistic) or "wilcoxon" '
                                "(z score).",
    "tie_correct": 'Correct the Wilcoxon z score for ties (scanpy\'s; ``method`` "wilcoxon").',
    # ------------------------------------------------ propagate (docs/labels_that_count.md)
    "propagate.k": 'The kNN graphs\' neighbours: a number, or "auto" = half an average labeled class, n / (2 K) for K '
                   "labeled classes, within 5-15 (never more than n - 1).",
    "propagate.n_pcs": "The most signal components a graph is built on (those above a permutation null: Horn 1965's "
                       "parallel analysis).",
    "propagate.refine": "How many times the graph is rebuilt on the ``genes`` features its groups explain best (0: the "
                        "start graph only).",
    "propagate.genes": 'The features each rebuilt graph is built on: a number, or "auto" = 10 % of the features '
                       "within 100-500 and at most one per sample.",
    "propagate.propagation": '"spread": local and global consistency, F* = (1 - alpha)(I - alpha S)^-1 Y, S = D^-1/2 '
                             'W D^-1/2 (Zhou et al. 2004, eq. 4); "harmonic": f_u = (D_uu - W_uu)^-1 W_ul f_l (Zhu '
                             "et al. 2003, eq. 5).",
    "propagate.alpha": 'Zhou et al.\'s alpha in (0, 1), the neighbours\' weight against the seed (0.99 as in the '
                       'paper; ``propagation`` "spread").',
    "propagate.class_mass": 'Class mass normalisation before the argmax (Zhu et al. 2003, section 4): priors q_c '
                            '"uniform", the labeled shares ("labeled"), or "none".',
    "propagate.unreached": "Samples the labels barely reach form groups of their own, so a type nobody labeled is not "
                           "forced into a labeled class.",
    "propagate.refine_samples": "The most samples the graph's rebuilding runs on (beyond: that many, the first in "
                                "content order; the kept genes then give the graph of all samples).",
    "propagate.graph": "The start graph's connectivities (n x n, e.g. scanpy's ``obsp['connectivities']``) instead "
                       "of a kNN graph of the signal components.",
    "propagate.embedding": "An embedding with one row per sample (e.g. scanpy's ``obsm['X_pca']``) whose kNN graph is "
                           "the start graph.",
    "propagate.weighting": 'The propagated samples\' weight (a labeled sample\'s: 1): "evidence" '
                           '(:func:`propagated_weight`), "kept_evidence" (the kept graph\'s evidence only) or '
                           '"coherence" (r shrunk towards the coherence).',
    "propagate.gene_choice": 'How the rebuilt graphs\' ``genes`` are chosen: "balanced" (half by R^2, half in turn '
                             'from every group\'s up-markers; with one label per class "total") or "total" (all by '
                             "R^2).",
    "propagate.label_free": 'The scores without labels (:func:`label_free_scores`): "auto" '
                            '(:func:`resolved_label_free`: "clusters", :func:`cluster_scores`, on counts), '
                            '"clusters", "autocorrelation", "residual", "moran", "signal" or "span".',
    "propagate.unexplained": '"interleave": on counts the features the groups explain (:func:`explained_features`), '
                             "a population's they miss (:func:`unseen_populations`), the label-free groups', then "
                             "the others in turn by R^2 and ``label_free`` (:func:`with_unexplained`; all labeled: "
                             'by R^2), on dense X where :func:`free_turns` says so; "r2": by R^2 alone.',
    "propagate.explained": 'With ``unexplained`` "interleave", the kept graph\'s own genes tested "crossfit" (each '
                           'half on a graph of the other half, :func:`crossfit_pvalues`), "same" (the former test) '
                           'or "auto" (:func:`_explained`).',
    "propagate.batch": "Every sample's batch, or None: graphs and R^2 within batches (module doc, point 5).",
    "propagate.counts": 'How counts are read: raw counts as log1p(counts per 10,000) ("auto"), any non-negative X '
                        'so ("log1p"), as they are ("as_is"); deep counts as log2(counts / size factor + theta) '
                        '("auto"; any counts: "deep", ``_shared.deep_counts``), tables with dropouts as ln(TPM + '
                        "m) (``_shared.dropouts``).",
    "propagate.space": 'The graphs\' space (:func:`count_model`): "residuals" (the counts\' Pearson residuals, '
                       'Lause et al. 2021) or "values" (the former); "auto": "residuals" for counts.',
    "propagate.gene_scale": 'The genes\' scale in the graphs of dense X: "standardized" (the former), "as_is" '
                            '(their own units) or "auto" (both compete, :func:`graph_scales`).',
    "propagate.sample_scale": 'The samples\' scale in the graphs of dense X: "as_is" (the former), "equal" (every '
                              'sample\'s profile scaled alike) or "auto" (both compete, :func:`graph_scales`).',
    "propagate.per_class": 'The groups\' up-markers taken in turn with the ranking: "none", all of them '
                           '("interleave"), each group\'s best ("leaders") or "auto" (:func:`class_turns`).',
    "propagate.graph_free": 'On counts, ``label_free`` in turn with the genes\' Pearson residual variance '
                            '(:func:`with_graph_free`): "always", "never", or "auto" (when the propagated samples '
                            "weigh less than :data:`GRAPH_FREE_BELOW`).",
    "propagate.tails": 'Dense genes clipped to their median +- 3 robust standard deviations before the fit ("clip"), '
                       'never ("as_is"), or "auto" (where the noise has heavy tails, :func:`read_tails`).',
    "propagate.unwanted": '"auto": dense X fitted again without the rising components the held-out labels reject '
                          "(:func:`unwanted_rejected`, RUV's eq. 3), counts within the sides of a component all "
                          'groups share (:func:`crossed_batches`); "kept": neither.',
}


class UndocumentedParameter(LookupError):
    """A registered method's parameter without a description (:data:`METHOD_TEXT`)."""


def method_param_text(method: str, name: str, own: dict[str, str] | None = None) -> str:
    """The description of parameter ``name`` of the registered method ``method``: ``own`` (the
    entries of the method's hand-written Parameters section), else :data:`METHOD_TEXT`'s
    ``"method.name"``, else its shared ``"name"``; none of them is an error."""
    text = (own or {}).get(name) or METHOD_TEXT.get(f"{method}.{name}") or METHOD_TEXT.get(name)
    if not text:
        raise UndocumentedParameter(
            f"method {method!r} parameter {name!r} has no description: add {name!r} (shared) or "
            f"{method + '.' + name!r} to ssfs._docs.METHOD_TEXT, or a Parameters section to its docstring")
    return text


def numpydoc_params(doc: str) -> dict[str, str]:
    """The entries of ``doc``'s numpydoc Parameters section: name -> its description on one line
    (an entry ``a, b`` describes both)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    try:
        start = next(i for i in range(len(lines) - 1)
                     if lines[i].strip() == "Parameters" and re.fullmatch(r"-{3,}", lines[i + 1].strip()))
    except StopIteration:
        return {}
    out, names = {}, []
    for i, line in enumerate(lines[start + 2:], start + 2):
        if i + 1 < len(lines) and line.strip() and re.fullmatch(r"-{3,}", lines[i + 1].strip()):
            break  # the next section
        if line and not line[0].isspace():
            names = [n.strip() for n in line.split(" : ")[0].split(",")]
            for n in names:
                out[n] = ""
        elif line.strip():
            for n in names:
                out[n] = f"{out[n]} {line.strip()}".strip()
    return out


def plain(text: str) -> str:
    """``text`` without reST markup, for a terminal (``:func:`~a.b``` -> a.b, ````x```` -> x)."""
    return re.sub(r":\w+:`~?([^`]+)`", r"\1", text).replace("``", "")


def numpydoc_entry(name: str, kind: str, text: str) -> str:
    """One numpydoc entry: ``name : kind`` and the description wrapped and indented by 4 spaces."""
    body = textwrap.fill(text, width=88, initial_indent="    ", subsequent_indent="    ",
                         break_on_hyphens=False, break_long_words=False)
    return f"{name} : {kind}\n{body}"

"""The prose of every figure's caption, written once.

A figure's kind is the first part of its name (``curve__wine__accuracy``: ``curve``); the other
parts name what it shows (:attr:`FigureKind.parts`). Each kind has a title (what the figure shows)
and the sentences that explain how to read it. Three places say the same from here:

- the HTML report's captions (``figures/index.tsv``, :func:`caption` called by
  :mod:`ssfs.report.build` and :mod:`ssfs.report.statistics`): title and explanation, then the
  run's exact numbers;
- ``snakemake --report``: ``workflow/report/figures.rst`` is :func:`snakemake_rst`, Jinja that
  Snakemake renders with the figure's name and the configuration (regenerate it with
  ``python -m ssfs.report.captions > workflow/report/figures.rst``);
- the documentation: the figure list of ``docs/researcher.md`` is :func:`markdown`
  (``python -m ssfs.report.captions --markdown``).

``tests/report/test_report_captions.py`` fails when a checked-in copy is stale.
"""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class FigureKind:
    """One kind of figure: ``parts`` names the parts of its name after the kind (in order),
    ``title`` says what it shows (``{part}`` fields; ``{settings}``: the fixed sweep settings),
    ``explains`` how to read it (no field: the same words for every run)."""

    kind: str
    parts: tuple[str, ...]
    title: str
    explains: str


KINDS: dict[str, FigureKind] = {k.kind: k for k in (
    FigureKind("curve", ("dataset", "metric"), "{metric} vs number of selected features, dataset {dataset}",
               "For each method, the metric of the evaluation classifier trained on the top-i features of the "
               "method's ranking, for every evaluated i (x axis); line = mean over the repetitions, band = ±1 sd. "
               "Higher is better (lower for the redundancy rate RED)."),
    FigureKind("sweep", ("parameter", "metric"), "{metric} vs the swept setting {parameter}{settings}",
               "The metric averaged over the evaluated numbers of selected features, for each value of the swept "
               "setting (x axis); line = mean over the repetitions, band = ±1 sd; one panel per dataset."),
    FigureKind("stability", ("variant",),
               "Stability of the selected features vs t, variant {variant}: EFSIS measure (eq. 1), Kuncheva index, "
               "mean pairwise Jaccard index and Nogueira's estimator",
               "How much the top-t feature sets of the repetitions agree, for every evaluated t (x axis); "
               "band = the confidence interval of Nogueira's estimator; one row of panels per dataset; "
               "1 = identical sets."),
    FigureKind("cd", ("variant", "metric"), "Critical-difference diagram, {metric}, variant {variant}",
               "Average rank of each method over the datasets (rank 1 = best top-K average, on the right); "
               "methods joined by a bar do not differ significantly (Nemenyi test after Friedman)."),
    FigureKind("wtl", ("variant", "metric"), "Win / tie / loss, {metric}, variant {variant}",
               "Cell (row i, column j): the number of datasets where method i is significantly better / not "
               "different / significantly worse than method j (paired t-test over the repetitions); bold = "
               "significant by the sign test."),
    FigureKind("runtime", (), "Run time and memory of the selection methods",
               "In-process wall-clock seconds and peak memory added (MiB) of one selection run (one repetition, "
               "data loaded), mean ± sd over the runs of each dataset and method (all variants), leaving out "
               "the first selection of each process unless every run was one (its one-off costs are in the "
               "run-time table)."),
)}

#: what Snakemake's report knows of the run besides the figure's name: the configuration
SNAKEMAKE_FACTS = {
    "curve": "{{ reps }} repetitions in the configuration.",
    "sweep": "{{ reps }} repetitions in the configuration.",
    "stability": "{{ reps }} repetitions in the configuration.",
    "wtl": "{{ reps }} repetitions in the configuration.",
}
#: closes every Snakemake caption: where the files and the run's numbers are
SNAKEMAKE_FOOTER = (
    "Also as SVG in ``results/figures`` (as PDF and PNG in ``results/paper_figures`` after "
    "``snakemake --cores 2 paper_figures``); ``figures/index.tsv`` and the HTML report (``results/report.html``) "
    "hold every figure's caption with the exact numbers of this run.")


def caption(kind: str, facts: str = "", **fields) -> str:
    """The caption of a figure of ``kind``: its title with ``fields`` filled in, the kind's
    explanation, then ``facts`` (the run's numbers).

    Parameters
    ----------
    kind : str
        A key of :data:`KINDS`.
    facts : str
        Sentences with this run's numbers, appended.
    **fields
        The title's fields (``settings`` defaults to none).

    Returns
    -------
    str
        One paragraph of plain text.
    """
    k = KINDS[kind]
    title = k.title.format(**{"settings": "", **fields})
    return " ".join(t for t in (f"{title}.", k.explains, facts.strip()) if t)


def _jinja_title(k: FigureKind) -> str:
    """The title of ``k`` in Jinja: part i of the name is ``p[i + 1]``."""
    fields = {name: f"{{{{ p[{i + 1}] }}}}" for i, name in enumerate(k.parts)}
    fields["settings"] = ('{% if p|length > 3 %} ({{ p[3:]|join(", ")|replace("-", " = ") }}){% endif %}'
                          if k.kind == "sweep" else "")
    return k.title.format(**fields)


def _wrap(text: str) -> str:
    return textwrap.fill(text, width=110, break_long_words=False, break_on_hyphens=False)


def snakemake_rst() -> str:
    """``workflow/report/figures.rst``: the caption of each figure of ``snakemake --report``, Jinja
    (Snakemake renders it with the figure's name, wildcard ``name``, and the configuration) giving
    reStructuredText, chosen by the name's first part.

    Returns
    -------
    str
        The file's text.
    """
    out = ['{% set name = snakemake.wildcards.name %}{% set p = name.split("__") %}'
           '{% set reps = snakemake.config["supervision"]["repetitions"] %}']
    for i, k in enumerate(KINDS.values()):
        out.append(f'{{% {"if" if i == 0 else "elif"} p[0] == "{k.kind}" %}}')
        out.append(f"**{_jinja_title(k)}.**")
        out.append(_wrap(" ".join(t for t in (k.explains, SNAKEMAKE_FACTS.get(k.kind, "")) if t)))
    out += ["{% else %}", "Figure ``{{ name }}`` of the comparison.", "{% endif %}", _wrap(SNAKEMAKE_FOOTER)]
    return "\n".join(out) + "\n"


def markdown() -> str:
    """The list of the figures for the documentation (``docs/researcher.md``): per kind, its file
    name pattern, title and explanation, as in both reports.

    Returns
    -------
    str
        Markdown, one list item per kind.
    """
    items = []
    for k in KINDS.values():
        stem = "__".join([k.kind, *(f"{{{p}}}" for p in k.parts)]) + ("[__{setting}-{value}...]" if k.kind == "sweep"
                                                                      else "")
        title = k.title.format(**{p: f"_{p}_" for p in k.parts}, settings="")
        items.append(f"- `{stem}`: **{title}.** {k.explains}")
    return "\n".join(items) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown() if sys.argv[1:] == ["--markdown"] else snakemake_rst())

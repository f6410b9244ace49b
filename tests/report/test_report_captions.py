"""`snakemake --report` captions (workflow/report/figures.rst) are specific to each figure:
rendered as Snakemake does (Jinja with the figure's pattern wildcards), each kind of figure
gets its own text naming its dataset / metric / variant."""

from pathlib import Path
from types import SimpleNamespace

import jinja2
import pytest

RST = Path(__file__).resolve().parents[2] / "workflow" / "report" / "figures.rst"


def render(name: str) -> str:
    sm = SimpleNamespace(wildcards=SimpleNamespace(name=name), config={"supervision": {"repetitions": 7}})
    return " ".join(jinja2.Environment().from_string(RST.read_text()).render(snakemake=sm).split())


@pytest.mark.parametrize("name, expected", [
    ("curve__wine__accuracy", "**accuracy vs number of selected features, dataset wine.**"),
    ("sweep__n_labeled__auc__n_constraints-10", "**auc vs the swept setting n_labeled** (n_constraints = 10)."),
    ("stability__base", "**Stability of the selected features, variant base.**"),
    ("cd__base__accuracy", "**Critical-difference diagram, accuracy, variant base.**"),
    ("wtl__base__f1", "**Win / tie / loss, f1, variant base.**"),
    ("runtime", "**Run time and memory of the selection methods.**"),
])
def test_each_figure_gets_its_own_caption(name, expected):
    text = render(name)
    assert text.startswith(expected), text
    assert "Figure ``" not in text  # not the generic fallback


def test_captions_differ_and_are_valid_rst():
    names = ["curve__wine__accuracy", "curve__colon__accuracy", "stability__base", "runtime"]
    texts = [render(n) for n in names]
    assert len(set(texts)) == len(texts)
    assert "7 repetitions" in texts[0]
    docutils = pytest.importorskip("docutils.core")
    for t in texts:
        html = docutils.publish_parts(t, writer="html", settings_overrides={"report_level": 2,
                                                                                   "halt_level": 2})["body"]
        assert "<strong>" in html

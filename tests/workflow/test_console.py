"""A quiet console (issue #18): a small 3-method benchmark, report included, prints fewer
than 200 lines, none of them third-party debug output (matplotlib / fontTools font
subsetting), no "Shell command: None" and no per-job input lists; every job says when it
starts and how long it took, on the console and in its log."""

import re

import pytest
from workflow_helpers import snakemake

THREE = {
    "seed": 0,
    "datasets": {"wine": {"source": "builtin", "name": "wine"}},
    "methods": {"cls": {}, "fisher": {}, "laplacian": {}},
    "supervision": {"repetitions": 3, "labeled_per_class": 3},
    "evaluation": {"max_features": 10},
}


@pytest.mark.slow
def test_small_benchmark_console_is_short_and_meaningful(tmp_path):
    res = snakemake(tmp_path, THREE, cores=2)
    lines = (res.stdout + res.stderr).splitlines()
    assert len(lines) < 200, f"{len(lines)} console lines"
    text = "\n".join(lines)
    for noise in ("Shell command", "glyph", "subsetting", "pruned", "input: results/", "findfont"):
        assert noise not in text, noise
    done = [ln for ln in lines if re.fullmatch(r"ssfs \S+( \w+=\S+)*: done in [\d.]+ s", ln)]
    started = [ln for ln in lines if ln.startswith("ssfs ") and ln.endswith(": started")]
    # prepare, split, constraints, 3 x select, 3 x evaluate, aggregate, report
    assert len(done) == len(started) == 11, text
    assert "ssfs select_0 dataset=wine variant=base method=cls: started" in started
    log = (tmp_path / "results/logs/select/wine/base/cls/chunk0.log").read_text().splitlines()
    assert log[0] == "ssfs select_0 dataset=wine variant=base method=cls: started"
    assert log[-1].startswith("ssfs select_0 dataset=wine variant=base method=cls: done in ")


@pytest.mark.slow
def test_log_level_warning_silences_the_jobs(tmp_path):
    cfg = dict(THREE, methods={"fisher": {}}, log_level="WARNING")
    res = snakemake(tmp_path, cfg, "results/wine/base/scores/fisher.tsv", cores=1)
    assert "ssfs " not in res.stdout + res.stderr
    assert (tmp_path / "results/logs/select/wine/base/fisher/chunk0.log").read_text() == ""

"""Named configs keep their own results (issue #29 item 4): with ``results_dir`` an analyst's config
writes beside the default run, and neither overwrites the other's files nor makes it want to rerun."""

import pytest
from workflow_helpers import snakemake

SELECTION = {"seed": 0, "datasets": {"wine": {"source": "builtin", "name": "wine"}},
             "methods": {"fisher": {}, "variance": {}}, "selection": {"resamples": 4, "top": 5}}


@pytest.mark.slow
def test_two_configs_neither_overwrite_nor_invalidate_each_other(tmp_path):
    default, mine = SELECTION, dict(SELECTION, results_dir="results/mine", selection={"resamples": 6, "top": 3})
    snakemake(tmp_path, default, cores=2)
    report = tmp_path / "results/report.html"
    before = {p: p.read_bytes() for p in (tmp_path / "results").rglob("*") if p.is_file() and "mine" not in p.parts
              and "logs" not in p.parts}
    snakemake(tmp_path, mine, cores=2)
    assert (tmp_path / "results/mine/report.html").is_file()
    assert (tmp_path / "results/mine/wine/selection/consensus.tsv").is_file()
    after = {p: p.read_bytes() for p in before}
    assert after == before and report in before  # the default run's files, byte for byte
    for cfg in (default, mine):  # and neither run wants to run again
        res = snakemake(tmp_path, cfg, "-n", cores=1)
        assert "Nothing to be done" in res.stdout + res.stderr, res.stdout[-2000:]

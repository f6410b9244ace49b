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
    done = [ln for ln in lines if re.fullmatch(r"ssfs \S+( \w+=\S+)*: done in (\d+ h )?(\d+ min )?[\d.]+ s", ln)]
    started = [ln for ln in lines if ln.startswith("ssfs ") and ln.endswith(": started")]
    # prepare (+ supervision), select (the 3 methods batched, + evaluate), aggregate (+ report)
    assert len(done) == len(started) == 3, text
    job = "ssfs select_0 dataset=wine variant=base methods=cls,fisher,laplacian"
    assert f"{job}: started" in started
    log = (tmp_path / "results/logs/select/wine/base/_batch/chunk0.log").read_text().splitlines()
    assert log[0] == f"{job}: started"
    assert log[-1].startswith(f"{job}: done in ")


@pytest.mark.slow
def test_log_level_warning_silences_the_jobs(tmp_path):
    cfg = dict(THREE, methods={"fisher": {}}, log_level="WARNING")
    res = snakemake(tmp_path, cfg, "results/wine/base/scores/fisher.tsv", cores=1)
    assert "ssfs " not in res.stdout + res.stderr
    assert (tmp_path / "results/logs/select/wine/base/fisher/chunk0.log").read_text() == ""


def test_log_levels_hold_third_party_info_back(monkeypatch, tmp_path):
    import io
    import logging

    from ssfs.workflow.scripting import ENV_LEVEL, configure_logging, log_level

    monkeypatch.delenv(ENV_LEVEL, raising=False)
    assert log_level({}) == "INFO" and log_level({"log_level": "WARNING"}) == "WARNING"
    monkeypatch.setenv(ENV_LEVEL, "DEBUG")  # snakemake --verbose
    assert log_level({"log_level": "WARNING"}) == "DEBUG"
    root = logging.getLogger()
    saved = root.handlers[:], root.level, logging.getLogger("ssfs").level, logging.getLogger("fontTools").level
    try:
        for level, shown in (("INFO", ["ssfs info"]), ("DEBUG", ["glyph subset", "ssfs info", "ssfs debug"])):
            out = io.StringIO()
            configure_logging(level, tmp_path / "job.log", stream=out, capture_warnings=False)
            logging.getLogger("fontTools.subset").info("glyph subset")
            logging.getLogger("ssfs.x").info("ssfs info")
            logging.getLogger("ssfs.x").debug("ssfs debug")
            for h in root.handlers:
                h.flush()
            assert out.getvalue().splitlines() == shown
            assert (tmp_path / "job.log").read_text().splitlines() == shown
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        logging.getLogger("ssfs").setLevel(saved[2])
        logging.getLogger("fontTools").setLevel(saved[3])

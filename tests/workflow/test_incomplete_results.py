"""A result cut short in a finished run is not trusted by the rerun (issue 30, docs/errors.md):
a ranking cut to its first rows made the stability table silently lose rows (exit 0, no
warning); the aggregate step now stops with one line naming the file and how to regenerate it,
and following that line gives the whole table again."""

from __future__ import annotations

import shlex
import shutil

import pytest
from workflow_helpers import config, reference_run, snakemake

TARGET = "results/tables/stability.tsv"
CUT = "results/wine/base/rankings/bcs/0.tsv"


@pytest.mark.slow
def test_a_ranking_cut_short_in_a_finished_run_is_refused_then_regenerated(tmp_path, tmp_path_factory):
    wd = tmp_path / "run"
    shutil.copytree(reference_run(tmp_path_factory), wd, symlinks=True)
    ranking = wd / CUT
    whole = ranking.read_bytes()
    ranking.write_bytes(b"".join(whole.splitlines(keepends=True)[:4]))  # a copy or a disk that stopped
    res = snakemake(wd, config(), TARGET, check=False)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    hits = [ln for ln in out.splitlines() if f"{CUT} is incomplete" in ln]
    assert hits and f"rm '{CUT}'" in hits[0], out[-3000:]
    assert "Traceback" not in out
    assert not (wd / TARGET).exists()
    # the command the message gives (the ranking and the scores table computed from it), then the
    # same run: the ranking is recomputed, byte for byte
    removed = shlex.split(hits[0].split(": rm ", 1)[1])
    assert removed == [CUT, "results/wine/base/scores/bcs.tsv"]
    for path in removed:
        (wd / path).unlink()
    snakemake(wd, config(), TARGET)
    assert (wd / CUT).read_bytes() == whole
    assert (wd / TARGET).exists()

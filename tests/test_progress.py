"""Progress of long loops (issue #18): periodic log lines with done/total and the time
left, a tqdm bar only where the CLI enabled it on a terminal, thread-safe counting, the
ensembles report through it, and progress never changes a result."""

import logging
import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from ssfs import _progress, run_method
from ssfs._progress import Progress, progress, track

LINE = re.compile(r"ssfs (.+): (\d+)/(\d+) \((\d+)%\), [\d.]+ s elapsed(, about [\d.]+ s left)?")


def _lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "ssfs.progress"]


def test_lines_count_done_and_total(caplog, monkeypatch):
    caplog.set_level(logging.INFO, logger="ssfs.progress")
    with progress(4, "things", interval=0) as bar:
        for _ in range(4):
            bar.update()
    got = [LINE.fullmatch(s).groups() for s in _lines(caplog)]
    # a line per update before the end (with the time left), and the final one (without)
    assert [(g[1], g[2], g[3], g[4] is not None) for g in got] == [
        ("1", "4", "25", True), ("2", "4", "50", True), ("3", "4", "75", True), ("4", "4", "100", False)]
    assert {g[0] for g in got} == {"things"}


def test_quiet_below_the_interval(caplog):
    caplog.set_level(logging.INFO, logger="ssfs.progress")
    assert list(track(range(50), "quick", interval=3600)) == list(range(50))
    assert _lines(caplog) == []  # a fast loop prints nothing, not even a final line


def test_eta_from_the_rate():
    p = Progress(10, "x", interval=3600)
    p.t0 -= 20.0  # 20 s ago
    p.update(4)
    assert p.line().endswith("4/10 (40%), 20.0 s elapsed, about 30.0 s left")


def test_thread_safe_counting():
    from joblib import Parallel, delayed

    with progress(4000, "threads", interval=3600) as bar:
        Parallel(n_jobs=2, prefer="threads")(delayed(bar.update)() for _ in range(4000))
    assert bar.done == 4000


def test_bar_only_when_enabled_on_a_terminal(monkeypatch, capsys):
    assert Progress(3, "x")._bar is None  # library default: no bar, even on a terminal
    monkeypatch.setitem(_progress._BAR, "enabled", True)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    assert Progress(3, "x")._bar is None  # not a terminal: log lines
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    p = Progress(3, "x")
    assert p._bar is not None and p._bar.total == 3
    p.update(3)
    p.close()


@pytest.mark.parametrize("method, params, what, total", [
    ("enscls", {"n_members": 30}, "enscls committee members", 30),
    ("efsis", {"n_boot": 3}, "bootstrap rankings (sam, geode, relieff, infogain on 3 resamples)", 12),
    ("bootstrap_rank", {"n_boot": 5, "base": "fisher"}, "bootstrap rankings (fisher on 5 resamples)", 5),
    ("ssfi", {"n_members": 15, "max_iter": 3}, "ssfi self-training rounds (at most 3, 15 trees)", 3),
])
def test_ensembles_report_progress_without_changing_results(caplog, monkeypatch, method, params, what, total):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(45, 40))
    y = np.repeat([0, 1, 2], 15)
    X[y == 1, :2] += 3
    yl = np.where(np.arange(45) % 3 == 0, y, -1)
    quiet = run_method(method, X, yl, rng=np.random.default_rng(1), **params)
    caplog.set_level(logging.INFO, logger="ssfs.progress")
    monkeypatch.setattr(_progress, "INTERVAL", 0.0)
    monkeypatch.setattr("ssfs.methods.enscls.BATCH_BYTES", 1)  # one member per batch: an update each
    loud = run_method(method, X, yl, rng=np.random.default_rng(1), **params)
    np.testing.assert_array_equal(quiet.order, loud.order)
    got = [LINE.fullmatch(s).groups() for s in _lines(caplog)]
    assert got and {g[0] for g in got} == {what}
    assert int(got[-1][2]) == total and int(got[-1][1]) <= total


def test_rank_prints_progress_lines_when_not_on_a_terminal(tmp_path):
    rng = np.random.default_rng(2)
    df = pd.DataFrame(rng.normal(size=(30, 20)), columns=[f"g{i}" for i in range(20)],
                      index=[f"s{i}" for i in range(30)])
    df["class"] = ["a", "b", "c"] * 10
    df.to_csv(tmp_path / "x.csv")
    env = dict(os.environ, SSFS_PROGRESS_INTERVAL="0")
    cmd = [sys.executable, "-m", "ssfs.cli", "--log-level", "DEBUG", "rank", str(tmp_path / "x.csv"),
           "--label-column", "class",
           "--method", "bootstrap_rank", "--param", "n_boot=6", "--param", "base=fisher", "-o", str(tmp_path / "r.tsv")]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    lines = res.stderr.splitlines()
    assert re.fullmatch(r"ssfs rank: read .*x\.csv: 30 samples x 20 features in [\d.]+ s", lines[0])
    assert re.fullmatch(r"ssfs rank: bootstrap_rank done in [\d.]+ s", lines[-1])
    assert lines[1:-1] and all(LINE.fullmatch(s) for s in lines[1:-1]), lines
    assert lines[-2].startswith("ssfs bootstrap rankings (fisher on 6 resamples): 6/6 (100%)")
    res = subprocess.run(cmd + ["--no-progress"], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0 and [s.split(":")[0] for s in res.stderr.splitlines()] == ["ssfs rank"] * 2
    res = subprocess.run(cmd[:3] + cmd[5:], capture_output=True, text=True, env=env, timeout=120)  # INFO
    assert res.returncode == 0 and all(LINE.fullmatch(s) for s in res.stderr.splitlines()), res.stderr
    res = subprocess.run(cmd[:3] + ["--log-level", "WARNING"] + cmd[5:], capture_output=True, text=True, env=env,
                         timeout=120)
    assert res.returncode == 0 and res.stderr == ""

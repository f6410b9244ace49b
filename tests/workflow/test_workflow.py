"""End-to-end: the workflow on a tiny config in a temporary directory produces the
report and tables with numbers; bad configs stop before any job with a clear message."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ssfs._checked import read_checked_tsv

REPO = Path(__file__).resolve().parents[2]

TINY = {
    "seed": 3,
    "datasets": {
        "wine": {"source": "builtin", "name": "wine"},
        "wave": {"source": "builtin", "name": "waveform", "params": {"n_samples": 150}},
    },
    "methods": {"variance": {}, "cls": {"k": 5}, "cls_k10": {"method": "cls", "k": 10}},
    "supervision": {"repetitions": 2, "labeled_per_class": 3},
    "evaluation": {"max_features": 5},
    "report": {"control": "cls"},
}


def snakemake(workdir: Path, config: dict, *extra, check=True):
    cfg = workdir / "config.yaml"
    cfg.write_text(yaml.safe_dump(config))
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir),
           "--configfile", str(cfg), "--cores", "2", *extra]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if check and res.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{res.stdout[-3000:]}\n{res.stderr[-5000:]}")
    return res


@pytest.mark.slow
def test_tiny_workflow_end_to_end(tmp_path):
    cfg = {**TINY, "constrained_clustering": {"algorithms": ["cop_kmeans", "mpc_kmeans"], "n_init": 1,
                                              "paper": "thesis_table43"}}
    snakemake(tmp_path, cfg)
    res = tmp_path / "results"
    html = (res / "report.html").read_text()
    assert "data:image/svg+xml;base64," in html and "wine" in html and "wave" in html
    # thesis Table 4.3's section: both datasets, two algorithms x two settings, over the 2 repetitions
    cc = pd.read_csv(res / "tables/constrained_clustering.tsv", sep="\t")
    assert len(cc) == 2 * 2 * 2 and (cc["n"] == 2).all() and cc["mean"].between(0, 100).all()
    assert cc["published"].isna().all()  # the thesis has no wine or waveform row
    assert "<h2 id='constrained'>" in html
    scores = pd.read_csv(res / "tables/scores.tsv", sep="\t")
    assert set(scores.method) == {"variance", "cls", "cls_k10"}
    assert set(scores.rep) == {0, 1}
    assert scores.value.between(0, 1).all() and scores.value.mean() > 0.5
    top = pd.read_csv(res / "tables/top_k.tsv", sep="\t")
    assert len(top) == 2 * 3 and top["mean"].notna().all()
    ranking = read_checked_tsv(res / "wine/base/rankings/cls/0.tsv")
    assert sorted(ranking["index"]) == list(range(13)) and list(ranking["rank"]) == list(range(1, 14))
    assert (res / "tables/top_k.md").read_text().count("**") >= 2
    assert (res / "tables/summary.tex").read_text().startswith("\\begin{tabular}")
    # nothing left to do: a second run is a no-op
    again = snakemake(tmp_path, cfg, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr
    # Snakemake's own report bundles the registered outputs
    snakemake(tmp_path, cfg, "--report", str(tmp_path / "bundle.html"))
    assert (tmp_path / "bundle.html").stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.parametrize(
    "change, message",
    [
        ({"methods": {"nosuch": {}}}, "unknown method 'nosuch'"),
        ({"datasets": {"../evil": {"source": "builtin", "name": "wine"}}}, "not allowed"),
        ({"supervision": {"repetitions": "two"}}, "supervision.repetitions"),
        ({"datasets": {"x": {"path": "missing.csv"}}}, "not found"),
        ({"constrained_clustering": {"paper": "nosuch"}}, "constrained_clustering.paper"),
        ({"constrained_clustering": {"algorithms": ["kmeans"]}}, "constrained_clustering.algorithms"),
    ],
)
def test_bad_config_stops_before_any_job(tmp_path, change, message):
    cfg = {**TINY, **change}
    res = snakemake(tmp_path, cfg, check=False)
    assert res.returncode != 0
    assert message in res.stdout + res.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_bad_data_fails_with_one_line_message(tmp_path):
    (tmp_path / "bad.csv").write_text("id,a,b,label\ns1,1,2,x\ns2,oops,3,y\ns3,1,1,x\ns4,2,2,y\n")
    cfg = {**TINY, "datasets": {"bad": {"path": "bad.csv", "label_column": "label"}}, "data_dir": str(tmp_path)}
    res = snakemake(tmp_path, cfg, check=False)
    assert res.returncode != 0
    err = [line for line in (res.stdout + res.stderr).splitlines() if line.startswith("ERROR: ")]
    assert err and "oops" in err[0] and "s2" in err[0]


def test_configfile_replaces_the_embedded_default(tmp_path):
    """In a checkout (config/config.yaml present), --configfile must not merge the default's
    datasets and methods into a paper config; without --configfile the default applies."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text((REPO / "config" / "config.yaml").read_text())
    got = snakemake(tmp_path, TINY, "-n", "--forceall", "--quiet", "rules").stdout
    jobs = dict(line.split()[:2] for line in got.splitlines() if line[:1].isalpha() and len(line.split()) == 2)
    assert jobs["prepare"] == "2" and jobs["select_0"] == "2"  # TINY: 2 datasets, 3 methods batched
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path),
           "--cores", "1", "-n", "--forceall", "--quiet", "rules"]
    default = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stdout
    jobs = dict(line.split()[:2] for line in default.splitlines() if line[:1].isalpha() and len(line.split()) == 2)
    assert jobs["prepare"] == "3"  # the default config's wine, waveform, pbmc68k_reduced

"""The report's tables in a real browser (issue #29 item 3): headless Chromium (Debian's
``chromium``, installed by .ci/run; skipped where it is absent) loads a selection report, a
script clicks the frequency header twice and types in the filter box, and the dumped DOM shows
the rows sorted both ways and filtered. Without the script the page reads the same (the rows in
consensus order)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)

PROBE = """<script>
(function () {
  var t = document.getElementById('top-features');
  var ths = t.tHead.rows[0].cells, col = -1;
  for (var i = 0; i < ths.length; i++) { if (ths[i].textContent.trim() === 'frequency') { col = i; } }
  var read = function (c) { return Array.prototype.map.call(t.tBodies[0].rows, function (r) {
    return r.hidden ? null : r.cells[c].textContent.trim(); }).filter(function (v) { return v !== null; }); };
  ths[col].click(); var asc = read(col);
  ths[col].click(); var desc = read(col);
  var f = t.parentNode.querySelector('input.filter');
  f.value = 'g1'; f.dispatchEvent(new Event('input'));
  var out = document.createElement('pre'); out.id = 'probe';
  out.textContent = JSON.stringify({asc: asc, desc: desc, shown: read(0), sort: ths[col].getAttribute('aria-sort')});
  document.body.appendChild(out);
})();
</script></body>"""


@pytest.mark.skipif(BROWSER is None, reason="no chromium on this machine (.ci/run installs Debian's)")
def test_tables_sort_and_filter_in_a_browser(tmp_path):
    from ssfs.cli import main
    from ssfs.report.selection import run_selection_report

    rng = np.random.default_rng(0)
    y = np.repeat(["a", "b"], 20)
    X = rng.normal(size=(40, 30))
    X[:, :3] += 3.0 * (y == "b")[:, None]
    df = pd.DataFrame(X, columns=[f"g{j}" for j in range(30)], index=[f"s{i}" for i in range(40)])
    df.insert(0, "label", np.where(np.arange(40) % 4 == 0, y, ""))
    df.to_csv(tmp_path / "d.csv")
    out = tmp_path / "results" / "d" / "selection"
    assert main(["select", str(tmp_path / "d.csv"), "--label-column", "label", "--methods", "laplacian,cls",
                 "--resamples", "6", "--name", "d", "-o", str(out), "--no-progress"]) == 0
    cfg = {"report": {"title": "sel"}, "datasets": {"d": {}}, "supervision": {"constraints": {"mode": "all_pairs"}},
           "selection": {"threshold": 0.8}}
    page = tmp_path / "results" / "report.html"
    run_selection_report(page, cfg)
    probe = tmp_path / "results" / "probe.html"
    probe.write_text(page.read_text().replace("</body>", PROBE))
    dom = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    got = json.loads(re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"'))
    asc = [float(v) for v in got["asc"]]
    assert asc == sorted(asc) and [float(v) for v in got["desc"]] == sorted(asc, reverse=True)
    assert got["sort"] == "descending"
    assert got["shown"] and all("g1" in f for f in got["shown"])  # the filter keeps the matching rows
    table = pd.read_csv(out / "consensus.tsv", sep="\t")
    assert len(got["shown"]) == sum("g1" in f for f in table["feature"].head(len(asc)))

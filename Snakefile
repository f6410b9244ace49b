# ssfs: semi-supervised and ensemble feature selection — the workflow.
# Run:  snakemake --cores 2            (embedded default: config/config.yaml)
#       snakemake --cores 2 --configfile config/efsis.yaml
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

min_version("9.0")

# The embedded default, unless --configfile is given: Snakemake would otherwise merge the two
# (the default's datasets and methods would join every paper config's).
# The path is the checkout's, so `--directory DIR` runs the default there too.
if not workflow.overwrite_configfiles:

    configfile: Path(workflow.basedir) / "config" / "config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/prepare.smk"
include: "workflow/rules/supervision.smk"
include: "workflow/rules/select.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/selection.smk"
include: "workflow/rules/constrained.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        f"{RESULTS}/report.html",
        SUMMARY_TABLES if BENCHMARK else [],
        SELECTION_OUTPUTS,
        CC_TABLES,

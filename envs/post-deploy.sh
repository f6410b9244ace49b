#!/usr/bin/env bash
# Installs ssfs into a workflow conda env. Snakemake runs `envs/<step>.post-deploy.sh` (a link to this
# file) once, inside the env, right after creating it from `envs/<step>.yaml`, from its own copy under
# .snakemake/conda/, so a relative path such as `pip: -e ..` cannot name the repository. The Snakefile
# exports SSFS_REPO (the folder holding it) before any env is built. The install is editable: the env
# runs the code of the checkout that runs the workflow, and the env's own packages (pinned in the env
# file) are used as they are (--no-deps, no download).
set -euo pipefail
: "${SSFS_REPO:?not set: build the envs through the ssfs Snakefile (snakemake --software-deployment-method conda --conda-create-envs-only)}"
python -m pip install --no-deps --no-build-isolation --disable-pip-version-check --quiet --editable "$SSFS_REPO"
python -c 'import sys, ssfs; print("ssfs", ssfs.__version__, "installed from", sys.argv[1])' "$SSFS_REPO"

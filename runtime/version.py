"""Flinkbench's one version number: the ``version`` field of the top-level package.json.

The build (hatch-nodejs-version) gives the Python distribution the same number, so an installed
package reads it from its own metadata; a source checkout reads package.json itself, so what runs is
what the checkout says.
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "flinkbench"
NPM_PACKAGE = "flinkbench-jupyterlab"
_PACKAGE_JSON = Path(__file__).resolve().parent.parent / "package.json"


@lru_cache(maxsize=1)
def version() -> str:
    """The version of the running code: package.json beside a source checkout, else the installed metadata."""
    try:
        data = json.loads(_PACKAGE_JSON.read_text(encoding="utf-8"))
        if data.get("name") == NPM_PACKAGE:
            return str(data["version"])
    except (OSError, ValueError, KeyError):
        pass
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"

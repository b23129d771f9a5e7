"""A JobManager that nobody opens the dashboard of never imports Bokeh (about 22 MB of its memory)."""
from __future__ import annotations

import subprocess
import sys

PROBE = ("import sys, runtime.jobmanager.jobmanager; "
         "print(sorted({m.split('.')[0] for m in sys.modules} & {'bokeh', 'jinja2', 'xyzservices'}))")


def test_the_jobmanager_module_imports_no_bokeh():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip() == "[]", f"imported at the JobManager's start: {out.strip()}"

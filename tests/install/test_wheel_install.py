"""What a user gets from ``pip install``: the wheel built from this tree, installed into a fresh virtual
environment that cannot see the source tree, first alone (the runtime, as on a server), then with the
``jupyter`` extra (the workbench: side panel, server extension, magics).

Downloads come from pip's own cache, so after the first run this costs the copying of the packages
into the new environment (about a minute) and one small job on a local cluster. The installs skip
compiling every module to bytecode up front (``--no-compile``, a third of pip's time here): Python
compiles what it imports on first use, and the installed files are the same.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from pathlib import Path

import nbformat
import pytest

from runtime.version import version
from tests.helpers.clusters import wait_until
from tests.helpers.notebooks import code_notebook, text_of
from tests.helpers.ports import free_port
from tests.helpers.readme_inventory import WHEEL, run_by

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
LABEXT = "flinkbench-jupyterlab"


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    """sdist and wheel as `make dist` builds them (wheel from the sdist, in isolated build environments)."""
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO)], capture_output=True,
                            text=True, env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    assert result.returncode == 0, f"python -m build failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return {"wheel": next(out.glob("flinkbench-*.whl")), "sdist": next(out.glob("flinkbench-*.tar.gz"))}


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> dict:
    """A fresh virtual environment and an environment for its processes: no PYTHONPATH, no cluster
    variables, a HOME of its own (so no user-level Jupyter config or kernel leaks in), pip's real cache."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(root / "v")], check=True)
    home = root / "home"
    home.mkdir()
    cache = os.environ.get("PIP_CACHE_DIR") or os.path.expanduser("~/.cache/pip")
    dropped = ("PYTHONPATH", "PYSPARK_PYTHON", "VIRTUAL_ENV", "PYTHONHOME")
    env = {k: v for k, v in os.environ.items()
           if k not in dropped and not k.startswith(("FLINKBENCH_", "JUPYTER_"))}
    env.update(PATH=f"{root / 'v' / 'bin'}:{os.environ['PATH']}", HOME=str(home), PIP_CACHE_DIR=cache,
               SPARK_LOCAL_IP="127.0.0.1")
    return {"bin": root / "v" / "bin", "env": env, "cwd": home}


def run(venv: dict, *args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess:
    command = [str(venv["bin"] / args[0]), *args[1:]]
    result = subprocess.run(command, cwd=venv["cwd"], env=venv["env"], capture_output=True, text=True,
                            timeout=timeout)
    if check:
        assert result.returncode == 0, f"{' '.join(args)} exited {result.returncode}:\n{result.stdout[-3000:]}\n" \
                                       f"{result.stderr[-3000:]}"
    return result


def test_the_wheel_and_the_sdist_carry_the_prebuilt_extension(dists):
    names = zipfile.ZipFile(dists["wheel"]).namelist()
    data = f"flinkbench-{version()}.data/data"
    ext = f"{data}/share/jupyter/labextensions/{LABEXT}"
    assert f"{ext}/package.json" in names and f"{ext}/install.json" in names
    assert any(re.fullmatch(rf"{ext}/static/remoteEntry\.[0-9a-f]+\.js", n) for n in names)
    assert f"{data}/etc/jupyter/jupyter_server_config.d/flinkbench.json" in names
    assert f"flinkbench-{version()}.dist-info/licenses/LICENSE" in names
    with tarfile.open(dists["sdist"]) as sdist:
        members = sdist.getnames()
    assert any("kernel_magics/labextension/static/remoteEntry." in m for m in members)
    assert any(m.endswith("/package.json") for m in members) and any(m.endswith("/LICENSE") for m in members)


def test_runtime_alone_runs_a_job_from_the_command_line_without_jupyterlab(dists, venv):
    run(venv, "pip", "install", "-q", "--no-compile", str(dists["wheel"]))
    assert run(venv, "flinkbench", "--version").stdout.strip() == f"flinkbench {version()}"
    where = run(venv, "python", "-c", "import runtime, kernel_magics; print(runtime.__file__)").stdout
    assert str(venv["bin"].parent) in where and str(REPO) not in where
    no_lab = run(venv, "python", "-c", "import jupyterlab", check=False)
    assert no_lab.returncode != 0 and "No module named 'jupyterlab'" in no_lab.stderr
    magics = run(venv, "python", "-c", "import kernel_magics; kernel_magics.load_ipython_extension(None)", check=False)
    assert "pip install 'flinkbench[jupyter]'" in magics.stderr
    (venv["cwd"] / "evens.py").write_text(
        "from runtime.api.environment import StreamExecutionEnvironment\n"
        "env = StreamExecutionEnvironment()\n"
        "env.from_collection([{'x': i} for i in range(10)], schema='x BIGINT').filter('x % 2 = 0').collect()\n"
        "print(sorted(env.execute('evens').results().column('x').to_pylist()))\n")
    run(venv, "flinkbench", "cluster", "start", "--detach", "--taskmanagers", "1", "--slots", "1")
    try:
        ran = run(venv, "flinkbench", "run", "evens.py")
        assert "[0, 2, 4, 6, 8]" in ran.stdout and "(evens) FINISHED" in ran.stdout, ran.stdout
    finally:
        run(venv, "flinkbench", "cluster", "stop")


def readme_install(wheel: Path) -> list[str]:
    """The README's install line, as shown, with this tree's wheel for the package name (and pip's -q and
    --no-compile, which change what it prints and when it compiles, not what it installs)."""
    [line] = [c for c in run_by(WHEEL) if c.startswith("pip install")]
    pip, install, *requirements = shlex.split(line)
    return [pip, install, "-q", "--no-compile",
            *[r.replace("flinkbench", str(wheel), 1) if r.startswith("flinkbench") else r for r in requirements]]


def test_workbench_extra_gives_panel_server_extension_and_magics(dists, venv):
    run(venv, *readme_install(dists["wheel"]))
    listed = run(venv, "jupyter", "labextension", "list")
    labext = ANSI.sub("", listed.stdout + listed.stderr)
    prebuilt_dir = str(venv["bin"].parent / "share" / "jupyter" / "labextensions")
    section = labext.split(prebuilt_dir, 1)[1].split("\n\n", 1)[0] if prebuilt_dir in labext else ""
    assert re.search(rf"{LABEXT} v{re.escape(version())} enabled OK \(python, flinkbench\)", section), labext
    server = run(venv, "jupyter", "server", "extension", "list")
    server_text = ANSI.sub("", server.stdout + server.stderr)
    assert re.search(r"kernel_magics\.server enabled", server_text), server_text
    assert re.search(r"kernel_magics\.server\s+OK", server_text), server_text

    nb = code_notebook(
        "%load_ext kernel_magics",
        "%flink local --taskmanagers 1 --slots 1",
        "%%flink --name wheel-check --wait -o evens\n"
        "env.from_collection([{'x': i} for i in range(10)], schema='x BIGINT').filter(col('x') % 2 == 0).collect()",
        "print(sorted(evens['x'].tolist()))",
        "%flink stop",
    )
    path = venv["cwd"] / "check.ipynb"
    nbformat.write(nb, str(path))
    run(venv, "jupyter", "execute", "--inplace", "--timeout=240", str(path))
    executed = nbformat.read(str(path), as_version=4)
    assert "local cluster running" in text_of(executed.cells[1])
    assert text_of(executed.cells[3]).strip() == "[0, 2, 4, 6, 8]", [text_of(c) for c in executed.cells]
    jupyter_lab_serves_the_workbench(venv)


def jupyter_lab_serves_the_workbench(venv: dict) -> None:
    """The README's ``jupyter lab``, as shown, from the installed workbench: it serves JupyterLab with the panel's
    server extension. Added: a free port, a token, no browser, and --allow-root as root (the README says so)."""
    [line] = [c for c in run_by(WHEEL) if c.startswith("jupyter")]
    port, token = free_port(), secrets.token_hex(16)
    extra = [f"--port={port}", "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}", "--no-browser"]
    command = [str(venv["bin"] / "jupyter"), *shlex.split(line)[1:], *extra, *(["--allow-root"] if os.geteuid() == 0 else [])]
    with open(venv["cwd"] / "lab.log", "wb") as log:
        lab = subprocess.Popen(command, cwd=venv["cwd"], env=venv["env"], stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: answers(f"{base}/api/status?token={token}") or lab.poll() is not None, 120,
                   "jupyter lab to serve")
        assert lab.poll() is None, (venv["cwd"] / "lab.log").read_text()[-3000:]
        assert "JupyterLab" in urllib.request.urlopen(f"{base}/lab?token={token}", timeout=30).read().decode()
        connection = json.loads(urllib.request.urlopen(f"{base}/flinkbench/connection?token={token}", timeout=30).read())
        assert isinstance(connection, dict), connection  # the panel's server extension answers
    finally:
        lab.terminate()
        lab.wait(60)


def answers(url: str) -> bool:
    try:
        return urllib.request.urlopen(url, timeout=5).status == 200
    except OSError:
        return False

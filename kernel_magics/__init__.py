"""Flinkbench in Jupyter: ``%load_ext kernel_magics`` gives ``%flink`` and ``%%flink``.

Heavy imports (IPython, Bokeh, widgets) happen only when the extension loads, so the package is
cheap to import for other users of it (e.g. the Jupyter server extension).
"""

LABEXTENSION = "flinkbench-jupyterlab"


def _jupyter_labextension_paths() -> list[dict]:
    """Where the prebuilt side panel is (for ``jupyter labextension develop``; a wheel installs it as data)."""
    return [{"src": "labextension", "dest": LABEXTENSION}]


def load_ipython_extension(ipython) -> None:
    try:
        from kernel_magics.magics import FlinkMagics
    except ImportError as err:  # a runtime-only install: the notebook side is an extra
        raise ImportError(f"%load_ext kernel_magics needs Flinkbench's Jupyter extra ({err}): "
                          "pip install 'flinkbench[jupyter]'") from None

    ipython.register_magics(FlinkMagics)


def unload_ipython_extension(ipython) -> None:
    from kernel_magics.session import drop_session

    drop_session(ipython)


def current_session():
    """The FlinkSession of the running IPython kernel (its client, model, jobs and views)."""
    from IPython import get_ipython

    from kernel_magics.session import session_for

    shell = get_ipython()
    if shell is None:
        raise RuntimeError("no IPython shell is running here")
    return session_for(shell)

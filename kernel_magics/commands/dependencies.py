"""``%flink add-file PATH``: a Python file or folder that ships with every job the kernel submits from then on
(Flink's ``python.files``, as ``t_env.add_python_file`` sets it for one environment): its modules load in the
kernel and on every TaskManager, so ``CREATE FUNCTION f AS 'module.fn' LANGUAGE PYTHON`` and functions that
import it run there (runtime.python_dependencies ships it)."""
from __future__ import annotations

import os

from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from kernel_magics.commands.subcommand import subcommand
from kernel_magics.errors import FlinkError
from kernel_magics.table_env import kernel_python_files


@subcommand("add-file")
@magic_arguments(name="flink add-file")
@argument("path", help="a Python file or a folder (a package, or a folder of modules)")
def add_file(session, line: str):
    """Ship a Python file or folder with every job this kernel submits from now on (python.files)."""
    args = parse_argstring(add_file, line)
    path = os.path.abspath(os.path.expanduser(args.path))
    if not os.path.exists(path):
        raise FlinkError(f"no file or folder {args.path!r} (from {os.getcwd()})")
    files = kernel_python_files(session)
    if path not in files:
        files.append(path)
    from runtime.sql.user_functions import search_python_files

    search_python_files(path)  # the kernel imports its modules too (CREATE FUNCTION resolves them here first)
    print(f"{path} ships with this kernel's jobs (python.files: {len(files)} path{'s' if len(files) > 1 else ''})")

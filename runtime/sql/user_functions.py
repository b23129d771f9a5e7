"""Python functions in SQL: registered as PyFlink registers them, and a query's calls resolved to them.

Registering (``t_env.create_temporary_system_function``, ``create_temporary_function`` and ``CREATE TEMPORARY
[SYSTEM] FUNCTION f AS 'module.fn' LANGUAGE PYTHON``) checks the declared types and names each function in
Spark SQL by its name and a digest of its body, so that two functions of one name in two jobs never meet in
a TaskManager's Spark session. Calls resolve in Flink's order: temporary system functions, then built-ins,
then temporary catalog functions; a path (``default_catalog.default_database.f``) names a catalog function.
A scalar call becomes ``CAST(<spark name>(args) AS <result type>)`` (the cast types the call for planning;
Spark's value has that type already), an aggregate call a :class:`UserAggregate` that the aggregation
planner reads; table functions are resolved where LATERAL TABLE is planned (runtime.sql.lateral).
"""
from __future__ import annotations

import hashlib
import importlib
import re
from collections.abc import Callable

from sqlglot import exp

from runtime.sql.catalog import CATALOG, DATABASE, Catalog, FunctionDef
from runtime.sql.errors import SqlError, SqlValidationError, UnsupportedSqlError
from runtime.sql.types import parse_type, spark_type

NULLARY = "__0"  # a call without arguments gets one placeholder argument (Arrow UDFs count rows by their inputs)
SPARK_NAME = re.compile(r"\b([A-Za-z_]\w*__py[0-9a-f]{8}(?:__0)?)\s*\(", re.I)  # sqlglot writes calls upper case
Error = Callable[..., SqlError]  # Converter.error: (node, message, cls) -> a positioned SqlError


class UserAggregate(exp.Anonymous, exp.AggFunc):
    """A call of a Python aggregate function: ``this`` is its name (as messages show the call), ``function`` its
    Spark name, ``expressions`` its arguments."""
    arg_types = {"this": True, "expressions": False, "function": True}

    def sql(self, dialect=None, copy: bool = True, **opts) -> str:  # type: ignore[override]
        """The call as the query wrote it (``name(args)``), for messages."""
        call = exp.Anonymous(this=self.this, expressions=[e.copy() for e in self.expressions])
        return call.sql(dialect, copy, **opts)


def define(name: str, function, system: bool) -> FunctionDef:
    """A FunctionDef for ``function`` (a udf/udtf/udaf wrapper; a plain callable is a pandas scalar function
    of STRING, the form create_temporary_function took before): its types read, its Spark name given.
    SqlValidationError names the function and what is wrong."""
    from runtime.udf import UserDefinedFunctionWrapper

    if not isinstance(function, UserDefinedFunctionWrapper):
        raise SqlValidationError(f"function {name!r}: expected a function made by udf(), udtf() or udaf() "
                                 f"(runtime.udf), got {type(function).__name__}")
    if "." in name and not system:
        name = _catalog_name(name)
    elif not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise SqlValidationError(f"function name {name!r} is not a simple name")
    result = _spark_type(name, function.result_type, "result type")
    for declared in function.input_types or []:
        _spark_type(name, declared, "input type")
    function = function.named(name)
    return FunctionDef(name.lower(), function, result, system, f"{name.lower()}__py{_digest(name, function)}")


def _catalog_name(path: str) -> str:
    parts = [p.strip("`") for p in path.split(".")]
    if len(parts) > 3 or parts[:-1] != [CATALOG, DATABASE][3 - len(parts):]:
        raise SqlValidationError(f"function path {path!r}: there is one catalog ({CATALOG!r}) with one database "
                                 f"({DATABASE!r})")
    return parts[-1]


def _spark_type(name: str, declared: str, what: str) -> str:
    try:
        return spark_type(parse_type(declared))
    except Exception as err:  # noqa: BLE001 - sqlglot's parse errors and ours alike
        raise SqlValidationError(f"function {name!r}: its {what} {declared!r} is not a SQL type "
                                 f"({str(err).splitlines()[0]})") from None


def _digest(name: str, function) -> str:
    """Eight hex digits of the pickled function: SqlValidationError if it cannot be pickled for the cluster."""
    import cloudpickle

    try:
        body = cloudpickle.dumps(function)
    except Exception as err:  # noqa: BLE001 - whatever pickling the user's object raises
        raise SqlValidationError(f"function {name!r} cannot be sent to the TaskManagers: pickling it failed "
                                 f"({type(err).__name__}: {err})") from None
    return hashlib.sha1(body).hexdigest()[:8]


def import_function(name: str, path: str, python_files: str = ""):
    """The function ``module.attribute`` names (CREATE FUNCTION ... AS 'path'), found as Python finds it or among
    the job's ``python.files`` (as Flink finds it there); SqlValidationError naming the function and why it cannot
    be had (no module, no attribute, not a udf/udtf/udaf)."""
    from runtime.udf import UserDefinedFunctionWrapper

    for listed in (p.strip() for p in python_files.split(",") if p.strip()):
        search_python_files(listed)
    module, _, attribute = path.rpartition(".")
    if not module or not attribute:
        raise SqlValidationError(f"function {name!r}: {path!r} is not 'module.function'")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except ImportError as err:
        raise SqlValidationError(f"function {name!r}: cannot import module {module!r} ({err}); ship it with "
                                 "add_python_file or %flink add-file") from None
    except AttributeError:
        raise SqlValidationError(f"function {name!r}: module {module!r} has no {attribute!r}") from None
    except Exception as err:  # noqa: BLE001 - the module's own code failed while importing
        raise SqlValidationError(f"function {name!r}: importing module {module!r} raised "
                                 f"{type(err).__name__}: {err}") from None
    if not isinstance(found, UserDefinedFunctionWrapper):
        what = "a class" if isinstance(found, type) else f"a {type(found).__name__}"
        raise SqlValidationError(f"function {name!r}: {path} is {what}, not a function made by udf(), udtf() or "
                                 "udaf()")
    return found


def search_python_files(path: str) -> None:
    """Where ``python.files`` puts a path's modules on the TaskManagers, on this process's path too: a file's
    folder, a folder's parent (its package) and the folder itself (its modules)."""
    import os
    import sys

    for folder in ([os.path.dirname(path)] if os.path.isfile(path) else [os.path.dirname(path), path]):
        if folder and folder not in sys.path:
            sys.path.append(folder)


# -- resolving calls ----------------------------------------------------------------------------------
def lookup(catalog: Catalog, name: str, builtin: bool) -> FunctionDef | None:
    """The Python function an unqualified call of ``name`` means, in Flink's order: a temporary system
    function, else (when ``name`` is no built-in) a temporary catalog function."""
    found = catalog.system_functions.get(name.lower())
    if found is None and not builtin:
        found = catalog.functions.get(name.lower())
    return found


def resolve(ast: exp.Expr, catalog: Catalog, error: Error) -> exp.Expr:
    """``ast`` with calls of Python functions rewritten (scalar: a cast Spark call; aggregate: UserAggregate),
    deepest first so that arguments are resolved before the calls that take them."""
    if not (catalog.functions or catalog.system_functions):
        return ast
    for node in list(ast.walk())[::-1]:
        found = _resolved_call(node, catalog)
        if found is None:
            continue
        fdef, args = found
        new = _call(fdef, args, node, error)
        if node is ast:
            return new
        node.replace(new)
    return ast


def _resolved_call(node: exp.Expr, catalog: Catalog) -> tuple[FunctionDef, list[exp.Expr]] | None:
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Anonymous):
        qualifier = node.this.sql(dialect="spark").replace("`", "")
        fdef = catalog.functions.get(_catalog_name(f"{qualifier}.{node.expression.name}").lower())
        return (fdef, list(node.expression.expressions)) if fdef else None
    if not isinstance(node, exp.Func) or isinstance(node, UserAggregate) or _in_from_clause(node):
        return None
    if isinstance(node.parent, exp.Dot) and node.parent.expression is node:
        return None  # the call of a path: resolved with its Dot
    if isinstance(node, exp.Anonymous):
        fdef = lookup(catalog, node.name, _is_builtin(node.name))
        return (fdef, list(node.expressions)) if fdef else None
    names = written_names(node)
    builtin = any(_is_builtin(n) for n in names)  # sqlglot knows more functions than Flink has (MEDIAN)
    for name in names:
        fdef = lookup(catalog, name, builtin)
        if fdef is not None:
            return fdef, _arguments(node)
    return None


def _in_from_clause(node: exp.Expr) -> bool:
    """A call LATERAL TABLE(...) makes, or one in a FROM item (window table functions): planned there."""
    parent = node.parent
    if isinstance(parent, exp.Anonymous) and parent.name.upper() == "TABLE" and isinstance(parent.parent, exp.Lateral):
        return True
    return node.find_ancestor(exp.Table) is not None


def written_names(node: exp.Func) -> set[str]:
    """The names a call parsed into ``node``'s class may have been written with."""
    from runtime.sql.dialect import Flink

    names = {node.sql_name(), *type(node)._sql_names}
    names |= {n for n, builder in Flink.Parser.FUNCTIONS.items() if getattr(builder, "__self__", None) is type(node)}
    return {n.upper() for n in names}


def _is_builtin(name: str) -> bool:
    from runtime.sql.builtins import builtin_names

    return name.upper() in builtin_names()


def _arguments(node: exp.Func) -> list[exp.Expr]:
    args: list[exp.Expr] = []
    for key in type(node).arg_types:
        value = node.args.get(key)
        args += value if isinstance(value, list) else [value] if isinstance(value, exp.Expr) else []
    return args


def _call(fdef: FunctionDef, args: list[exp.Expr], node: exp.Expr, error: Error) -> exp.Expr:
    """The resolved form of a call of ``fdef`` with ``args`` (cast to its declared input types)."""
    if fdef.kind == "table":
        raise error(node, f"function {fdef.name} is a table function: call it in FROM as LATERAL TABLE({fdef.name}"
                          "(...))", SqlValidationError)
    args = typed_arguments(fdef, args, node, error)
    if fdef.kind == "aggregate":
        if node.find_ancestor(exp.Window) is not None:
            raise error(node, f"the Python aggregate function {fdef.name} cannot be used in OVER",
                        UnsupportedSqlError)
        return UserAggregate(this=fdef.name, expressions=args, function=exp.Literal.string(fdef.spark_name))
    spark_name = fdef.spark_name + ("" if args else NULLARY)
    call = exp.Anonymous(this=spark_name, expressions=args or [exp.Literal.number(0)])
    # the node the dialect parses CAST(...) into (sqlglot's Spark parser makes it a TryCast without ``safe``), so
    # the function registry takes the cast for the one a query writes
    return exp.TryCast(this=call, to=exp.DataType.build(fdef.result_type, dialect="spark"))


def typed_arguments(fdef: FunctionDef, args: list[exp.Expr], node: exp.Expr, error: Error) -> list[exp.Expr]:
    """``args`` cast to the function's declared input types, when it declares them (as Flink casts them)."""
    declared = fdef.function.input_types
    if declared is None:
        problem = fdef.function.arity_problem(len(args))
        if problem:
            raise error(node, f"function {fdef.name} cannot take {len(args)} argument(s): {problem}",
                        SqlValidationError)
        return [a.copy() for a in args]
    if len(declared) != len(args):
        raise error(node, f"function {fdef.name} takes {len(declared)} argument(s) (its input_types), got "
                          f"{len(args)}", SqlValidationError)
    return [exp.Cast(this=a.copy(), to=exp.DataType.build(spark_type(parse_type(t)), dialect="spark"))
            for a, t in zip(args, declared)]


def called_names(catalog: Catalog) -> set[str]:
    """The names a resolved query calls Python functions by, for the built-ins' check to let pass: table
    functions by their own names (runtime.sql.lateral resolves them), the others by their Spark names."""
    return {name for f in catalog.all_functions() for name in (f.name, f.spark_name, f.spark_name + NULLARY)}


def by_spark_name(catalog: Catalog) -> dict[str, FunctionDef]:
    """Every registered function under its Spark name."""
    return {f.spark_name: f for f in catalog.all_functions()}


def called_in(texts: list[str | None], functions: dict[str, FunctionDef]) -> dict[str, FunctionDef]:
    """The scalar functions Spark SQL ``texts`` call, by the name they are called with there."""
    called = {}
    for text in texts:
        for name in (n.lower() for n in SPARK_NAME.findall(text or "")):
            fdef = functions.get(name.removesuffix(NULLARY))
            if fdef is not None and fdef.kind == "scalar":
                called[name] = fdef
    return called

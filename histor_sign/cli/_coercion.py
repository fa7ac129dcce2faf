"""Parameter coercion without pydantic, for the values every command line actually carries.

typer (0.29 here) turns each parameter's value into its annotated type through a pydantic
``TypeAdapter`` built on the first value it sees: for one ``histor-sign`` command that is
an import of pydantic and a dozen adapters — about 0.4 s of a busy machine, more than the
rest of the start-up together, on every run of every command (a proxy a host starts for
each session pays it each time).

:func:`install` has typer give each parameter a coercion that does the same for the plain
cases this CLI uses — ``str``, ``bool``, ``int``/``float`` written as plain decimals,
``Path``, enum choices and lists of these — with typer's own helpers for paths and choices
(which check ``exists``/``dir_okay``/… exactly as typer does). Anything else, and *any*
value the fast way does not accept, goes to typer's own coercion, built then: so every
error message, and every value outside the plain cases, is typer's, unchanged. The fast
way is exact for what it accepts (``int("12")`` and ``float("1.5")`` are what pydantic's
lax mode gives for those strings).

This uses typer internals (``typer.core.build_runtime_param``, which
``_TyperParameter.get_runtime_param`` calls, and ``typer._coercion.RuntimeParam``); where
they are missing (another typer), :func:`install` does nothing and typer works as it
always did, only slower. Only this CLI runs typer in its process.
"""


import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

#: A converter: (value, parameter, context) → the coerced value; raises to hand over.
Convert = Callable[[Any, Any, Any], Any]

_INT = re.compile(r"-?[0-9]{1,30}")
_FLOAT = re.compile(r"-?[0-9]{1,30}(?:\.[0-9]{1,30})?")


def install() -> None:
    """Make typer build the fast coercion for every parameter where it applies (typer
    builds a parameter's coercion on its first value). Idempotent; a no-op without the
    typer internals it relies on."""
    try:
        import typer.core
        from typer._coercion import RuntimeParam
    except ImportError:  # another typer: its own coercion, unchanged
        return
    found = getattr(typer.core, "build_runtime_param", None)
    if found is None or getattr(found, "histor_sign_fast", False):
        return
    typer_build: Callable[[Any], Any] = found

    @dataclass(frozen=True)
    class FastParam(RuntimeParam):
        """One parameter's fast coercion, falling back to typer's own (built then)."""

        convert: Convert

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            try:
                return self.convert(value, param, ctx)
            except Exception:  # typer's own coercion decides, and words the error
                real = typer_build(param.type_descriptor)
                return real._coerce_value(value, param=param, ctx=ctx)

    def build(descriptor: Any) -> Any:
        convert = (None if getattr(descriptor, "file_annotation", None) is not None
                   else _converter(descriptor.annotation, descriptor.parameter_info))
        if convert is None:
            return typer_build(descriptor)
        return FastParam(annotation=descriptor.annotation,
                         parameter_info=descriptor.parameter_info, convert=convert)

    build.histor_sign_fast = True  # type: ignore[attr-defined]
    typer.core.build_runtime_param = build  # type: ignore[attr-defined]


def _converter(annotation: Any, info: Any) -> Convert | None:
    """The fast converter for one annotation, or None where typer's own must decide."""
    if get_origin(annotation) is list:
        (item,) = get_args(annotation) or (None,)
        leaf = _leaf(item, info) if item is not None else None
        if leaf is None:
            return None
        each: Convert = leaf

        def convert_list(value: Any, param: Any, ctx: Any) -> list[Any]:
            items = value if isinstance(value, (list, tuple)) else [value]
            return [each(v, param, ctx) for v in items]

        return convert_list
    return _leaf(annotation, info)


def _leaf(annotation: Any, info: Any) -> Convert | None:
    if getattr(info, "parser", None) is not None:
        return None
    if annotation is str:
        return _to_str
    if annotation is bool:  # a flag's value is a bool already; None is typer's to handle
        return _to_bool
    if annotation is int or annotation is float:
        if info.min is not None or info.max is not None or info.clamp:
            return None
        return _to_int if annotation is int else _to_float
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return _to_choice(tuple(annotation), bool(info.case_sensitive))
    if isinstance(annotation, type) and issubclass(annotation, Path) and (
            info.path_type is None or info.path_type is annotation):
        return _to_path(annotation, info)
    return None


def _to_str(value: Any, _param: Any, _ctx: Any) -> str:
    if type(value) is not str:
        raise TypeError("not a plain str")
    return value


def _to_bool(value: Any, _param: Any, _ctx: Any) -> bool:
    if type(value) is not bool:
        raise TypeError("not a bool")
    return value


def _to_int(value: Any, _param: Any, _ctx: Any) -> int:
    if type(value) is int:
        return value
    if type(value) is str and _INT.fullmatch(value):
        return int(value)
    raise TypeError("not a plain decimal integer")


def _to_float(value: Any, _param: Any, _ctx: Any) -> float:
    if type(value) is float:
        return value
    if type(value) is int:
        return float(value)
    if type(value) is str and _FLOAT.fullmatch(value):
        return float(value)
    raise TypeError("not a plain decimal number")


def _to_choice(choices: tuple[Enum, ...], case_sensitive: bool) -> Convert:
    from typer._param_types import coerce_cli_choice

    def convert(value: Any, _param: Any, ctx: Any) -> Any:
        return coerce_cli_choice(value, choices=choices, case_sensitive=case_sensitive,
                                 ctx=ctx)

    return convert


def _to_path(path_type: type[Path], info: Any) -> Convert:
    from typer._param_types import coerce_cli_path

    def convert(value: Any, param: Any, ctx: Any) -> Any:
        if type(value) is str and value:
            value = path_type(value)
        if not isinstance(value, path_type):
            raise TypeError("not a path")
        return coerce_cli_path(value, info, path_type=path_type, param=param, ctx=ctx)

    return convert

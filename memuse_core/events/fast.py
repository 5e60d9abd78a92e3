"""A fast decoder for the three hot event types of a log (model_call, tool_result, memory_delivery).

The pydantic models (`events.records`, `events.values`) stay the contract and the only source of
bad-input messages. This module derives msgspec structs from them at import time (same field
names, order, defaults, bounds; no second copy of the schema): `decode(line)` returns a struct
that the store's writer reads like the model, or raises `FAST_ERRORS` for anything it does not
take, and the caller then validates the line with pydantic (so results and errors are unchanged).

The fast path is narrower than the models, never wider: unknown fields are refused (the models
that allow extra fields get them through pydantic), a message's content must be a string or null
(content parts go through pydantic), bools are never numbers, ints are never floats with a zero
fraction, floats must be finite, and the other seven event types are not decoded at all. Model
validators that run after validation (the digest fill-in of entries, placements and proofs) run
as the structs' `__post_init__`, the very same functions. Deriving refuses any model feature it
does not translate (field validators, aliases, other validators), so the two cannot drift apart
silently; `tests/test_events_fast.py` compares the stored rows of both paths on real and demo logs.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types as at
import msgspec
from pydantic import BaseModel, Strict
from pydantic.fields import FieldInfo

from .records import MemoryDelivery, ModelCall, ToolResultEvent
from .values import Message

FAST_ERRORS = (msgspec.ValidationError, msgspec.DecodeError)
"""What `decode` raises for a line it does not take (the caller falls back to pydantic)."""

_FLOAT_MAX = 1.7976931348623157e308
_NARROWER: dict[tuple[type[BaseModel], str], Any] = {(Message, "content"): str | None}
"""Fields the fast path takes in a narrower type than the model (the rest goes to pydantic)."""

_STRUCTS: dict[type[BaseModel], Any] = {}
MODEL_OF: dict[type, type[BaseModel]] = {}
"""Fast struct class -> the model it stands for."""


def _bounds(metas: tuple[Any, ...]) -> dict[str, Any]:
    kw: dict[str, Any] = {}
    for m in metas:
        for x in m.metadata if isinstance(m, FieldInfo) else [m]:
            if isinstance(x, at.Ge):
                kw["ge"] = x.ge
            elif isinstance(x, at.Le):
                kw["le"] = x.le
            elif not isinstance(x, Strict):  # msgspec is always strict
                raise TypeError(f"events.fast cannot translate the constraint {x!r}")
    return kw


def _type(ann: Any, metas: tuple[Any, ...] = ()) -> Any:
    """The msgspec type of a pydantic annotation (with its constraints)."""
    origin = get_origin(ann)
    if origin is Annotated:
        base, *more = get_args(ann)
        return _type(base, (*metas, *more))
    kw = _bounds(metas)
    if ann is float:  # the models refuse NaN and infinities (`allow_inf_nan=False`)
        kw.setdefault("ge", -_FLOAT_MAX)
        kw.setdefault("le", _FLOAT_MAX)
    out: Any
    if origin in (Union, types.UnionType):
        out = Union[tuple(_type(a) for a in get_args(ann))]
    elif origin is list:
        out = list[_type(get_args(ann)[0])]  # type: ignore[misc]
    elif origin is dict:
        k, v = get_args(ann)
        out = dict[_type(k), _type(v)]  # type: ignore[misc]
    elif isinstance(ann, type) and issubclass(ann, BaseModel):
        out = _struct(ann)
    elif ann in (str, int, float, bool, type(None), Any) or origin is Literal:
        out = ann
    else:
        raise TypeError(f"events.fast cannot translate the type {ann!r}")
    return Annotated[out, msgspec.Meta(**kw)] if kw else out


def _struct(model: type[BaseModel], tag: str | None = None) -> Any:
    """The struct of a model (cached), with `tag` as the value of its `type` field for events."""
    if model in _STRUCTS:
        return _STRUCTS[model]
    deco = model.__pydantic_decorators__
    after = [d.func for d in deco.model_validators.values() if d.info.mode == "after"]
    if (
        deco.field_validators
        or deco.field_serializers
        or deco.model_serializers
        or deco.root_validators
        or len(after) != len(deco.model_validators)
        or model.model_config.get("extra") not in ("forbid", "allow")
    ):
        raise TypeError(f"events.fast cannot translate the validators of {model.__name__}")
    fields: list[Any] = []
    for name, f in model.model_fields.items():
        if (tag is not None and name == "type") or f.alias or f.validation_alias:
            if name != "type":
                raise TypeError(f"events.fast cannot translate the alias of {model.__name__}.{name}")
            continue
        typ = _NARROWER.get((model, name)) or _type(f.annotation, tuple(f.metadata))
        if f.is_required():
            fields.append((name, typ))
        elif f.default_factory is not None:
            factory: Any = f.default_factory
            if isinstance(factory, type) and issubclass(factory, BaseModel):
                factory = _struct(factory)
            fields.append((name, typ, msgspec.field(default_factory=factory)))
        else:
            fields.append((name, typ, f.default))
    namespace: dict[str, Any] = {"__pydantic_extra__": None, "model_dump_json": _dump_json}
    if after:
        namespace["__post_init__"] = _post_init(after)
    s = msgspec.defstruct(
        f"Fast{model.__name__}",
        fields,
        kw_only=True,
        forbid_unknown_fields=True,
        tag_field="type" if tag is not None else None,
        tag=tag,
        namespace=namespace,
        module=__name__,
    )
    _STRUCTS[model] = s
    MODEL_OF[s] = model
    return s


def _post_init(funcs: list[Callable[[Any], Any]]) -> Callable[[Any], None]:
    def post_init(self: Any) -> None:
        for fn in funcs:
            fn(self)

    return post_init


def _plain_of(cls: Any) -> Callable[[Any], dict[str, Any]]:
    """A function giving a struct of `cls` as a dict without its None fields (pydantic's
    `exclude_none`), nested structs (alone or in lists) likewise; built once per class."""
    spec: list[tuple[str, Callable[[Any], Any] | None]] = []
    for f in msgspec.structs.fields(cls):
        inner = msgspec.inspect.type_info(f.type)
        if isinstance(inner, msgspec.inspect.UnionType):  # `X | None`
            kinds = [t for t in inner.types if not isinstance(t, msgspec.inspect.NoneType)]
            inner = kinds[0] if len(kinds) == 1 else inner
        if isinstance(inner, msgspec.inspect.StructType):
            spec.append((f.name, _plain_of(inner.cls)))
        elif isinstance(inner, msgspec.inspect.ListType) and isinstance(
            inner.item_type, msgspec.inspect.StructType
        ):
            spec.append((f.name, _each(_plain_of(inner.item_type.cls))))
        else:
            spec.append((f.name, None))

    def plain(obj: Any) -> dict[str, Any]:
        out = {}
        for k, sub in spec:
            v = getattr(obj, k)
            if v is not None:
                out[k] = v if sub is None else sub(v)
        return out

    return plain


def _each(fn: Callable[[Any], Any]) -> Callable[[list[Any]], list[Any]]:
    def each(xs: list[Any]) -> list[Any]:
        return [fn(x) for x in xs]

    return each


def _dump_json(self: Any, *, exclude_none: bool = False) -> str:
    """`model_dump_json(exclude_none=True)` of the model (the only form the store writes)."""
    if not exclude_none:
        raise NotImplementedError("events.fast structs dump with exclude_none=True only")
    cls = type(self)
    plain = _PLAIN.get(cls)
    if plain is None:
        plain = _PLAIN[cls] = _plain_of(cls)
    return _ENCODE(plain(self)).decode()


_PLAIN: dict[type, Callable[[Any], dict[str, Any]]] = {}
_ENCODE = msgspec.json.Encoder().encode

FAST_CALL = _struct(ModelCall, "model_call")
FAST_TOOL_RESULT = _struct(ToolResultEvent, "tool_result")
FAST_DELIVERY = _struct(MemoryDelivery, "memory_delivery")

decode: Callable[[bytes], Any] = msgspec.json.Decoder(
    Union[FAST_CALL, FAST_TOOL_RESULT, FAST_DELIVERY]
).decode
"""One event line as a fast struct; raises one of `FAST_ERRORS` for anything it does not take."""

"""The REST front's wire types: a JSON document as the client sent it (unvalidated: every operation checks the
shape it needs before use, see iceberg._obj and the PyIceberg models) and as the server answers it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

# what json.loads returns: a request body is one of these until an operation has checked its shape
JsonValue: TypeAlias = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]
# what json.dumps takes, read-only (so a list[str] or a dict[str, str] is one: Sequence and Mapping are covariant)
JsonDoc: TypeAlias = None | bool | int | float | str | Sequence["JsonDoc"] | Mapping[str, "JsonDoc"]
JsonObject: TypeAlias = Mapping[str, JsonDoc]
# an operation's answer: a JSON object, JSON text already serialized (a table's metadata), or none (204)
Answer: TypeAlias = JsonObject | str | None

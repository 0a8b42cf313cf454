"""The REST front's wire types: a JSON document as the client sent it (unvalidated: every operation checks the
shape it needs before use) and as the server answers."""

from __future__ import annotations

from typing import TypeAlias

# what json.loads can return; a request body is one of these until an operation has checked its shape
JsonValue: TypeAlias = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]
JsonObject: TypeAlias = dict[str, JsonValue]

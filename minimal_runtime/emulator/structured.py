"""Structured output: an answer constrained to a JSON schema.

[SO] https://platform.claude.com/docs/en/build-with-claude/structured-outputs: with
``output_config.format = {"type": "json_schema", "schema": {...}}`` (the older top-level
``output_format`` is still accepted "for a transition period") the answer's text is JSON that
conforms to the schema: the API constrains decoding, so a conforming answer is a property of the
API, not of the model. The schema language is a subset of JSON Schema: ``type`` (one or a list),
``enum``, ``const``, ``properties``, ``required``, ``additionalProperties``, ``items``,
``anyOf``/``allOf``, ``$ref`` into ``$defs``/``definitions``, string ``format``s. What it does not
support is a 400 (``unsupported``): numeric bounds (``minimum``, ``maximum``, ``exclusiveMinimum``,
``exclusiveMaximum``, ``multipleOf``), string lengths (``minLength``, ``maxLength``), ``minItems``
above 1 ("minItems (0 or 1 only)"), ``additionalProperties`` other than ``false`` (the SDKs "Add
additionalProperties: false to all objects" before sending), and a recursive ``$ref`` [SO "How SDK
transformation works", "API-enforced constraints"; issue 37 item 16]. Not emulated: the system
prompt the API injects for the format, whose size no source we read gives.

Offline the answer comes from a policy (a simulation), so the emulator checks it: a policy whose
answer breaks the schema is a bug in the simulation, answered as a 500 that says so. The default
policy answers with ``stand_in(schema)``: the smallest value that conforms (required properties
only, the first enum value, ``minItems`` items), labelled as simulated where a string allows it.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import bad_request

_FORMATS = {"date-time": "2026-01-01T00:00:00Z", "date": "2026-01-01", "time": "00:00:00", "email": "a@example.com",
            "uri": "https://example.com/", "uuid": "00000000-0000-4000-8000-000000000000", "hostname": "example.com",
            "ipv4": "192.0.2.1", "ipv6": "2001:db8::1"}
_TYPES = {"string": str, "boolean": bool, "null": type(None), "object": dict, "array": list}


def schema_of(request: dict) -> dict | None:
    """The request's output schema, or None; a malformed ``format`` is the 400 the API answers."""
    fmt = (request.get("output_config") or {}).get("format")
    where = "output_config.format"
    if fmt is None and request.get("output_format") is not None:
        fmt, where = request["output_format"], "output_format"
    if fmt is None:
        return None
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema" or not isinstance(fmt.get("schema"), dict):
        raise bad_request(f"{where}: expected {{'type': 'json_schema', 'schema': {{...}}}}")
    return fmt["schema"]


_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength")


def unsupported(schema: Any, root: dict, where: str = "schema", refs: tuple = ()) -> str | None:
    """The first schema feature structured outputs do not support, named by its place, or None."""
    if not isinstance(schema, dict):
        return None
    if "$ref" in schema:
        ref = schema["$ref"]
        if ref in refs:
            return f"{where}.$ref: recursive schemas are not supported ({ref})"
        try:
            target = _resolve(ref, root)
        except (KeyError, TypeError):
            return f"{where}.$ref: {ref!r} does not resolve"
        return unsupported(target, root, where, (*refs, ref))
    for key in _BOUNDS:
        if key in schema:
            return f"{where}.{key}: not supported"
    if isinstance(schema.get("minItems"), int) and schema["minItems"] > 1:
        return f"{where}.minItems: only 0 or 1 is supported"
    if "additionalProperties" in schema and schema["additionalProperties"] is not False:
        return f"{where}.additionalProperties: must be false"
    properties = schema.get("properties")
    for name, sub in properties.items() if isinstance(properties, dict) else ():
        if (why := unsupported(sub, root, f"{where}.properties.{name}", refs)):
            return why
    for key in ("items", "additionalItems"):
        if (why := unsupported(schema.get(key), root, f"{where}.{key}", refs)):
            return why
    for key in ("anyOf", "allOf", "oneOf"):
        for k, sub in enumerate(schema.get(key) or [] if isinstance(schema.get(key), list) else []):
            if (why := unsupported(sub, root, f"{where}.{key}.{k}", refs)):
                return why
    return None


# Schema complexity limits [SO "Schema complexity limits"; issue 63 item 7], summed across every strict
# schema of a request (the strict tools' input schemas and the output format together): at most 24
# optional parameters (a property its object does not list in ``required``, anywhere in the tree,
# array ``items`` and ``$defs`` included) and at most 16 parameters with a union type (a ``type`` list
# or ``anyOf``). The live words, as clients quote them (public code comments quoting 400s, 2026).
MAX_OPTIONAL, MAX_UNIONS = 24, 16


def complexity(schema: Any) -> tuple[int, int]:
    """(optional parameters, union-typed parameters) in one schema's whole tree."""
    optional = unions = 0
    if isinstance(schema, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict):
            required = set(schema.get("required") or []) if isinstance(schema.get("required"), list) else set()
            optional += sum(name not in required for name in properties)
            unions += sum(isinstance(p, dict) and ("anyOf" in p or isinstance(p.get("type"), list) and len(p["type"]) > 1)
                          for p in properties.values())
        children = schema.values()
    elif isinstance(schema, list):
        children = schema
    else:
        return 0, 0
    for child in children:
        o, u = complexity(child)
        optional, unions = optional + o, unions + u
    return optional, unions


def check_complexity(schemas: list[Any]) -> None:
    """The 400 the API answers when the strict schemas of one request are too complex to compile."""
    optional = unions = 0
    for schema in schemas:
        o, u = complexity(schema)
        optional, unions = optional + o, unions + u
    if optional > MAX_OPTIONAL:
        raise bad_request(f"Schemas contains too many optional parameters ({optional}), which would make grammar "
                          "compilation inefficient. Reduce the number of optional parameters in your tool schemas "
                          f"or response format (limit: {MAX_OPTIONAL}).")
    if unions > MAX_UNIONS:
        raise bad_request(f"Schemas contains too many parameters with union types ({unions} parameters with type "
                          "arrays or anyOf), which would make grammar compilation inefficient. Reduce the number of "
                          f"parameters with union types (limit: {MAX_UNIONS} parameters with unions).")


def answer_violation(content: list[dict], schema: dict) -> str | None:
    """Why an answer's text breaks the schema, or None. A turn that calls a tool has not answered yet."""
    if any(b.get("type") == "tool_use" for b in content):
        return None
    text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
    try:
        value = json.loads(text)
    except ValueError:
        return f"the answer is not JSON: {text[:80]!r}"
    return violation(value, schema, schema)


def violation(value: Any, schema: Any, root: dict, path: str = "$") -> str | None:
    """The first place ``value`` breaks ``schema`` (``root`` resolves ``$ref``), or None."""
    if schema is True or schema == {}:
        return None
    if schema is False:
        return f"{path}: no value is allowed here"
    if "$ref" in schema:
        return violation(value, _resolve(schema["$ref"], root), root, path)
    for sub in schema.get("allOf", []):
        if (why := violation(value, sub, root, path)) is not None:
            return why
    if "anyOf" in schema and all(violation(value, sub, root, path) for sub in schema["anyOf"]):
        return f"{path}: matches none of anyOf"
    if "const" in schema and value != schema["const"]:
        return f"{path}: must be {schema['const']!r}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{path}: {value!r} is not one of {schema['enum']}"
    kinds = schema.get("type")
    if kinds is not None and not any(_is(value, k) for k in (kinds if isinstance(kinds, list) else [kinds])):
        return f"{path}: {type(value).__name__} is not of type {kinds}"
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                return f"{path}: required property {name!r} is missing"
        for name, item in value.items():
            if name in properties:
                sub = properties[name]
            elif schema.get("additionalProperties", True) is False:
                return f"{path}: property {name!r} is not allowed"
            else:
                sub = schema.get("additionalProperties", True)
            if (why := violation(item, sub, root, f"{path}.{name}")) is not None:
                return why
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            if (why := violation(item, schema["items"], root, f"{path}[{i}]")) is not None:
                return why
    return None


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES.get(kind, object))


def _resolve(ref: str, root: dict) -> Any:
    node: Any = root
    for part in ref.removeprefix("#/").split("/") if ref != "#" else []:
        node = node[part]
    return node


def stand_in(schema: Any, root: dict | None = None) -> Any:
    """The smallest value that conforms to ``schema``: what the default (simulated) policy answers."""
    root = schema if root is None else root
    if not isinstance(schema, dict):
        return None
    if "$ref" in schema:
        return stand_in(_resolve(schema["$ref"], root), root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("anyOf"):
        return stand_in(schema["anyOf"][0], root)
    if schema.get("allOf"):
        merged: dict = {}
        for sub in schema["allOf"]:
            sub = _resolve(sub["$ref"], root) if "$ref" in sub else sub
            merged = {**merged, **sub, "properties": {**merged.get("properties", {}), **sub.get("properties", {})},
                      "required": [*merged.get("required", []), *sub.get("required", [])]}
        return stand_in(merged, root)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: stand_in(properties.get(name, {}), root) for name in schema.get("required", [])}
    if kind == "array":
        return [stand_in(schema.get("items", {}), root) for _ in range(schema.get("minItems", 0))]
    return {"string": _FORMATS.get(schema.get("format"), "(simulated)"), "integer": 0, "number": 0,
            "boolean": False, "null": None}.get(kind)

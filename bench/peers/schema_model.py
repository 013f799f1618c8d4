"""A skill's output.schema.json as a pydantic model, the output type both peers take.

Covers the JSON Schema the bundled and bench skills use: an object with properties, `required`
and `additionalProperties: false`; strings (`minLength`, `maxLength`, `enum`, `pattern`);
numbers and integers (`minimum`, `maximum`); booleans; arrays of those (`minItems`,
`maxItems`); nested objects. Anything else is refused by name, so a peer never runs with a
looser output type than the skill's.
"""

from typing import Annotated, Any, List, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, create_model

IGNORED = {"$schema", "$id", "title", "description", "examples", "default"}


class UnsupportedSchema(ValueError):
    """A keyword or shape this converter does not translate."""


def _check_keys(schema: dict, allowed: set, where: str) -> None:
    unknown = set(schema) - allowed - IGNORED
    if unknown:
        raise UnsupportedSchema(f"{where}: keywords {sorted(unknown)} are not supported")


def _field_type(schema: dict, where: str, name: str) -> tuple[Any, dict]:
    kind = schema.get("type")
    if "enum" in schema:
        _check_keys(schema, {"type", "enum"}, where)
        return Literal[tuple(schema["enum"])], {}
    if kind == "string":
        _check_keys(schema, {"type", "minLength", "maxLength", "pattern", "format"}, where)
        limits = {
            "min_length": schema.get("minLength"),
            "max_length": schema.get("maxLength"),
            "pattern": schema.get("pattern"),
        }
        return str, limits
    if kind in ("number", "integer"):
        _check_keys(schema, {"type", "minimum", "maximum"}, where)
        limits = {"ge": schema.get("minimum"), "le": schema.get("maximum")}
        return (float if kind == "number" else int), limits
    if kind == "boolean":
        _check_keys(schema, {"type"}, where)
        return bool, {}
    if kind == "array":
        _check_keys(schema, {"type", "items", "minItems", "maxItems"}, where)
        item, item_limits = _field_type(schema.get("items", {}), f"{where}/items", name)
        if item_limits and any(v is not None for v in item_limits.values()):
            item = Annotated[item, Field(**{k: v for k, v in item_limits.items() if v is not None})]
        limits = {"min_length": schema.get("minItems"), "max_length": schema.get("maxItems")}
        return List[item], limits
    if kind == "object":
        return model_from_schema(schema, name.title().replace("_", ""), where), {}
    raise UnsupportedSchema(f"{where}: type {kind!r} is not supported")


def model_from_schema(schema: dict, name: str = "Output", where: str = "#") -> type[BaseModel]:
    """The pydantic model that accepts exactly what `schema` accepts (within the subset above)."""
    if schema.get("type") != "object":
        raise UnsupportedSchema(f"{where}: the output must be an object, not {schema.get('type')!r}")
    _check_keys(schema, {"type", "properties", "required", "additionalProperties"}, where)
    required = set(schema.get("required", []))
    fields = {}
    for prop, sub in schema.get("properties", {}).items():
        annotation, limits = _field_type(sub, f"{where}/properties/{prop}", prop)
        limits = {k: v for k, v in limits.items() if v is not None}
        if prop in required:
            fields[prop] = (annotation, Field(**limits))
        else:
            fields[prop] = (Optional[annotation], Field(default=None, **limits))
    extra = "forbid" if schema.get("additionalProperties") is False else "ignore"
    return create_model(name, __config__=ConfigDict(extra=extra), **fields)

"""StrictModel, the pydantic base of every scenario mapping (and of the web page's requests): an unknown key is an
error, true and false are not numbers, and a flag is true or false alone."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, data: Any) -> Any:
        """true and false are not numbers: pydantic reads them as 1 and 0, so 'concurrency: yes' ran one user; and
        a flag is true or false, not "yes" or 1, which pydantic also reads as true."""
        if isinstance(data, dict):
            for key, value in data.items():
                field = cls.model_fields.get(key) if isinstance(key, str) else None
                if field is None:
                    continue
                types = annotation_types(field.annotation)
                if isinstance(value, bool) and bool not in types:
                    if int not in types and float not in types:  # 'hardware: true' is not a number either
                        raise PydanticCustomError(
                            "string_type", "{key}: {value} is not text", {"key": key, "value": str(value).lower()}
                        )
                    raise PydanticCustomError(
                        "bool_for_number", "{key}: {value} is not a number", {"key": key, "value": str(value).lower()}
                    )
                if bool in types and value is not None and not isinstance(value, bool):
                    raise PydanticCustomError(
                        "bool_type", "{key}: {value} is not true or false", {"key": key, "value": repr(value)}
                    )
        return data


def annotation_types(annotation: Any) -> list[Any]:
    """The types an annotation may take (Optional, unions and Annotated unwrapped)."""
    args = getattr(annotation, "__args__", None)
    if args is None or getattr(annotation, "__origin__", None) in (dict, list, tuple):
        return [getattr(annotation, "__origin__", annotation)]
    return [t for a in args for t in annotation_types(a)]

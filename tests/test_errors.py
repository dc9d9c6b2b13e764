"""UnknownNameError's one line: a name of another type than text (a Python caller's 5 or None) is named, not an
AttributeError ('lower'), and a very long name is quoted by its start and its length, not echoed whole (a model name
of 900,000 characters had made a one-line error, and the web page's answer, of 900,128 bytes)."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.errors import ChipwiseError, UnknownNameError


@pytest.mark.parametrize("name", [5, None])
def test_a_name_of_another_type_is_named(name: object) -> None:
    error = UnknownNameError("pricing mode", name, ["on-demand", "spot"], hint="use one of on-demand, spot")
    assert str(error) == f"unknown pricing mode '{name}'. Fix: use one of on-demand, spot."
    assert error.suggestions == []


def test_a_list_given_as_a_name_reads_as_its_text() -> None:
    error = UnknownNameError("pricing mode", ["spot"], ["on-demand", "spot"], hint="use one of on-demand, spot")
    assert str(error) == "unknown pricing mode '['spot']'. Did you mean 'spot'? Fix: use one of on-demand, spot."


def test_a_name_of_100_characters_is_quoted_whole() -> None:
    name = "x" * 100
    assert str(UnknownNameError("model", name, ["llama-3.1-8b"], hint="run 'chipwise model list'")) == (
        f"unknown model '{name}'. Fix: run 'chipwise model list'."
    )


def test_a_longer_name_is_quoted_by_its_first_60_characters_and_its_length() -> None:
    error = UnknownNameError("model", "x" * 900_000, ["llama-3.1-8b"], hint="run 'chipwise model list'")
    assert str(error) == f"unknown model '{'x' * 60}'... (900,000 characters). Fix: run 'chipwise model list'."
    assert error.name == "x" * 900_000  # the name itself is kept whole for a caller that reads it


def test_a_long_region_is_one_short_line() -> None:
    """200,000 'é' as a region: 229 characters, where the line had held the whole name."""
    with pytest.raises(ChipwiseError) as raised:
        cw.tco("h100-sxm", region="é" * 200_000)
    assert str(raised.value).startswith(f"unknown region '{'é' * 60}'... (200,000 characters). Fix: use a cloud")
    assert len(str(raised.value)) == 229

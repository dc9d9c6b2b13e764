"""A model name longer than a file name may be (255 bytes) is one line naming it shortly: the path checks had raised
a raw OSError ('File name too long') from the API and the CLI."""

import pytest

from chipwise.api import model
from chipwise.errors import ChipwiseError, UnknownNameError


@pytest.mark.parametrize(
    ("name", "error", "start"),
    [
        ("x" * 300, UnknownNameError, "unknown model 'xxxx"),
        ("org/" + "x" * 300, UnknownNameError, "unknown model 'xxxx"),
        ("x" * 300 + ".json", ChipwiseError, "model config 'xxxx"),
    ],
)
def test_a_name_too_long_for_a_file_is_one_short_line(name: str, error: type[Exception], start: str) -> None:
    with pytest.raises(error) as caught:
        model(name)
    text = str(caught.value)
    assert text.startswith(start)
    assert "characters)" in text and len(text) < 400 and "\n" not in text

"""The API's SLO check reads a target's scenario name (ttft_p99_s, workload.slo.slo_key) as its own: a None under
it had passed to the reader, which named it 'null: not a time', a word the caller never wrote."""

from __future__ import annotations

import pytest

from chipwise import api
from chipwise.errors import ChipwiseError


@pytest.mark.parametrize(("key", "fix"), [("ttft_p99_s", "2s"), ("tpot_p50_s", "50ms")])
def test_a_none_target_under_the_s_name_is_refused_as_under_the_other(key: str, fix: str) -> None:
    with pytest.raises(ChipwiseError) as exc:
        api._slo({key: None})
    assert str(exc.value).startswith(f"slo[{key!r}] None is not a time. Fix: ")
    assert fix in str(exc.value) and str(exc.value).endswith(", or leave the key out.")
    with pytest.raises(ChipwiseError) as same:
        api._slo({key.removesuffix("_s"): None})
    assert str(same.value).replace(key.removesuffix("_s"), key) == str(exc.value)

"""Claim texts under a what-if say what the moved figures make true."""

from __future__ import annotations

import chipwise.api as cw


def _check(claims: object, cid: str) -> dict[str, str]:
    stack = [claims]
    while stack:
        o = stack.pop()
        if isinstance(o, dict):
            if o.get("id") == cid:
                return o
            stack.extend(o.values())
        elif isinstance(o, list):
            stack.extend(o)
    raise AssertionError(cid)


def test_nearly_4x_bandwidth_is_said_only_near_4x() -> None:
    """Trn3's HBM bandwidth halved makes the UltraServers' ratio 1.90x: it had still read "'nearly 4x memory
    bandwidth' (1.90x) is the version that holds"; at the catalog's 3.80x it does hold."""
    built_in = _check(cw.claims(only="1")["claims"], "1c")["why"]
    assert "'nearly 4x memory bandwidth' (3.80x) is the version that holds" in built_in
    halved = _check(cw.claims(sets=["trn3.hbm_bandwidth=x0.5"], only="1")["claims"], "1c")["why"]
    assert "not 4x, nor is the bandwidth nearly 4x (1.90x)" in halved and "version that holds" not in halved

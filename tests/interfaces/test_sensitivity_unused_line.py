"""`chipwise sensitivity`'s closing line counts the figures a deployment does not use apart from those at 0."""

from __future__ import annotations

import pytest

from chipwise.interfaces.cli.common import console
from chipwise.interfaces.cli.sensitivity_cmd import print_sensitivity


def _listed(name: str, kind: str) -> dict[str, object]:
    return {"figure": name, "value": 0.0, "unit": "W", "kind": kind, "reason": "-"}


def test_unused_figures_are_not_counted_as_zero(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two TP8 replicas on p5.48xlarge: the network's 100 W and $6,600 reported 0 had read '3 are 0, which a move by a
    share leaves at 0'; a detection time of 0 s is 0."""
    monkeypatch.setattr(console, "width", 200)
    result = {
        "metric": "cost",
        "metrics": {"cost": {"label": "$/M output tokens", "unit": "USD"}},
        "scenario_kind": "serve",
        "model": "m",
        "chips": 16,
        "hardware": "h100-sxm",
        "plan": {},
        "plan_held": False,
        "step": 0.1,
        "figures": [],
        "not_priced": [
            _listed("datacenter.opex.network_power_w_per_chip", "unused"),
            _listed("datacenter.capex.scaleup_network_usd_per_chip", "unused"),
            _listed("datacenter.capex.scaleout_network_usd_per_chip", "unused"),
            _listed("reliability.checkpoint.detection_time_s", "zero"),
        ],
        "baseline": {"cost": 12.37},
        "predictions": 1,
        "workers": 1,
        "seconds": 1.0,
    }
    print_sensitivity(result, 12)
    out = " ".join(capsys.readouterr().out.split())
    assert "1 is 0, which a move by a share leaves at 0; 3 are not used by this deployment, reported 0 whatever" in out
    assert "3 are 0" not in out

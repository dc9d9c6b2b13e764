"""plan serve under owned pricing pairs a TPU v6e with a GPU (providers.network_gap's owned rule, with the mode passed
down to the split's KV path): Llama 3.1 70B at 10 req/s, 1,024 in / 256 out, owned in eu-west-1, had been told its
b200>tpu-v6e split 'cannot both be bought' while the same table priced owned TPU v6e fleets."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.planner.serving_plan import plan_serving
from chipwise.workload.load import Load


def test_an_owned_tpu_and_gpu_split_is_ranked_checked_and_predicted(catalog: Catalog) -> None:
    report = plan_serving(
        catalog, "llama-3.1-70b", ["h100-sxm", "trn2", "tpu-v6e", "mi300x", "b200"], Load("rate", rate=10.0),
        1024, 256, {"ttft_p99": 2.0, "tpot_p99": 0.05}, pricing="owned", region="eu-west-1", verify=4,
    )  # fmt: skip
    assert not any("cannot both be bought" in s["reason"] for s in report["skipped"])
    ranked = next(r for r in report["results"] if r["hardware"] == "b200>tpu-v6e")
    assert ranked["chips"] == 10 and ranked["cost_usd_per_hour"] == pytest.approx(11.08, abs=0.005)
    checked = next(v for v in report["verified"] if v["hardware"] == "b200>tpu-v6e")
    assert checked["slo_met"] and checked["kv_transfer"]["fabric"] == "efa-v4 to tpu-dcn"
    assert cw.predict(checked["scenario"])["cost_usd_per_hour"] == pytest.approx(checked["cost_usd_per_hour"])

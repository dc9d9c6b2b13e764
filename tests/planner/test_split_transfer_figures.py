"""A split's KV hand-over reads its ends' fabrics, and the prediction's figures name them (the scale-out network's
bandwidth, efficiency and latency where the cache crosses it): a hand-over of 30% of a TTFT had named none."""

from __future__ import annotations

import chipwise.api as cw

SPLIT = {
    "kind": "serve", "model": "llama-3.1-8b", "hardware": "gcp-a3-megagpu-8g>tpu-v6e", "input_tokens": 8192,
    "output_tokens": 64, "arrival_rate": 0.5, "requests": 100,
    "plan": {"disaggregated": True, "prefill": {"tp": 1, "replicas": 2}, "decode": {"tp": 1, "replicas": 1}},
}  # fmt: skip


def test_a_hand_over_over_the_network_names_its_fabrics() -> None:
    r = cw.predict(SPLIT)
    assert r["kv_transfer"]["fabric"] == "roce-400g to tpu-dcn"
    for name in ("tpu-v6e-256.scaleout.bandwidth", "tpu-dcn.bus_efficiency", "tpu-dcn.latency",
                 "gcp-a3-megagpu-8g.scaleout.bandwidth", "roce-400g.bus_efficiency"):  # fmt: skip
        assert name in r["figures"], name
    assert not any(".tiers." in k for k in r["figures"])  # one flow between two ends: no tier's reach sets it

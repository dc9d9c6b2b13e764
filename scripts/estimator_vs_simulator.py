"""How far the steady-state serving estimate (serve/search.py) is from the simulator on a few loads.

For each case `plan serve` picks the cheapest replica count from the estimate, then the simulator adds replicas
until the SLO holds, or takes them away while it still holds; the ratio of the two chip counts is what the estimate
missed (above 1: too few chips, below 1: too many).
Run: .venv/bin/python scripts/estimator_vs_simulator.py
"""

from __future__ import annotations

import time

from chipwise.catalog import load_catalog
from chipwise.errors import ChipwiseError
from chipwise.planner.serving_plan import plan_serving
from chipwise.workload.serving import Load

#: model, rate (req/s), input and output tokens, SLO, chips to try
CASES = [
    ("llama-3.1-70b", 10.0, 16384, 256, {"ttft_p99": 3.0, "tpot_p99": 0.05}, ["gaudi3", "mi325x", "h200", "trn2"]),
    ("llama-3.1-70b", 20.0, 1024, 256, {"ttft_p99": 2.0, "tpot_p99": 0.05}, ["h100-sxm", "mi300x", "trn2", "b200"]),
    (
        "llama-3.1-8b",
        50.0,
        2048,
        512,
        {"ttft_p99": 1.0, "tpot_p99": 0.03},
        ["h100-sxm", "a100-80gb", "trn2", "tpu-v6e"],
    ),
    ("llama-3.1-70b", 20.0, 8192, 512, {"ttft_p99": 2.0, "tpot_p99": 0.04}, ["trn4", "gb300"]),
    ("deepseek-r1", 2.0, 1000, 1000, {"ttft_p99": 3.0, "tpot_p99": 0.03}, ["h200", "b200"]),
    ("qwen3-30b-a3b", 20.0, 2048, 512, {"ttft_p99": 1.0, "tpot_p99": 0.03}, ["h100-sxm", "mi300x"]),
    ("gpt-oss-120b", 10.0, 1024, 1024, {"ttft_p99": 1.0, "tpot_p99": 0.02}, ["h100-sxm", "b200"]),
]


def main() -> None:
    catalog = load_catalog()
    start = time.perf_counter()
    print(f"{'model':14s} {'in/out':>11s} {'chip':10s} {'estimate':>9s} {'simulated':>10s} {'ratio':>6s}  SLO met")
    for model, rate, inp, out, slo, chips in CASES:
        for chip in chips:
            try:
                r = plan_serving(
                    catalog, model, [chip], Load("rate", rate=rate), inp, out, slo, precision="fp8",
                    disaggregated=False, verify=1,
                )  # fmt: skip
            except ChipwiseError as exc:
                print(f"{model:14s} {chip:10s} {exc}")
                continue
            if not r["results"] or not r["verified"]:
                print(f"{model:14s} {chip:10s} no plan")
                continue
            est, sim = r["results"][0]["chips"], r["verified"][0]
            print(
                f"{model:14s} {inp:6d}/{out:4d} {chip:10s} {est:9.1f} {sim['chips']:10.1f} "
                f"{sim['chips'] / est:6.2f}  {sim['slo_met']}"
            )
    print(f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()

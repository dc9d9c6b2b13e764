"""Regenerate the figures of docs/web.md from the built-in catalog (rerun after the model or the catalog changes).

    python scripts/make_doc_figures.py [--out docs/img]

docs/img/pareto.png     cost against time to train, Llama-3.1-70B on 4,096 chips of every chip in the catalog,
                        15 T tokens, on-demand prices (as `chipwise plan train ... --hardware all --plot`)
docs/img/breakdown.png  where the step time and the memory go for the fastest fleet of that ranking
docs/img/serve-plan.png each chip's serving throughput-TPOT front and the simulated cheapest fleets, Llama-3.1-70B
                        fp8 at 20 req/s, 1,024 in / 256 out (as `chipwise plan serve ... --plot`)
docs/img/serve-prediction.png  one serving deployment's latencies, KV-cache use, and where an iteration and a prompt go
                        (as `chipwise predict examples/serve-llama70b-h200.yaml --plot`)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import chipwise.api as cw
from chipwise.interfaces import plots

ROOT = Path(__file__).resolve().parents[1]
MODEL, CHIPS, TOKENS = "llama-3.1-70b", 4096, 15e12


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="folder for the PNG files")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    report = cw.plan_train(MODEL, chips=CHIPS, hardware="all", tokens=TOKENS)
    serving = cw.plan_serve(
        MODEL, rate=20, input_tokens=1024, output_tokens=256, slo={"ttft_p99": 2.0, "tpot_p99": 0.05},
        hardware=["h100-sxm", "h200", "b200", "mi300x", "trn2", "trn4"], precision="fp8",
    )  # fmt: skip
    for path in (
        plots.pareto_training(report, args.out / "pareto.png"),
        plots.breakdown_training(report["results"][0], args.out / "breakdown.png"),
        plots.pareto_serving_plan(serving, args.out / "serve-plan.png"),
        plots.prediction_serving(
            cw.predict(str(ROOT / "examples" / "serve-llama70b-h200.yaml")), args.out / "serve-prediction.png"
        ),
    ):
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

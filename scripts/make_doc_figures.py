"""Regenerate the figures of docs/web.md from the built-in catalog (rerun after the model or the catalog changes).

    python scripts/make_doc_figures.py [--out docs/img]

docs/img/pareto.png     cost against time to train, Llama-3.1-70B on 4,096 chips of every chip in the catalog,
                        15 T tokens, on-demand prices (as `chipwise plan train ... --hardware all --plot`)
docs/img/breakdown.png  where the step time and the memory go for the fastest fleet of that ranking
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
    for path in (
        plots.pareto_training(report, args.out / "pareto.png"),
        plots.breakdown_training(report["results"][0], args.out / "breakdown.png"),
    ):
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The training validation against the published runs in ../shared/data: the issue's accuracy bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.validation.run import validate_training


@pytest.fixture(scope="module")
def report(catalog: Catalog, shared_data: Path) -> dict:
    return validate_training(catalog, shared_data / "groundtruth_training.csv")


def test_mean_error_within_12_percent(report: dict) -> None:
    assert report["summary"]["mape_pct"] <= 12.0


def test_every_chip_with_five_rows_within_20_percent(report: dict) -> None:
    for chip, st in report["summary"]["by_chip"].items():
        if st["n"] >= 5:
            assert st["mape_pct"] <= 20.0, chip


def test_at_least_85_percent_of_rows_predicted(report: dict) -> None:
    assert report["summary"]["predicted_fraction"] >= 0.85


def test_rows_are_skipped_only_for_stated_reasons(report: dict) -> None:
    for s in report["skipped"]:
        assert s["reason"].strip()


def test_json_shape(report: dict) -> None:
    row = report["rows"][0]
    assert {"id", "chip", "metric", "measured", "predicted", "error_pct", "plan_source"} <= set(row)
    assert {"n", "mape_pct", "median_ape_pct", "by_chip", "by_source_family"} <= set(report["summary"])
    assert row["error_pct"] == pytest.approx(100 * (row["predicted"] - row["measured"]) / row["measured"])

"""plan serve and plan lifecycle take --provider and --utilisation as plan train does, a serve scenario takes
`utilisation` as a train scenario does, and /api/plan/serve and the API take them as /api/plan/train does: each with
the same one-line refusals ('No such option: --provider' and 'utilisation: unknown key' had been the answer)."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise import api
from chipwise.catalog.loader import load_catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.interfaces.web import routes
from chipwise.planner.serving_economics import chip_hour_price
from chipwise.planner.serving_predict import predict_serving
from chipwise.workload.scenario import load_scenario
from cli_run import run_error, run_json

SERVE = ["plan", "serve", "--model", "llama-3.1-8b", "--rate", "2", "--hardware", "h100-sxm", "--requests", "200"]
LIFECYCLE = ["plan", "lifecycle", "--model", "llama-3.1-8b", "--train-tokens", "1T", "--serve-rate", "2"]
RENTED_UTILISATION = (
    "error: --utilisation 0.5 prices owned chips (their cost per hour of paid work), but pricing is on-demand: rented "
    "chips are paid by the hour used, at the provider's rate. Fix: add --pricing owned, or drop --utilisation."
)
OWNED_PROVIDER = (
    "error: --provider aws chooses whom chips are rented from, but pricing is owned: an owned fleet is bought, not "
    "rented. Fix: drop --provider, or give a rental pricing mode."
)
OTHER_CLOUD = (
    "error: us-east-1 is an AWS region; --provider is gcp. Fix: give a gcp region such as us-central1, or drop "
    "--provider."
)


@pytest.mark.parametrize("command", [SERVE, LIFECYCLE])
@pytest.mark.parametrize(
    ("options", "line"),
    [
        (["--utilisation", "0.5"], RENTED_UTILISATION),
        (["--pricing", "owned", "--provider", "aws"], OWNED_PROVIDER),
        (["--provider", "gcp", "--region", "us-east-1"], OTHER_CLOUD),
    ],
)
def test_pricing_options_refused_as_plan_train_refuses_them(
    capsys: pytest.CaptureFixture[str], command: list[str], options: list[str], line: str
) -> None:
    assert run_error(capsys, [*command, *options]) == line


def test_plan_serve_prices_an_owned_fleet_at_its_utilisation(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*SERVE, "--no-disaggregated", "--workers", "1", "--pricing", "owned", "--utilisation", "0.5", "--json"]
    report = run_json(capsys, argv)
    cat = load_catalog()
    row = report["results"][0]
    per_chip = chip_hour_price(cat, hardware(cat).system(row["system"]), "owned", None, None, utilisation=0.5)[0]
    assert row["cost_usd_per_hour"] == pytest.approx(per_chip * row["chips"])
    assert report["utilisation"] == 0.5
    # the checked option's scenario reruns it at the same prices
    assert report["verified"][0]["scenario"]["utilisation"] == 0.5


def test_plan_serve_prices_at_the_provider_given(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(capsys, [*SERVE, "--no-disaggregated", "--workers", "1", "--provider", "lambda", "--json"])
    assert report["provider"] == "lambda"
    assert report["verified"][0]["providers"] == ["lambda"]
    assert report["verified"][0]["scenario"]["provider"] == "lambda"


SCENARIO = (
    "{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, arrival_rate: 1, requests: 20, "
    "input_tokens: 128, output_tokens: 16, pricing: %s, utilisation: 0.5}"
)


def test_a_serve_scenario_takes_utilisation() -> None:
    assert load_scenario(SCENARIO % "owned").utilisation == 0.5


def test_a_rented_serve_scenario_refuses_utilisation() -> None:
    sc = load_scenario(SCENARIO % "on-demand")
    with pytest.raises(ChipwiseError) as exc:
        predict_serving(load_catalog(), sc)  # type: ignore[arg-type]
    assert str(exc.value) == (
        "utilisation 0.5 prices owned chips (their cost per hour of paid work), but pricing is on-demand: rented "
        "chips are paid by the hour used, at the provider's rate. Fix: add pricing: owned, or drop utilisation."
    )


def _api_refusal(call: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(ChipwiseError) as exc:
        call(*args, **kwargs)
    return str(exc.value)


def test_the_api_and_the_web_route_take_utilisation() -> None:
    fix = "Fix: add pricing='owned', or drop utilisation."
    assert _api_refusal(api.plan_serve, "llama-3.1-8b", rate=2, utilisation=0.5).endswith(fix)
    assert _api_refusal(api.plan_lifecycle, "llama-3.1-8b", "1T", 2, utilisation=0.5).endswith(fix)
    body = {"model": "llama-3.1-8b", "rate": 2, "hardware": "h100-sxm", "utilisation": 0.5}
    web = _api_refusal(routes.plan_serve, body, routes.Settings())
    assert web.startswith("utilisation 0.5 prices owned chips") and web.endswith(
        'Fix: add "pricing": "owned", or drop utilisation.'
    )

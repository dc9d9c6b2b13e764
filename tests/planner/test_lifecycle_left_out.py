"""plan lifecycle names every chip asked for that a side leaves out, and why: one with no price in the mode (as plan
train's and plan serve's 'no price' lines say it), one plan train cannot fit; and it gives no fix it cannot take.
Capacity Blocks had left tpu-v6e out of every row and note, owned trn1 and inf2 had vanished before 'One vendor
wins', and plan serve's 'Fix: --engine vllm-neuron' had been passed on to a command with no --engine."""

from __future__ import annotations

from typing import Any

from chipwise.catalog import Catalog
from chipwise.planner.lifecycle import plan_lifecycle

SLO = {"ttft_p99": 2.0, "tpot_p99": 0.05}
#: plan serve's line on chips whose engines hand no KV cache over (planner.serving_split._handing_over)
HANDOVER = (
    "neuron on trn1, optimum-neuron on inf2 made no prefill>decode split: their engines have no KV-cache hand-over "
    "from a prefill to a decode pool (engines.ENGINE.kv_handover). Fix: --engine vllm-neuron to price such splits"
)


def _lifecycle(catalog: Catalog, hardware: list[str], pricing: str = "on-demand", **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"model_name": "llama-3.1-8b", "train_tokens": 1e11, "serve_rate": 5.0, "serve_months": 6.0}
    return plan_lifecycle(
        catalog, **args, hardware_ids=hardware, train_chips=64, slo=SLO, pricing=pricing, **kw
    )  # fmt: skip


def test_a_chip_with_no_capacity_block_is_named_for_both_sides(catalog: Catalog) -> None:
    """Capacity Blocks in us-east-1: tpu-v6e (GCP rents it; AWS alone sells Capacity Blocks) has no price to train
    or to serve (bf16 weights: it has no FP8 units to serve fp8); it is named once for both, with plan train's and
    plan serve's own reason."""
    r = _lifecycle(catalog, ["h100-sxm", "tpu-v6e"], "capacity-block", region="us-east-1", serve_precision="bf16")
    assert r["no_price"] == [
        {
            "hardware": "tpu-v6e",
            "sides": ["train", "serve"],
            "reason": "capacity-block is sold by aws only, not by gcp, which rents tpu-v6e-256",
        }
    ]
    assert {p["train"]["hardware"] for p in r["top"]} == {"h100-sxm"}  # it ranks in no row


def test_owned_chips_with_no_unit_price_are_named_and_their_split_line_dropped(catalog: Catalog) -> None:
    """Owned: trn1 and inf2 have no unit price in the catalog; each is named with plan train's fix, and plan serve's
    line that their engines make no split (moot: neither has a price) is not passed on."""
    r = _lifecycle(catalog, ["trn1", "inf2", "h100-sxm"], pricing="owned")
    assert r["no_price"] == [
        {
            "hardware": chip,
            "sides": ["train", "serve"],
            "reason": f"no unit price for {chip} in the catalog: owned cost unknown (give one: --set "
            f"{chip}.unit_price=USD)",
        }
        for chip in ("trn1", "inf2")
    ]
    assert not any("prefill>decode" in sk["reason"] for sk in r["serve_skipped"])
    assert r["best"]["train"]["hardware"] == "h100-sxm"


def test_on_demand_the_split_line_names_the_default_engine_not_an_option_lifecycle_lacks(catalog: Catalog) -> None:
    """On demand trn1 and inf2 are priced; their engines' missing KV hand-over is said, with no '--engine' fix."""
    r = _lifecycle(catalog, ["trn1", "inf2", "h100-sxm"])
    assert r["no_price"] == []
    [line] = [sk["reason"] for sk in r["serve_skipped"] if "prefill>decode" in sk["reason"]]
    assert line.endswith("(engines.ENGINE.kv_handover); plan lifecycle serves each chip on its default engine")
    assert "--engine" not in line


def test_the_split_line_keeps_only_the_priced_chips() -> None:
    """Of two chips whose engines make no split, the one with no serving price is left out of the line and the
    verb follows the count; a chip priced on either side stays. Other lines pass as they are."""
    from chipwise.planner.lifecycle import _without_handover

    default = "; plan lifecycle serves each chip on its default engine"
    # plan serve's entry, its engines by name beside the line (serving_split.handover_note)
    entry = {"hardware": "splits", "reason": HANDOVER, "no_handover": "neuron on trn1, optimum-neuron on inf2"}
    assert _without_handover(entry, HANDOVER, {"inf2"}) == (
        "neuron on trn1 made no prefill>decode split: its engine has no KV-cache hand-over from a prefill to a "
        f"decode pool (engines.ENGINE.kv_handover){default}"
    )
    assert _without_handover(entry, HANDOVER, {"trn1", "inf2"}) is None
    assert _without_handover(entry, HANDOVER, ()) == HANDOVER.replace(
        ". Fix: --engine vllm-neuron to price such splits", default
    )
    other = "tpu-v6e: no fp8 units. Fix: serve bf16"
    assert _without_handover({"hardware": "tpu-v6e", "reason": other}, other, {"tpu-v6e"}) == (
        "tpu-v6e: no fp8 units. Fix: serve bf16"
    )


def test_a_chip_the_model_does_not_fit_to_train_is_named(catalog: Catalog) -> None:
    """Llama 3.1 70B on 16 inf2 needs 69.6 GiB a chip where it has 32.0: plan train's line is given, where lifecycle
    had named it only with no training fleet left."""
    r = plan_lifecycle(
        catalog, "llama-3.1-70b", 1e10, 2.0, 1.0, ["inf2", "b200"], train_chips=16, slo=SLO
    )  # fmt: skip
    [skipped] = r["train_skipped"]
    assert skipped["hardware"] == "inf2"
    assert skipped["reason"].startswith("llama-3.1-70b does not fit on 16 x inf2: ")
    assert "69.6 GiB per chip" in skipped["reason"] and "the chip has 32.0 GiB" in skipped["reason"]

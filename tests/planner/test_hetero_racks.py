"""plan hetero: a hybrid rack named as a fleet part is refused; a fleet on a hybrid domain fits it (one rack, or whole
racks with each pipeline inside one); the batch it trains with is shown, a batch in tokens rounded to one data
parallelism divides."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.planner.hetero import plan_hetero_training
from cli_run import run_error

RACK = "trn4-gb300-fusion-rack"


def test_a_hybrid_rack_as_a_fleet_part_is_refused(catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    """--fleet trn4-gb300-fusion-rack=36,h100-sxm=8 had run the rack as 36 Trainium4; plan train refuses it."""
    with pytest.raises(ChipwiseError, match=rf"holds 36 trn4 and 36 gb300, two chip types.*--fleet trn4=36,gb300=36 "
                                            rf"--hybrid {RACK} \(or name one of trn4, gb300\)\.$"):  # fmt: skip
        plan_hetero_training(catalog, "llama-3.1-8b", {RACK: 36, "h100-sxm": 8}, tokens=1e12)
    err = run_error(capsys, ["plan", "hetero", "--model", "llama-3.1-8b", "--fleet", f"{RACK}=36,h100-sxm=8"])
    assert f"--hybrid {RACK}" in err


def test_a_fleet_past_one_rack_that_is_not_whole_racks_is_refused(catalog: Catalog) -> None:
    with pytest.raises(ChipwiseError, match=rf"trn4=72,gb300=36 is not a whole number of {RACK} racks .* Fix: give "
                                            r"whole racks \(--fleet trn4=72,gb300=72\)"):  # fmt: skip
        plan_hetero_training(catalog, "llama-3.1-405b", {"trn4": 72, "gb300": 36}, tokens=1e12, hybrid=RACK)


def test_whole_racks_keep_each_pipeline_in_a_rack(catalog: Catalog) -> None:
    """trn4=360,gb300=360 is ten racks: the plan had assumed one fabric for all of it, without a word. Now each rack
    holds whole pipelines (data parallelism a multiple of the racks), and the report says so."""
    r = plan_hetero_training(catalog, "llama-3.1-405b", {"trn4": 72, "gb300": 72}, tokens=1e12, hybrid=RACK)
    assert r["racks"] == 2 and r["placement"] == "2 racks, each pipeline boundary inside a rack"
    assert r["mixed"] is not None and r["mixed"]["plan"]["dp"] % 2 == 0
    one = plan_hetero_training(catalog, "llama-3.1-405b", {"trn4": 36, "gb300": 36}, tokens=1e12, hybrid=RACK)
    assert one["racks"] == 1 and one["placement"] is None
    ten = plan_hetero_training(catalog, "llama-3.1-405b", {"trn4": 360, "gb300": 360}, tokens=1e12, hybrid=RACK)
    # a 512-sequence batch has no data parallelism that is a multiple of 10: no mix, and why
    assert ten["racks"] == 10 and ten["mixed"] is None and "memory" not in ten["reason"]
    assert ten["reason"].startswith(
        "no data parallelism that is a multiple of 10 (whole pipelines in each rack) divides the 512-sequence batch"
    )
    over = plan_hetero_training(catalog, "llama-3.1-8b", {"trn4": 20, "gb300": 8}, tokens=1e12)
    assert over["racks"] == 0  # over the network: no rack


def test_the_batch_is_shown_and_a_batch_in_tokens_is_divisible(
    catalog: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    """'--global-batch-tokens 8M' was 977 sequences (a prime: the H100s alone ran DP1, 28% slower than the default
    batch half its size) and the table showed no batch at all."""
    fleet = {"h100-sxm": 256, "trn2": 256}
    r = plan_hetero_training(catalog, "llama-3.1-70b", fleet, tokens=1e12, global_batch_tokens=8e6)
    assert r["global_batch"] == 1024 and r["global_batch_tokens"] == 1024 * 8192
    assert r["global_batch_tokens_asked"] == 8e6
    default = plan_hetero_training(catalog, "llama-3.1-70b", fleet, tokens=1e12)
    assert default["global_batch"] == 512 and default["global_batch_tokens_asked"] is None
    alone = {a["hardware"]: a for a in r["alone"]}
    assert alone["h100-sxm"]["plan"]["dp"] > 1
    assert alone["h100-sxm"]["tokens_per_s"] >= {a["hardware"]: a for a in default["alone"]}["h100-sxm"]["tokens_per_s"]
    from chipwise.interfaces.cli.hetero_views import print_hetero

    capsys.readouterr()
    print_hetero(r)
    out = " ".join(capsys.readouterr().out.split())
    assert "global batch: 1,024 sequences of 8,192 tokens, 8,388,608 tokens a step (8,000,000 asked for" in out

"""plan fleet and plan lifecycle say, as plan serve does, where a chip's serving figures are its engine's defaults
(† : no serving run of its family fitted) or carried from a sibling's fit (‡): both had picked Gaudi3 on defaults
unmarked. plan fleet states the precisions it runs (its JSON had read 'precision': 'auto')."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.planner.fleet import plan_fleet
from chipwise.planner.lifecycle import plan_lifecycle

SLO = {"ttft_p99": 2.0, "tpot_p99": 0.05}
DAGGER_NOTE = "† no serving measurement on this chip family was fitted"


@pytest.fixture
def chat(tmp_path: Path) -> str:
    mix = tmp_path / "chat.yaml"
    mix.write_text("buckets:\n  - {name: chat, input_tokens: 512, output_tokens: 256, rate: 10}\n")
    return str(mix)


def test_a_fleet_marks_its_types_on_engine_defaults_and_carried(
    catalog: Catalog, chat: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gaudi3 has no fitted vLLM serving run (defaults, †); MI455X runs vLLM's CDNA3 fit (carried, ‡); MI300X is
    fitted. Each type offered and each fleet row says so; the table marks the row and prints the note."""
    from chipwise.interfaces.cli.plan_fleet_cmd import print_fleet

    r = plan_fleet(catalog, "llama-3.1-8b", chat, SLO, ["gaudi3", "mi455x", "mi300x"], precision="auto", replay=False)
    by_chip = {t["hardware"]: t for t in r["instance_types"]}
    assert (by_chip["gaudi3"]["engine_defaults"], by_chip["gaudi3"]["engine_carried"]) == (["gaudi3"], {})
    assert (by_chip["mi455x"]["engine_defaults"], by_chip["mi455x"]["engine_carried"]) == (
        [],
        {"mi455x": "vllm on cdna3"},
    )
    assert (by_chip["mi300x"]["engine_defaults"], by_chip["mi300x"]["engine_carried"]) == ([], {})
    gaudi3 = plan_fleet(catalog, "llama-3.1-8b", chat, SLO, ["gaudi3"], precision="auto", replay=False)
    assert [f["engine_defaults"] for f in gaudi3["fleet"]] == [["gaudi3"]] * len(gaudi3["fleet"])
    capsys.readouterr()
    print_fleet(gaudi3)
    out = capsys.readouterr().out
    assert f"{gaudi3['fleet'][0]['type']} †" in out and DAGGER_NOTE in out


def test_a_fleet_states_the_precisions_it_resolved(
    catalog: Catalog, chat: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """'auto' is Llama 3.1 8B's released bf16 weights, which TensorRT-LLM (H100's engine) runs with a bf16 KV cache:
    the JSON, each row and the title say so."""
    from chipwise.interfaces.cli.plan_fleet_cmd import print_fleet

    auto = plan_fleet(catalog, "llama-3.1-8b", chat, SLO, ["h100-sxm"], precision="auto", replay=False)
    assert (auto["precision"], auto["kv_precision"]) == ("bf16", "bf16")
    assert {(f["weight_precision"], f["kv_precision"]) for f in auto["fleet"]} == {("bf16", "bf16")}
    capsys.readouterr()
    print_fleet(auto)
    assert "llama-3.1-8b, bf16 weights, bf16 KV cache: cheapest fleet" in " ".join(capsys.readouterr().out.split())


def test_a_lifecycle_marks_a_serving_fleet_on_engine_defaults(
    catalog: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    """The serving side's fleets carry plan serve's engine_defaults and engine_carried; the table marks Gaudi3's
    († after the chip) and prints the note."""
    from chipwise.interfaces.cli.plan_fleet_cmd import print_lifecycle

    r = plan_lifecycle(catalog, "llama-3.1-8b", 1e12, 20.0, 6.0, ["mi300x", "gaudi3"], train_chips=256, slo=SLO)
    serves = [p["serve"] for p in r["top"]]
    assert any(s["hardware"] == "gaudi3" for s in serves)
    for s in serves:
        chips = s["hardware"].split(">")
        assert s["engine_defaults"] == sorted({c for c in chips if c == "gaudi3"})
        assert s["engine_carried"] == {}
    capsys.readouterr()
    print_lifecycle(r)
    out = capsys.readouterr().out
    assert "gaudi3 † x" in out and DAGGER_NOTE in out


def test_each_pool_of_a_split_is_marked_by_its_own_chip() -> None:
    from chipwise.interfaces.cli.plan_fleet_cmd import _serve_marked

    split = {"hardware": "gaudi3>h100-sxm", "engine_defaults": ["gaudi3"], "engine_carried": {}}
    assert _serve_marked("gaudi3>h100-sxm", split) == "gaudi3 †>h100-sxm"
    carried = {"hardware": "h100-sxm>trn4", "engine_defaults": [], "engine_carried": {"trn4": "neuron on trainium2"}}
    assert _serve_marked("p5.48xlarge>trn4", carried) == "p5.48xlarge>trn4 ‡"

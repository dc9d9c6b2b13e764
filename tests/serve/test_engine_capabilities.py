"""What an engine can do beside what it costs (serve.engine.CAPABILITIES): a prefix cache and a KV-cache hand-over,
read per chip family (neuron is transformers-neuronx on Trainium 1 and Inferentia 2, NxD Inference after), and the
vendor plugin vLLM runs as (served_as)."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.errors import ChipwiseError
from chipwise.serve.engine import (
    check_capability,
    engine_carried_from,
    engine_fitted,
    engine_has,
    engines_with,
    served_as,
)


@pytest.mark.parametrize(
    ("engine", "family", "has"),
    [
        ("neuron", "trainium1", False),  # transformers-neuronx
        ("neuron", "trainium2", True),  # NxD Inference
        ("vllm-neuron", "trainium1", True),
        ("vllm-neuron", "trainium2", True),
        ("optimum-neuron", "trainium1", False),
        ("optimum-neuron", "trainium2", False),
        ("vllm", "hopper", True),
        ("sglang", "hopper", True),
        ("trtllm", "blackwell", True),
    ],
)
def test_capabilities_by_engine_and_family(catalog: Catalog, engine: str, family: str, has: bool) -> None:
    assert engine_has(catalog, engine, family, "prefix_cache") is has
    assert engine_has(catalog, engine, family, "kv_handover") is has


def test_a_capability_is_no_fit(catalog: Catalog) -> None:
    """The switches stated under engines.*.chips.trainium1 leave vllm-neuron there a carried fit, and neuron and
    optimum-neuron fitted, as they were."""
    assert engine_carried_from(catalog, "vllm-neuron", "trainium1") == "optimum-neuron on trainium1"
    assert engine_fitted(catalog, "neuron", "trainium1") and engine_fitted(catalog, "optimum-neuron", "trainium1")
    assert not engine_fitted(catalog, "vllm", "gaudi3")


def test_the_refusal_names_the_figure_and_the_engines_that_have_it(catalog: Catalog) -> None:
    assert engines_with(catalog, "prefix_cache", "trainium1", "aws") == ["vllm-neuron"]  # vllm there is vllm-neuron
    with pytest.raises(ChipwiseError) as exc:
        check_capability(catalog, "neuron", "trainium1", "aws", "prefix_cache", "x asks", "drop x")
    assert str(exc.value) == (
        "x asks, and neuron has no prefix cache on trainium1 chips (engines.neuron.chips.trainium1.prefix_cache). "
        "Fix: use engine: vllm-neuron (which has one there), or drop x."
    )
    with pytest.raises(ChipwiseError, match=r"\(engines\.optimum-neuron\.kv_handover\)\. Fix: use engine: neuron or "):
        check_capability(catalog, "optimum-neuron", "trainium2", "aws", "kv_handover", "y asks", "drop y")
    check_capability(catalog, "vllm-neuron", "trainium1", "aws", "kv_handover", "z asks", "drop z")  # passes


def test_a_capability_is_a_switch() -> None:
    with pytest.raises(ChipwiseError, match="not 0 or 1"):
        load_catalog(sets=["engines.vllm.prefix_cache=0.5"])
    assert not engine_has(load_catalog(sets=["engines.vllm.kv_handover=0"]), "vllm", "hopper", "kv_handover")


@pytest.mark.parametrize(
    ("engine", "vendor", "runs_as"),
    [
        ("vllm", "aws", "vllm-neuron"),
        ("vllm", "AWS", "vllm-neuron"),
        ("vllm", "nvidia", "vllm"),
        ("neuron", "aws", "neuron"),
    ],
)
def test_vllm_runs_as_its_plugin(engine: str, vendor: str, runs_as: str) -> None:
    assert served_as(engine, vendor) == runs_as

"""Built-in catalog figures checked against their own sources and the catalog's conventions (review s59/c #10)."""

from __future__ import annotations

import re

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import hardware


def test_trn1_neuronlink_is_in_the_trn1_arch_tables_gib(catalog: Catalog) -> None:
    """trn1-arch gives 384 GiB/s/device for trn1.32xlarge and 768 for trn1n.32xlarge; both halved (per direction).
    trn1 had read 192 GB/s (7% low) beside trn1n's 384 GiB/s."""
    hw = hardware(catalog)
    trn1, trn1n = hw.system("trn1.32xlarge"), hw.system("trn1n.32xlarge")
    assert trn1.scaleup.bandwidth == 192 * 2**30
    assert trn1n.scaleup.bandwidth == 2 * trn1.scaleup.bandwidth


def test_mi325x_tdp_is_an_estimate(catalog: Catalog) -> None:
    """No AMD source gives the MI325X's TDP (the shared data lists it unconfirmed): an estimate with a derivation."""
    tdp = catalog.chips["mi325x"].tdp
    assert tdp is not None and (tdp.value, tdp.status) == (1000, "estimate") and "not confirmed" in tdp.derivation


@pytest.mark.parametrize("fabric", ["efa-v1", "efa-v2", "efa-v3", "efa-v4"])
def test_an_efa_fabric_names_only_instances_that_use_it(catalog: Catalog, fabric: str) -> None:
    """efa-v1's name listed trn1 and trn1n, which run on efa-v2: a reader picked the wrong fabric for Trainium1."""
    named = re.findall(r"\b(p\d[\w-]*|trn\d\w*|inf\d)\b", catalog.fabrics[fabric].name)
    assert named
    for family in named:
        systems = [s for s in catalog.systems if s.split(".")[0] == family or s.startswith(family + "-")]
        assert systems, family
        assert {catalog.systems[s].scaleout.fabric for s in systems} == {fabric}, family

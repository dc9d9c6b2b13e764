"""Every source key a catalog figure cites resolves in sources.yaml, the keys the efficiency factors' derivations
cite included (ANTHROPIC_TRN had resolved only in docs/research/efficiency-evidence.md) and listed in their `source`
(where `catalog show` and a prediction's figures read them), and `catalog show efficiency.FAMILY` traces a
prediction's efficiency figures to them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.catalog_cmd import _figures
from cli_run import run_error

EVIDENCE = Path(__file__).resolve().parents[2] / "docs" / "research" / "efficiency-evidence.md"
SECTIONS = ("chips", "systems", "fabrics", "efficiency", "engines", "datacenter", "reliability")


def test_every_source_key_a_figure_lists_resolves(catalog: Catalog) -> None:
    figures = [f for s in SECTIONS for f in _figures(getattr(catalog, s)).values()]
    keys = {k for f in figures for k in f.source if re.fullmatch(r"[A-Z][A-Z0-9_]+", k)}
    assert len(keys) > 50
    assert sorted(keys - set(catalog.sources)) == []


def test_every_reference_an_efficiency_derivation_cites_resolves(catalog: Catalog) -> None:
    """The evidence file's reference keys ([MAMF], [TPU_PEDIA], ...) that an efficiency derivation names."""
    references = re.findall(r"^- \[([A-Z0-9_]+)\]", EVIDENCE.read_text(encoding="utf-8"), re.M)
    cited = {
        key
        for f in _figures(catalog.efficiency).values()
        for key in references
        if re.search(rf"\b{key}\b", f.derivation)
    }
    assert {"ANTHROPIC_TRN", "TPU_PEDIA", "MAMF", "FA2", "FA3"} <= cited
    assert sorted(cited - set(catalog.sources)) == []
    unlisted = [
        (path, key)
        for path, f in _figures(catalog.efficiency).items()
        for key in cited
        if re.search(rf"\b{key}\b", f.derivation) and key not in f.source
    ]
    assert unlisted == []
    assert catalog.sources["ANTHROPIC_TRN"].startswith("https://dev.to/kazuya_dev/aws-reinvent-2025-aws-trn3")


def test_catalog_show_efficiency_traces_the_factors(capsys: pytest.CaptureFixture[str]) -> None:
    """trn2's 0.6 of dense peak on bf16 GEMMs (efficiency.trainium2.matmul.bf16, as predict --json names it), its
    derivation's source resolved; a factor the family leaves to the default family says so (fp4's 0.4)."""
    assert run(["catalog", "show", "efficiency.trainium2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["chips"] == ["trn2"]
    bf16 = data["figures"]["matmul.bf16"]
    assert bf16["value"] == 0.6 and bf16["from"] == "trainium2" and list(bf16["cited"]) == ["ANTHROPIC_TRN"]
    assert data["figures"]["matmul.fp4"]["value"] == 0.4 and data["figures"]["matmul.fp4"]["from"] == "default"
    assert run(["catalog", "show", "efficiency.trainium2", "--sources"]) == 0
    # a cell wraps at the terminal's width, a long URL mid-word: read the text without its breaks and rules
    out = "".join(capsys.readouterr().out.replace("│", "").split())
    assert "ANTHROPIC_TRN:https://dev.to/kazuya_dev/" in out
    assert run(["catalog", "show", "trn2", "--sources"]) == 0
    assert "catalog show efficiency.trainium2 --sources" in " ".join(capsys.readouterr().out.split())


def test_an_unknown_family_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_error(capsys, ["catalog", "show", "efficiency.trainium9"]).startswith(
        "error: unknown efficiency family 'trainium9'. Did you mean 'trainium4', 'trainium3', 'trainium2'?"
    )

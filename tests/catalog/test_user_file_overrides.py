"""A `--catalog` file overrides the built-in catalog: its price of an offer wins whatever the dates, and a name it
gives (an id, an alias) that is another entry's is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import load_catalog
from chipwise.economics.pricing import latest_quotes, price_per_chip_hour
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.interfaces.cli.catalog_cmd import system_json

P5 = "system: p5.48xlarge, provider: aws, region: us-east-1, mode: on-demand, unit: USD/h, status: spec"


def _prices(tmp_path: Path, *entries: str) -> Path:
    """A catalog file of p5.48xlarge's AWS on-demand prices: `entries` are 'value: V, date: D' (or no date)."""
    f = tmp_path / "myprice.yaml"
    f.write_text("prices:\n" + "".join(f"  - {{{P5}, {e}, source: ['my negotiated quote']}}\n" for e in entries))
    return f


def _p5_on_demand(files: list[Path], mode: str = "on-demand") -> float:
    catalog = load_catalog(files=files)
    quote = price_per_chip_hour(catalog, hardware(catalog).system("p5.48xlarge"), mode)
    assert quote is not None
    return quote.usd_per_chip_hour


@pytest.mark.parametrize("date", ["date: '2026-01', ", "date: '2026-07', ", "date: '2026-09', ", ""])
def test_a_files_price_wins_over_the_builtin_one_of_its_offer(tmp_path: Path, date: str) -> None:
    """The built-in $55.04 (2026-07) had beaten a file's $40 dated before it, on its date, or undated (the newest
    price won): predict kept $6.880 a chip-hour with no word."""
    assert _p5_on_demand([_prices(tmp_path, f"{date}value: 40.0")]) == 5.0


def test_catalog_show_lists_the_files_price_as_current(tmp_path: Path) -> None:
    """`catalog show p5` had marked the file's price 'superseded by $55.04 of 2026-07'; the built-in price it
    overrides is gone, the older one is superseded by the file's."""
    catalog = load_catalog(files=[_prices(tmp_path, "date: '2026-01', value: 40.0")])
    rows = [p for p in system_json(catalog, "p5.48xlarge")["prices"] if p["mode"] == "on-demand" and "system" in p]
    assert [(p["value"], p.get("superseded_by")) for p in rows] == [
        (98.32, {"value": 40.0, "date": "2026-01"}),
        (40.0, None),
    ]
    aws = [q for q in latest_quotes(catalog, "h100-sxm") if q.provider == "aws"]
    assert [(q.entry, q.usd_per_chip_hour) for q in aws] == [("p5.48xlarge", 5.0)]


def test_the_newest_of_a_files_prices_wins(tmp_path: Path) -> None:
    """Among a file's own prices of one offer the newest still wins."""
    assert _p5_on_demand([_prices(tmp_path, "date: '2026-03', value: 48.0", "date: '2026-01', value: 40.0")]) == 6.0


def test_a_commitment_is_carried_to_the_files_on_demand_rate(tmp_path: Path) -> None:
    """The 1-year reservation ($52, 2025) was listed against the $98.32 on-demand rate, which the built-in history
    keeps: it is carried to the file's $40 as it was to AWS's $55.04 (52 x 55.04 / 98.32 / 8 = $3.639)."""
    assert _p5_on_demand([], "reserved-1y") == pytest.approx(52 * 55.04 / 98.32 / 8)
    carried = _p5_on_demand([_prices(tmp_path, "date: '2026-01', value: 40.0")], "reserved-1y")
    assert carried == pytest.approx(52 * 40 / 98.32 / 8)


def test_a_bad_file_price_beside_a_set_price_names_its_file(tmp_path: Path) -> None:
    """`--set ID.price` was inserted first and took the index of the file's first price: the file's error then
    named the built-in catalog."""
    f = _prices(tmp_path, "date: '2026-01', value: -1")
    with pytest.raises(ChipwiseError) as info:
        load_catalog(files=[f], sets=["h100.price=2"])
    assert str(info.value).startswith(f"{f}: price for p5.48xlarge.value")


MY_CHIP = """
chips:
  my-chip:
    name: My Chip
    vendor: nvidia
    family: hopper
    status: projected
    aliases: [{alias}]
    default_system: {system}
    flops: {{bf16: {{value: 2000, unit: TFLOP/s, status: projected, derivation: "2x H100"}}}}
    hbm_capacity: {{value: 192, unit: GiB, status: projected, derivation: guess}}
    hbm_bandwidth: {{value: 6, unit: TB/s, status: projected, derivation: guess}}
    tdp: {{value: 900, unit: W, status: estimate, derivation: guess}}
    scaleup_bandwidth: {{value: 900, unit: GB/s, status: projected, derivation: guess}}
    scaleout_bandwidth: {{value: 50, unit: GB/s, status: projected, derivation: guess}}
systems:
  {system}:
    name: My box
    kind: server
    provider: oem
    chip: my-chip
    chips: 8
    status: projected
    scaleup: {{kind: switched, fabric: nvlink4, size: 8}}
    scaleout:
      fabric: efa-v2
      bandwidth: {{value: 3200, unit: Gb/s, status: projected, derivation: guess}}
    power: {{value: 10, unit: kW, status: estimate, derivation: guess}}
"""


def _chip_file(tmp_path: Path, alias: str, system: str = "my-box") -> Path:
    f = tmp_path / "mine.yaml"
    f.write_text(MY_CHIP.format(alias=alias, system=system))
    return f


def _error(files: list[Path]) -> str:
    with pytest.raises(ChipwiseError) as info:
        load_catalog(files=files)
    return str(info.value)


def test_an_alias_of_a_builtin_system_is_refused(tmp_path: Path) -> None:
    """'p5' as a new chip's alias had taken p5.48xlarge's name over: a p5 scenario ran on 'my-chip'."""
    f = _chip_file(tmp_path, "P5")
    assert _error([f]) == (
        f"{f}: chips.my-chip: alias 'P5' is already the alias of system 'p5.48xlarge' (built-in catalog). Fix: drop "
        "'P5' from my-chip's aliases or rename it; to change p5.48xlarge itself, give its figures under "
        "systems.p5.48xlarge (docs/catalog-format.md)."
    )


def test_an_alias_of_a_builtin_chip_is_refused(tmp_path: Path) -> None:
    """'h100' (h100-sxm's alias) had been taken and was silently dead."""
    f = _chip_file(tmp_path, "h100")
    assert _error([f]).startswith(
        f"{f}: chips.my-chip: alias 'h100' is already the alias of chip 'h100-sxm' (built-in catalog). Fix: drop"
    )


def test_an_id_that_is_another_entrys_name_is_refused(tmp_path: Path) -> None:
    """A new system under a built-in chip's id, and one under the file's own chip's id."""
    f = _chip_file(tmp_path, "mine", system="trn2")
    assert _error([f]).startswith(
        f"{f}: systems.trn2: id 'trn2' is already the id of chip 'trn2' (built-in catalog). Fix: give system "
        "'trn2' another id;"
    )
    g = _chip_file(tmp_path, "mine", system="mine")
    assert _error([g]).startswith(f"{g}: systems.mine: id 'mine' is already the alias of chip 'my-chip' ({g}).")


def test_an_entry_redeclared_under_its_own_id_overrides_it(tmp_path: Path) -> None:
    """Re-declaring a built-in entry under its id, with its own alias, changes its figures: one entry, no clash."""
    f = tmp_path / "h100.yaml"
    f.write_text(
        "chips:\n  h100-sxm:\n    aliases: [h100, my-h100]\n"
        "    tdp: {value: 600, unit: W, status: estimate, derivation: capped}\n"
    )
    catalog = load_catalog(files=[f])
    chip = hardware(catalog).chip("my-h100")
    assert (chip.id, chip.tdp) == ("h100-sxm", 600.0)
    assert hardware(catalog).system("p5").id == "p5.48xlarge"

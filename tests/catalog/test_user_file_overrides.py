"""A `--catalog` file overrides the built-in catalog: its price of an offer wins whatever the dates (a dated one; in
every region where it names none), a name it gives (an id, an alias) that is another entry's is refused, and a chip
figure it changes reaches that chip's built-in systems as the same --set does."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.api import predict
from chipwise.catalog import load_catalog
from chipwise.economics.pricing import latest_quotes, price_per_chip_hour
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.interfaces.cli.catalog_cmd import system_json

P5 = "system: p5.48xlarge, provider: aws, mode: on-demand, unit: USD/h, status: spec"
US_EAST_1 = "region: us-east-1, "
#: the 1-year reservation ($52 an hour, 2025) carried to an on-demand rate of $40 an hour, from the $98.32 of its day,
#: per chip-hour: what `--set p5.48xlarge.price=40` gives
RESERVED_AT_40 = 52 * 40 / 98.32 / 8


def _prices(tmp_path: Path, *entries: str, region: str = US_EAST_1) -> Path:
    """A catalog file of p5.48xlarge's AWS on-demand prices: `entries` are 'value: V, date: D' (or no date)."""
    f = tmp_path / "myprice.yaml"
    f.write_text(
        "prices:\n" + "".join(f"  - {{{P5}, {region}{e}, source: ['my negotiated quote']}}\n" for e in entries)
    )
    return f


def _p5_on_demand(
    files: list[Path], mode: str = "on-demand", region: str | None = None, as_of: str | None = None
) -> float:
    catalog = load_catalog(files=files)
    quote = price_per_chip_hour(catalog, hardware(catalog).system("p5.48xlarge"), mode, region, as_of=as_of)
    assert quote is not None and quote.region_matched
    return quote.usd_per_chip_hour


@pytest.mark.parametrize("date", ["2024", "2026-01", "2026-07", "2026-09"])
def test_a_files_price_wins_over_the_builtin_one_of_its_offer(tmp_path: Path, date: str) -> None:
    """The built-in $55.04 (2026-07) had beaten a file's $40 dated before it or on its date (the newest price won):
    predict kept $6.880 a chip-hour with no word."""
    assert _p5_on_demand([_prices(tmp_path, f"date: '{date}', value: 40.0")]) == 5.0


def test_an_undated_file_price_is_refused(tmp_path: Path) -> None:
    """An undated price had wiped its offer's history: the reservation listed against it stayed at $52 / 8 = $6.50
    a chip-hour, above the user's own $5.00 on demand."""
    f = _prices(tmp_path, "date: '2026-01', value: 48.0", "value: 40.0")
    with pytest.raises(ChipwiseError) as info:
        load_catalog(files=[f])
    assert str(info.value) == (
        f"{f}: price for p5.48xlarge (aws on-demand) has no date. Fix: give the date of the quote (date: '2026-01'): "
        "a file's price replaces the catalog's prices of its offer from that date on, and the older ones stay its "
        "history."
    )


@pytest.mark.parametrize("region", ["", US_EAST_1])
def test_a_files_price_without_a_region_holds_in_every_region(tmp_path: Path, region: str) -> None:
    """A price with no region (the schema's default) had been another offer than the catalog's us-east-1 one and lost
    to it on date ($6.88 used, the file's $40 listed beside it); it replaces the provider's price in every region,
    also where a region is asked for, and carries the reservation."""
    f = _prices(tmp_path, "date: '2026-01', value: 40.0", region=region)
    assert _p5_on_demand([f]) == _p5_on_demand([f], region="us-east-1") == 5.0
    assert _p5_on_demand([f], "reserved-1y", "us-east-1") == pytest.approx(RESERVED_AT_40)


def test_a_regionless_file_price_is_the_only_current_offer_of_its_provider(tmp_path: Path) -> None:
    """tco's price list (latest_quotes) had kept AWS's older us-east-1 list price beside a file's regionless one,
    a rate no lookup uses listed as current."""
    f = _prices(tmp_path, "date: '2026-08', value: 40.0", region="")
    aws = [q for q in latest_quotes(load_catalog(files=[f]), "h100-sxm") if q.provider == "aws"]
    assert [(q.region, q.usd_per_chip_hour) for q in aws] == [("", 5.0)]


def test_a_regionless_file_price_wins_over_a_catalog_estimate(tmp_path: Path) -> None:
    """A Trn3 quote without a region had lost to the catalog's us-east-2 estimate ($5.28, 2026-08): an AWS quote
    losing to a chipwise guess, in silence."""
    f = tmp_path / "trn3.yaml"
    f.write_text(
        "prices:\n  - {chip: trn3, provider: aws, mode: on-demand, value: 4.0, unit: USD/h, date: '2026-01', "
        "status: spec, source: ['my AWS quote']}\n"
    )
    catalog = load_catalog(files=[f])
    quote = price_per_chip_hour(catalog, hardware(catalog).system("trn3"), region="us-east-2")
    assert quote is not None
    assert (quote.usd_per_chip_hour, quote.status, quote.region, quote.region_matched) == (4.0, "spec", "", True)


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


@pytest.mark.parametrize("date", ["2024", "2025", "2025-03", "2025-12-15", "2026-01", "2026-09"])
def test_a_commitment_is_carried_to_the_files_on_demand_rate(tmp_path: Path, date: str) -> None:
    """The 1-year reservation ($52, 2025) was listed against the built-in $98.32 on-demand rate: it is carried to the
    file's $40 of any date as to AWS's $55.04 (52 x 55.04 / 98.32 / 8 = $3.639) and as to a --set $40 ($2.644). A
    file's $40 of 2025-12-15 had been read as the rate of the reservation's '2025', one of 2025 or before had taken
    the $98.32 out of the history: $6.50, above the $5.00 on demand."""
    assert _p5_on_demand([], "reserved-1y") == pytest.approx(52 * 55.04 / 98.32 / 8)
    catalog = load_catalog(sets=["p5.48xlarge.price=40"])
    by_set = price_per_chip_hour(catalog, hardware(catalog).system("p5.48xlarge"), "reserved-1y")
    assert by_set is not None and by_set.usd_per_chip_hour == pytest.approx(RESERVED_AT_40)
    carried = _p5_on_demand([_prices(tmp_path, f"date: '{date}', value: 40.0")], "reserved-1y")
    assert carried == pytest.approx(RESERVED_AT_40)


def test_the_builtin_prices_before_a_files_stay_its_history(tmp_path: Path) -> None:
    """A price asked for as of a date before the file's is the catalog's of then ($98.32 / 8 = $12.29)."""
    f = _prices(tmp_path, "date: '2026-01', value: 40.0")
    assert _p5_on_demand([f], as_of="2025-06") == pytest.approx(98.32 / 8)
    assert _p5_on_demand([f], as_of="2026-02") == 5.0


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


def test_a_files_commitment_is_not_carried_by_the_builtin_on_demand_history(tmp_path: Path) -> None:
    """A file's reservation quote ($30, 2026-01) had been read as listed against the built-in $98.32 and cut to
    30 x 55.04 / 98.32 / 8 = $2.10; it is the user's quote of its day, with no on-demand price of the file beside it:
    $30 / 8."""
    f = tmp_path / "reserved.yaml"
    f.write_text(
        "prices:\n  - {system: p5.48xlarge, provider: aws, region: us-east-1, mode: reserved-1y, value: 30, "
        "date: '2026-01', status: spec, source: ['my reservation quote']}\n"
    )
    assert _p5_on_demand([f], "reserved-1y") == 30 / 8


# A chip figure a --catalog file changes reaches the built-in systems of that chip as the same --set does (one what-if
# had given two answers: the file left trn2.48xlarge at its own 512 GB/s, the --set moved it to 256 GB/s); a system
# figure the file (or a --set) gives itself stands, and a system the file defines has the file's figures.


#: trn2's default system, trn2.48xlarge, gives its own scale-up figure (512 GB/s), which the model reads over the
#: chip's 640 GB/s; a TP16 step within it
TP16 = {
    "kind": "train",
    "model": "llama-3.1-8b",
    "hardware": "trn2",
    "chips": 16,
    "precision": "bf16",
    "seq_len": 8192,
    "global_batch_tokens": 1048576,
    "tokens": 1e10,
    "plan": {"tp": 16, "pp": 1, "dp": 4, "microbatch": 1},
}
CHIP_320 = "chips:\n  trn2:\n    scaleup_bandwidth: {value: 320, unit: GB/s, status: estimate, derivation: what-if}\n"


def _file(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "what_if.yaml"
    f.write_text(text)
    return f


def test_a_files_chip_scaleup_moves_its_systems_as_the_set_does(tmp_path: Path) -> None:
    """512 GB/s x 320/640 = 256 GB/s either way, and the same step (33.02 s; 22.96 s at the catalog's 512 GB/s, where
    the file had left it)."""
    f = _file(tmp_path, CHIP_320)
    by_file, by_set = load_catalog(files=[f]), load_catalog(sets=["trn2.scaleup_bandwidth=320GB/s"])
    for cat in (by_file, by_set):
        bandwidth = cat.systems["trn2.48xlarge"].scaleup.bandwidth
        assert bandwidth is not None and bandwidth.si == pytest.approx(256e9)
    assert by_file.systems["trn2.48xlarge"].scaleup.bandwidth.note.startswith(  # type: ignore[union-attr]
        f"what-if: follows {f}'s trn2.scaleup_bandwidth; catalog value was 512 GB/s"
    )
    file_step = predict(TP16, files=[f])["step_time_s"]
    assert file_step == pytest.approx(predict(TP16, sets=["trn2.scaleup_bandwidth=320GB/s"])["step_time_s"])
    assert file_step == pytest.approx(33.02, abs=0.01)
    assert predict(TP16)["step_time_s"] == pytest.approx(22.96, abs=0.01)


#: the tester's tr_us.yaml: TP16 in the Trn2 UltraServer, whose torus gives per-dimension figures and no total
ULTRA_TP16 = {"kind": "train", "model": "llama-3.1-70b", "hardware": "trn2-ultraserver", "chips": 64,
              "precision": "bf16", "seq_len": 8192, "global_batch_tokens": 4194304, "tokens": 1e11,
              "plan": {"tp": 16, "pp": 1, "dp": 16}}  # fmt: skip


def test_a_files_chip_scaleup_moves_a_torus_dimensions_as_the_set_does(tmp_path: Path) -> None:
    """The file's trn2.scaleup_bandwidth had left the UltraServer's 256/256/128 GB/s (exposed TP communication
    50.516 s, as the catalog's) while the same --set halved them (100.848 s): both now give 128/128/64 GB/s."""
    f = _file(tmp_path, CHIP_320)
    for cat in (load_catalog(files=[f]), load_catalog(sets=["trn2.scaleup_bandwidth=320GB/s"])):
        system = hardware(cat).system("trn2-ultraserver")
        assert system.scaleup.dim_bandwidth == pytest.approx((128e9, 128e9, 64e9))
        assert system.scaleup.bandwidth == pytest.approx(320e9)
    assert round(predict(ULTRA_TP16)["breakdown"]["tp_comm"], 3) == 50.516
    assert round(predict(ULTRA_TP16, files=[f])["breakdown"]["tp_comm"], 3) == 100.848
    assert round(predict(ULTRA_TP16, sets=["trn2.scaleup_bandwidth=320GB/s"])["breakdown"]["tp_comm"], 3) == 100.848


def test_catalog_show_gives_the_torus_dimensions_a_chip_what_if_uses() -> None:
    """`catalog show trn2-ultraserver --set trn2.scaleup_bandwidth=320GB/s` had shown 256/256/128 GB/s `estimate`
    with no what-if note, while the model ran 128/128/64."""
    figures = system_json(load_catalog(sets=["trn2.scaleup_bandwidth=320GB/s"]), "trn2-ultraserver")["figures"]
    dims = [figures[f"scaleup.dim_bandwidth.{i}"] for i in range(3)]
    assert [d["value"] for d in dims] == [128.0, 128.0, 64.0]
    assert dims[2]["note"] == "what-if: follows --set trn2.scaleup_bandwidth=320GB/s; catalog value was 128 GB/s"
    assert dims[2]["derivation"].startswith(
        "trn2 scale-up bandwidth moved by --set trn2.scaleup_bandwidth=320GB/s: 128 GB/s x 320 / 640 GB/s; the "
        "catalog's 128 GB/s (estimate: trn2-arch table: inter-instance"
    )


def test_a_files_own_torus_dimensions_stand(tmp_path: Path) -> None:
    """The file's chip figure does not move dimension figures the same file gives the system (256 GB/s each)."""
    fig = "{value: 256, unit: GB/s, status: spec, source: [NRN_TRN2_ARCH]}"
    f = _file(
        tmp_path,
        CHIP_320 + f"systems:\n  trn2-ultraserver:\n    scaleup:\n      dim_bandwidth: [{fig}, {fig}, {fig}]\n",
    )
    assert hardware(load_catalog(files=[f])).system("trn2-ultraserver").scaleup.dim_bandwidth == (256e9,) * 3


def test_a_system_figure_the_file_gives_stands(tmp_path: Path) -> None:
    """The file's own 400 GB/s for trn2.48xlarge is kept (not 400 x 320/640); a system the file defines of trn2 keeps
    its 300 GB/s; the UltraServer, with no figure of its own, takes the chip's 320 GB/s."""
    f = _file(
        tmp_path,
        CHIP_320 + "systems:\n"
        "  trn2.48xlarge:\n"
        "    scaleup: {bandwidth: {value: 400, unit: GB/s, status: estimate, derivation: measured}}\n"
        "  my-trn2:\n"
        "    name: my trn2 box\n    kind: instance\n    provider: aws\n    status: spec\n"
        "    chip: trn2\n    chips: 16\n"
        "    scaleup: {kind: torus, size: 16, dims: [4, 4], fabric: neuronlink-v3,\n"
        "              bandwidth: {value: 300, unit: GB/s, status: estimate, derivation: measured}}\n"
        "    scaleout: {fabric: efa-v3, bandwidth: {value: 3200, unit: Gb/s, status: estimate, derivation: as AWS}}\n",
    )
    cat = load_catalog(files=[f])
    assert cat.systems["trn2.48xlarge"].scaleup.bandwidth.si == pytest.approx(400e9)  # type: ignore[union-attr]
    assert cat.systems["my-trn2"].scaleup.bandwidth.si == pytest.approx(300e9)  # type: ignore[union-attr]
    assert cat.systems["trn2-ultraserver"].scaleup.bandwidth is None
    assert cat.chips["trn2"].scaleup_bandwidth.si == pytest.approx(320e9)


def test_a_files_tdp_and_a_set_on_it_compose(tmp_path: Path) -> None:
    """The file's 350 W H100 moves p5's 10.2 kW by 8 x (350 - 700) W to 7,400 W, as --set h100-sxm.tdp=350W; a
    --set over the file's chip figure moves on from the file's: 320 then 160 GB/s is 512 x 160/640 = 128 GB/s."""
    f = _file(tmp_path, "chips:\n  h100-sxm:\n    tdp: {value: 350, unit: W, status: estimate, derivation: capped}\n")
    for cat in (load_catalog(files=[f]), load_catalog(sets=["h100-sxm.tdp=350W"])):
        power = cat.systems["p5.48xlarge"].power
        assert power is not None and power.si == pytest.approx(10.2e3 - 8 * 350)
    both = load_catalog(files=[_file(tmp_path, CHIP_320)], sets=["trn2.scaleup_bandwidth=160GB/s"])
    assert both.systems["trn2.48xlarge"].scaleup.bandwidth.si == pytest.approx(128e9)  # type: ignore[union-attr]


def test_the_builtin_catalog_does_not_move() -> None:
    cat = load_catalog()
    assert cat.systems["trn2.48xlarge"].scaleup.bandwidth.si == pytest.approx(512e9)  # type: ignore[union-attr]
    assert cat.systems["p5.48xlarge"].power.si == pytest.approx(10.2e3)  # type: ignore[union-attr]


@pytest.mark.parametrize("date", ["2026-7", "2026-13", "yesterday", "2026-07-32", "26-07"])
def test_a_price_date_that_is_no_date_is_refused(tmp_path: Path, date: str) -> None:
    """Dates are compared as text: '2026-7' had sorted after '2026-10' (the older $10 quote won over the newer $20)
    and 'yesterday' after every date."""
    f = _prices(tmp_path, f"date: '{date}', value: 40.0")
    with pytest.raises(ChipwiseError) as info:
        load_catalog(files=[f])
    assert str(info.value).startswith(
        f"{f}: price for p5.48xlarge.date: date '{date}' is not a date: give YYYY-MM (e.g. '2026-07'), YYYY or "
        "YYYY-MM-DD."
    )


def test_a_price_dated_by_a_yaml_date_or_a_year_is_taken(tmp_path: Path) -> None:
    """An unquoted 2026-07-15 is a YAML date and 2026 a number: both read as the dates they are."""
    f = _prices(tmp_path, "date: 2026-07-15, value: 40.0", "date: 2026, value: 80.0")
    assert _p5_on_demand([f]) == 5.0  # the July quote is the newer


@pytest.mark.parametrize(("region", "close"), [("mars", ""), ("us-east-l", " Did you mean 'us-east-2', 'us-east-1'")])
def test_a_price_in_a_region_no_lookup_takes_is_refused(tmp_path: Path, region: str, close: str) -> None:
    """A typo in a price's region had left the user's quote unused, the built-in $6.88 a chip-hour priced instead."""
    f = _prices(tmp_path, "date: '2026-09', value: 40.0", region=f"region: {region}, ")
    with pytest.raises(ChipwiseError) as info:
        load_catalog(files=[f])
    message = str(info.value)
    assert message.startswith(
        f"{f}: price for p5.48xlarge: region '{region}' is not a region of the catalog, so no lookup would take the "
        f"price.{close}"
    )
    assert "Fix: use a region of datacenter.grid_intensity" in message


def test_a_price_in_a_region_the_file_gives_a_grid_is_taken(tmp_path: Path) -> None:
    """A region the file adds to datacenter.grid_intensity, or a price region (us-east-1-dfw), is one a lookup takes."""
    f = _prices(tmp_path, "date: '2026-09', value: 40.0", region="region: eu-west-9, ")
    f.write_text(
        f.read_text()
        + "datacenter:\n  grid_intensity:\n"
        + "    eu-west-9: {value: 300, unit: gCO2e/kWh, status: estimate, derivation: x}\n"
    )
    assert _p5_on_demand([f], region="eu-west-9") == 5.0
    assert load_catalog(files=[_prices(tmp_path, "date: '2026-09', value: 40.0", region="region: us, ")])

"""The figures energy and carbon rest on: one host-power convention, the node-level busy fraction, datacenter figures
no prediction reads refused, EIA's US grid figure (combustion CO2, labelled so), one source for both Australian AWS
regions, and the fix for the 'global' region."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.economics.energy import check_region, site_for
from chipwise.economics.power import power_model
from chipwise.errors import ChipwiseError
from chipwise.hardware import Hardware, hardware


def test_a_busy_dgx_h100_node_draws_the_measured_7_75_kw(catalog: Catalog, hw: Hardware) -> None:
    """Newkirk 2025: an 8x H100 node training draws 76% of its 10.2 kW rating, 7.75 kW. The busy fraction is that
    node-level figure, applied to chip and host: 8 x (700 + 575) W x 0.76 = 7,752 W (0.8 had drawn 8,160 W)."""
    p = power_model(catalog, hw.system("h100-sxm"), scaleout=False)
    assert p.host_w == pytest.approx(575.0)
    assert 8 * p.busy_w == pytest.approx(0.76 * 10_200) == pytest.approx(7_752)


def test_a_system_with_no_published_power_takes_the_dgx_host_share(catalog: Catalog, hw: Hardware) -> None:
    """An MI300X server had 8 x 750 W x 1.3 (no source): 225 W of host a GPU against a DGX H100's 575 W. With the
    catalog's host_power_fraction (the DGX H100's 4.6 / 5.6 kW) it is 750 x 0.82 = 615 W, busy 0.76 x 1,365 =
    1,037.4 W a chip, and the fraction is listed among the run's figures."""
    p = power_model(catalog, hw.system("mi300x"), scaleout=False)
    assert p.host_w == pytest.approx(615.0)
    assert p.busy_w == pytest.approx(1_037.4)
    assert "datacenter.opex.host_power_fraction" in {t.key for t in p.terms()}
    assert hw.system("mi300x").power == pytest.approx(8 * 750 * 1.82)  # the power `catalog list` and claims see


def test_the_host_power_fraction_is_read_where_no_system_power_is_published() -> None:
    """`--set datacenter.opex.host_power_fraction=0.1` had come out the same; it moves the systems without a
    published power (MI300X: 75 W of host), not those with one (the p5's DGX rating: 575 W)."""
    cat = load_catalog(sets=["datacenter.opex.host_power_fraction=0.1"])
    hw = hardware(cat)
    assert power_model(cat, hw.system("mi300x"), scaleout=False).host_w == pytest.approx(75.0)
    assert power_model(cat, hw.system("h100-sxm"), scaleout=False).host_w == pytest.approx(575.0)


def test_a_system_power_set_on_the_command_line_is_the_systems_own() -> None:
    """A system with no published power takes one by --set (in place of the fallback's 8 x 750 W x 1.82 = 10.92 kW)."""
    cat = load_catalog(sets=["mi300x-8x.power=10.5kW"])
    assert power_model(cat, hardware(cat).system("mi300x"), scaleout=False).host_w == pytest.approx(10_500 / 8 - 750)


@pytest.mark.parametrize(
    "assignment",
    [
        "datacenter.google_cfe_fraction.us-central1=0.5",
        "datacenter.opex.tpu_ocs_power_fraction=0.5",
        "datacenter.capex.tpu_ocs_cost_fraction=0.1",
    ],
)
def test_a_datacenter_figure_no_prediction_reads_is_refused(assignment: str) -> None:
    """They had been accepted and changed nothing, as the reliability reference figures are refused."""
    with pytest.raises(ChipwiseError, match="no prediction reads this datacenter figure") as err:
        load_catalog(sets=[assignment])
    assert "Fix:" in str(err.value) and "\n" not in str(err.value)


def test_the_us_grid_is_eias_2023_average(catalog: Catalog, hw: Hardware) -> None:
    """EIA FAQ 74: 1,532 Mt CO2 / 4,183 billion kWh in 2023 = 366 g/kWh (Statista's 760 lb/MWh gave 345)."""
    site = site_for(catalog, hw.system("mi300x"), owned=True)
    assert site.region == "country-usa"
    assert site.grid.value * 3.6e9 == pytest.approx(366.0) == pytest.approx(1_532e9 / 4_183e9 * 1e3, abs=0.5)
    assert catalog.datacenter["grid_intensity"]["us-average"].si == site.grid.value


def test_the_us_grid_figure_is_labelled_co2_as_its_derivation_says(catalog: Catalog, hw: Hardware) -> None:
    """EIA's 1,532 Mt CO2 / 4,183 billion kWh = 366 g/kWh is combustion CO2 only; it had been labelled gCO2e/kWh."""
    site = site_for(catalog, hw.system("h100-sxm"), owned=True)
    assert site.grid.unit == "gCO2/kWh" and "CO2 only" in site.grid.derivation
    assert site.grid.value == pytest.approx(366 / 3.6e9)  # the same number: 366 g a kWh, in kg a joule


def test_melbourne_and_sydney_carry_one_source(catalog: Catalog) -> None:
    """ap-southeast-4 had been placed in Ember's 2023 national 549 g/kWh, Sydney on CCF's 790: one vintage now."""
    assert check_region(catalog, "ap-southeast-4") == "ap-southeast-4"
    grids = catalog.datacenter["grid_intensity"]
    melbourne, sydney = grids["ap-southeast-4"], grids["ap-southeast-2"]
    assert melbourne.si == sydney.si and melbourne.source == sydney.source


def test_a_global_region_fix_names_the_scenario_key_too(catalog: Catalog) -> None:
    """`predict` has no --region: the fix names a scenario's region: key as well."""
    with pytest.raises(ChipwiseError, match="region: key") as err:
        check_region(catalog, "global")
    assert "country-usa" in str(err.value)

"""Where the catalog's prices are quoted: the regions of a price that are not grid regions, and the cloud whose name
a region is."""

from __future__ import annotations

import re

from chipwise.errors import ChipwiseError

#: Regions the catalog's prices are quoted in that are not grid regions, and the grid region each lies in (a price
#: quoted there runs, and --region names, that grid): an AWS Local Zone, a neocloud's country-wide list price, another
#: cloud's region name. None: a price region that names no place (one worldwide list price), which --region refuses.
PRICE_REGIONS: dict[str, tuple[str | None, str]] = {
    "us-east-1-dfw": ("us-tx", "AWS's Dallas Local Zone (the P6e-GB200 UltraServers' location), in Texas"),
    "us": ("country-usa", "a provider's one price across its US data centres"),
    "us-ashburn-1": ("us-va", "Oracle Cloud's Ashburn, Virginia region"),
    "us-central2": ("us-ok", "Google Cloud's TPU region in Mayes County, Oklahoma"),
    "global": (None, "a provider's one worldwide list price"),
}

#: How each cloud that names its own regions names them (the catalog's AWS, GCP and Azure region names do not collide:
#: datacenter.yaml), in the order tried, with its name in a sentence and a region of its to offer in a fix. AWS's
#: (us-east-1, us-gov-west-1, a Local Zone us-east-1-dfw) name a compass direction; Oracle's a city (us-ashburn-1);
#: Google's end in a number with no hyphen before it (us-central1); Azure's are one word with a direction (eastus2).
CLOUD_REGIONS: dict[str, tuple[re.Pattern[str], str, str]] = {
    "aws": (re.compile(r"^[a-z]{2}(-gov)?-(north|south)?(east|west|central)?-\d+(-[a-z]+)?$"), "an AWS", "us-east-1"),
    "oci": (re.compile(r"^[a-z]{2}-[a-z]+-\d+$"), "an Oracle Cloud", "us-ashburn-1"),
    "gcp": (re.compile(r"^[a-z]+-[a-z]+\d+$"), "a Google Cloud", "us-central1"),
    "azure": (re.compile(r"^(?=[a-z]*(east|west|north|south|central))[a-z]+\d?$"), "an Azure", "eastus"),
}


def region_cloud(region: str) -> str | None:
    """The cloud whose region name `region` is (CLOUD_REGIONS), or None for a place any provider may run in (a US
    state us-va, a country country-usa, a price region such as 'us' or 'global')."""
    return next((cloud for cloud, (names, _, _) in CLOUD_REGIONS.items() if names.match(region)), None)


def check_region_provider(region: str | None, provider: str | None, name: str = "provider") -> None:
    """One line where one cloud's region is asked of another cloud: us-east-1 with provider gcp had priced GCP's
    us-central1 and run the energy at us-east-1's grid with Google's PUE. A provider that names no regions of its own
    (a neocloud) may run in any place, a cloud's region included; `name` is the caller's word for the provider
    ('--provider')."""
    own = region_cloud(region) if region else None
    if own is None or provider not in CLOUD_REGIONS or own == provider:
        return
    article = "an" if provider[0] in "aeiou" else "a"
    raise ChipwiseError(
        f"{region} is {CLOUD_REGIONS[own][1]} region; {name} is {provider}. Fix: give {article} {provider} region "
        f"such as {CLOUD_REGIONS[provider][2]}, or drop {name}."
    )

"""Where the catalog's prices are quoted: the regions of a price that are not grid regions."""

from __future__ import annotations

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

"""Which providers rent a system, whether its chip can be bought, and so whether two systems can share one
datacenter network (a mixed pipeline's hand-off, a prefill/decode split's KV cache)."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from chipwise.catalog.loader import Catalog
from chipwise.economics.pricing import rents_out
from chipwise.hardware import hardware
from chipwise.hardware.objects import System


def _offered(catalog: Catalog, system: System, systems: list[System]) -> tuple[set[str], bool]:
    """Who rents `system` (its provider, where that is a cloud the catalog prices; a vendor's reference system: the
    clouds that rent its chip), and whether its chip can be bought: the catalog holds a vendor's server of it, or
    more than one cloud rents it (they bought it: an H200, which no vendor server here holds); a chip only its own
    cloud rents (Trainium, TPU) cannot be. `systems`: the catalog's, built once."""
    same_chip = [s for s in systems if s.chip.id == system.chip.id]
    ids = {s.id for s in same_chip}
    renting = {p.provider for p in catalog.prices if p.chip == system.chip.id or p.system in ids}
    where = {system.provider} if rents_out(catalog, system.provider) else renting
    return where, len(renting) > 1 or any(not rents_out(catalog, s.provider) and not s.hybrid for s in same_chip)


def network_gap(
    catalog: Catalog, a: System, b: System, searched: Collection[str] = (), pricing: str = "on-demand"
) -> str | None:
    """Why two systems cannot share one datacenter network (no provider in the catalog rents both, and they cannot
    both be bought and racked together: a TPU pod beside an EC2 instance), with the fix; None where they can.
    `searched`: the ids of the systems a search already holds (plan serve's --hardware). A system among them that
    one of the other's providers rents is not offered as the fix: it is paired already, and the line says so.
    p5.48xlarge beside tpu-v6e-256, searched with gcp-a3-megagpu-8g, had read 'Fix: name systems one provider rents
    (gcp-a3-highgpu-8g for p5.48xlarge, gcp-a3-megagpu-8g for p5.48xlarge)' beside that system's ranked splits; it
    now reads 'Nothing to fix: the same chips are paired as gcp-a3-megagpu-8g>tpu-v6e-256, searched too.'
    `pricing`: the mode the pair is priced in; owned pricing has its own rule (_unowned_gap)."""
    if pricing == "owned":
        return _unowned_gap(a, b)
    hw = hardware(catalog)
    systems = [hw.system(sid) for sid in hw.system_ids]
    (where_a, own_a), (where_b, own_b) = _offered(catalog, a, systems), _offered(catalog, b, systems)
    if where_a & where_b or (own_a and own_b):
        return None
    rent = " and ".join(f"{s.id} from {', '.join(sorted(w)) or 'no provider'}" for s, w in ((a, where_a), (b, where_b)))
    bought = "neither" if not (own_a or own_b) else "only one"
    return f"no provider rents both ({rent}), and {bought} can be bought: no network joins them. " + _gap_fix(
        systems, a, b, where_a, where_b, set(searched)
    )


def _unowned_gap(a: System, b: System) -> str | None:
    """network_gap's rule under owned pricing: every chip with a unit price is bought and priced as owned
    (serving_economics.chip_hour_price), so it stands in the owner's data centre, and any two such chips are joined
    by the owner's scale-out network (a split across systems pays its share: serving_economics.split_network). Owned,
    plan serve had refused 8 prefill>decode pairs of tpu-v6e with h100-sxm, mi300x and b200 as chips that 'cannot
    both be bought' (the catalog's rentals' rule), while pricing owned TPU v6e fleets in the same table (Llama 3.1 70B
    at 10 req/s, eu-west-1); they are now paired, b200>tpu-v6e ranking 10 chips at $11.08/h with the network's share.
    A chip with no unit price cannot be bought: the line names it, with the fix."""
    unpriced = [s.chip.id for s in (a, b) if s.chip.unit_price is None]
    if not unpriced:
        return None
    chip = unpriced[0]
    return (
        f"{chip} has no unit price, so an owned fleet cannot buy it: no network joins them. Fix: give it one "
        f"(--set {chip}.unit_price=USD)."
    )


def _gap_fix(
    systems: list[System], a: System, b: System, where_a: set[str], where_b: set[str], searched: set[str]
) -> str:
    """The fix of network_gap's line: each chip's systems that a provider of the other part rents (gcp-a3-megagpu-8g
    beside a TPU pod); or, where one of them was searched already, the pair it makes in a>b order."""
    swaps = [
        (s, x, first)
        for x, theirs, first in ((a, where_b, True), (b, where_a, False))
        for s in systems
        if s.chip.id == x.chip.id and s.provider in theirs
    ]
    paired = [f"{s.id}>{b.id}" if first else f"{a.id}>{s.id}" for s, _, first in swaps if s.id in searched]
    if paired:
        return f"Nothing to fix: the same chips are paired as {' and '.join(paired)}, searched too."
    if swaps:
        return f"Fix: name systems one provider rents ({', '.join(f'{s.id} for {x.id}' for s, x, _ in swaps)})."
    return "Fix: pick two chips one provider rents."


def one_operator_note(providers: Iterable[str], what: str) -> str:
    """' (pools priced at aws and digitalocean: one operator running both is assumed)', where the joined `what`
    ('pools', 'parts') are priced at more than one provider; else ''. network_gap joins two systems that can be
    racked together (one provider rents both, or both chips can be bought), so a pair priced at two providers'
    rentals stands for one operator's own deployment, its prices those rentals'."""
    named = sorted(set(providers))
    return f" ({what} priced at {' and '.join(named)}: one operator running both is assumed)" if len(named) > 1 else ""

"""Check public claims about Trainium3 and Trainium4 (re:Invent, December 2025) against chipwise's models.

check_claims runs the seven claims, each split into checks with a verdict (the vocabulary and the records:
planner.claim_verdicts): claims 1, 2 and 4 on hardware (planner.claim_hardware), 3 and 6 on training cost
(planner.claim_costs), 5 on the H100's figures and Trainium2's rent (planner.claim_prices) and 7 on serving
(planner.claim_serving), after refusing a free GPU to set Trainium's costs against, on the user's workload where one
is given (claim_runs.ClaimWorkload: each claim's own otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import asdict
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.catalog.overrides import SET_ON_COMMAND_LINE, USER_PROVIDER
from chipwise.errors import ChipwiseError
from chipwise.planner.claim_costs import GPUS_VS_TRN3, claim3_training_cost, claim6_owned_tco
from chipwise.planner.claim_hardware import TRN4_CHIPS, claim1_trn3_ultraserver, claim2_trn3_specs, claim4_trn4
from chipwise.planner.claim_prices import claim5_h100_and_trn2_prices
from chipwise.planner.claim_runs import CLAIM_MODEL, ClaimRuns, ClaimWorkload, charged_price, check_workload
from chipwise.planner.claim_serving import claim7_serving
from chipwise.planner.claim_verdicts import VERDICTS, Claim

#: the GPU prices the claims set Trainium's costs against (3a, 5e, 7a): each divides by one
GPU_PRICES_COMPARED: tuple[tuple[str, str], ...] = (
    *((g, "on-demand") for g in GPUS_VS_TRN3),
    ("h100-sxm", "capacity-block"),
)


def _require_gpu_prices(runs: ClaimRuns) -> None:
    """One line where a GPU the claims compare Trainium with costs nothing: a saving against a free chip, or a
    cost ratio over $0, means nothing (--set h100-sxm.price=0 had ended in a ZeroDivisionError)."""
    for gpu, mode in GPU_PRICES_COMPARED:
        quote = charged_price(runs, gpu, mode)
        if quote is not None and not quote.usd_per_chip_hour > 0:
            given = SET_ON_COMMAND_LINE if quote.provider == USER_PROVIDER else f"from {quote.provider}'s price"
            raise ChipwiseError(
                f"{gpu}'s {mode} price is ${quote.usd_per_chip_hour:g} a chip-hour ({given}): the claims set "
                f"Trainium's costs against it, and a saving against a free chip means nothing. Fix: give {gpu} a "
                f"price above 0 (e.g. --set {gpu}.price=6.88), or leave it at the catalog's."
            )


#: the claims in the order checked and reported
CLAIMS: tuple[Callable[[ClaimRuns], Claim], ...] = (
    claim1_trn3_ultraserver,
    claim2_trn3_specs,
    claim3_training_cost,
    claim4_trn4,
    claim5_h100_and_trn2_prices,
    claim6_owned_tco,
    claim7_serving,
)
#: told of the work as it goes: (claims checked, claims in all, runs made), as `chipwise claims`'s bar counts them
ClaimProgress = Callable[[int, int, int], None]


def chosen_claims(text: str | Collection[str] | None) -> tuple[int, ...]:
    """The claim numbers asked for (`--claim 3,5` or ['3', '5b']: a check's id names its claim), in order, once
    each; () for all of them. One line for anything but a claim 1-7 or one of its checks."""
    if text is None:
        return ()
    parts = [p.strip() for t in ([text] if isinstance(text, str) else text) for p in str(t).split(",")]
    numbers: set[int] = set()
    for part in parts:
        m = re.fullmatch(r"([1-9]\d*)[a-z]?", part.lower())
        if m is None or not 1 <= int(m.group(1)) <= len(CLAIMS):
            raise ChipwiseError(
                f"claim '{part}' is not one of the {len(CLAIMS)} claims. Fix: give a claim's number, 1-{len(CLAIMS)}, "
                "or a check's id (e.g. 3 or 1a,5c); `chipwise claims` lists them all."
            )
        numbers.add(int(m.group(1)))
    return tuple(sorted(numbers))


def check_claims(
    catalog: Catalog,
    workload: ClaimWorkload | None = None,
    progress: ClaimProgress | None = None,
    only: Collection[int] = (),
) -> dict[str, Any]:
    """The seven claims (or the numbers in `only`, chosen_claims), each with its checks, numbers and verdicts, on
    `workload` (the claims' own by default); `progress` is told of each run and each claim done."""
    claims: list[Claim] = []
    checked = [c for number, c in enumerate(CLAIMS, start=1) if not only or number in only]

    def tell(ran: int) -> None:
        if progress is not None:
            progress(len(claims), len(checked), ran)

    work = check_workload(catalog, workload or ClaimWorkload())
    runs = ClaimRuns(catalog, work, tell)
    _require_gpu_prices(runs)
    if (
        work.model is not None or work.chips is not None
    ):  # claim 4's Trainium3 run, the user's model on the user's fleet
        runs.require_fit(
            work.model_or(CLAIM_MODEL), "trn3-ultraserver", work.chips_or(TRN4_CHIPS), work.precision_or("fp8")
        )
    for check in checked:
        claims.append(check(runs))
        tell(runs.ran)
    return {
        "kind": "claims",
        "verdicts": list(VERDICTS),
        "workload": asdict(work),
        "claims": [c.record(catalog) for c in claims],
    }

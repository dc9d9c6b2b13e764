"""Does a published serving row agree with itself? Its output tokens/s against what its own load and latencies
imply, before any model is involved.

A run's throughput, latencies and load are tied by Little's law: an open loop at `r` requests/s of `O` output
tokens delivers `r O` output tokens/s once it keeps up; a closed loop of `U` users whose requests each take `W`
seconds end to end delivers `U O / W`, where `W` is the row's end-to-end latency or, when it gives none,
TTFT + (O - 1) TPOT (the means where the row gives them). A row whose throughput is far from that has a figure the
others contradict (a throughput that counts other tokens, a run that ended before its requests did, latencies of
another configuration), and no model can match all of its figures. Such rows stay in the validation; they are
flagged, and the summary also gives the errors without them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from chipwise.validation.cells import parse_time
from chipwise.validation.rows import InferenceRow
from chipwise.validation.serving_row_metrics import latency_stats
from chipwise.workload.load import Load

#: Largest ratio between a row's measured output tokens/s and the one its own load and latencies imply that is
#: still read as agreement (an estimate): means and medians mixed in one row, output lengths that vary around the
#: stated one, and a closed loop's gaps between a user's requests move the ratio by tens of percent (the SDK 2.18
#: Neuron tables and optimum-neuron's single-user rows come out at 0.94-1.24); a factor of 1.5 is beyond them.
SELF_CONSISTENCY_TOLERANCE: Final[float] = 1.5
THROUGHPUT: Final[str] = "output_tokens_per_s_per_chip"
#: How a flagged row's note starts (the validation's notes join several with '; ')
NOTE_LEAD: Final[str] = "the row contradicts itself: "


@dataclass(frozen=True)
class SelfCheck:
    """The output tokens/s per chip a row's own load and latencies imply, and the measured one's ratio to it."""

    implied: float
    ratio: float
    basis: str

    @property
    def consistent(self) -> bool:
        return 1.0 / SELF_CONSISTENCY_TOLERANCE <= self.ratio <= SELF_CONSISTENCY_TOLERANCE

    def note(self) -> str:
        return (
            f"{NOTE_LEAD}its output tokens/s per chip is {self.ratio:.2f}x the {self.implied:.4g} that {self.basis} "
            "imply"
        )


def _end_to_end(row: InferenceRow, output_tokens: float) -> tuple[float, str] | None:
    """A request's mean end-to-end latency in seconds: the row's own, or TTFT + (O - 1) TPOT of one statistic, the
    means where the row gives them (Little's law holds for means; medians understate a skewed run's latency)."""
    e2e = parse_time(row.raw.get("e2e_latency_s"), "e2e_latency_s")
    if e2e is not None:
        return e2e, "its end-to-end latency"
    stats = latency_stats(row)
    ttft, tpot = stats.get("ttft_s", {}), stats.get("tpot_s", {})
    got = {m.metric: m.stat for m in row.measured}
    stat = "mean" if "mean" in ttft and "mean" in tpot else got.get("ttft_s")
    if stat is None or stat not in ttft or stat not in tpot:
        return None
    label = "" if stat == "value" else f"{stat} "
    return ttft[stat] + (output_tokens - 1.0) * tpot[stat], f"its {label}TTFT and TPOT"


def self_check(row: InferenceRow, load: Load) -> SelfCheck | None:
    """Compare a row's measured output tokens/s per chip with what its load (`load`, as the validation reads
    it) and its own latencies imply; None when the row lacks the figures (offline runs have no latency)."""
    measured = next((m.value for m in row.measured if m.metric == THROUGHPUT), None)
    out, chips = row.output_len, row.num_chips
    if measured is None or not out or not chips:
        return None
    if load.kind == "rate":
        implied = load.rate * out / chips
        basis = f"{load.rate:.4g} requests/s of {out:.4g} output tokens"
    elif load.kind == "closed":
        e2e = _end_to_end(row, out)
        if e2e is None or e2e[0] <= 0:
            return None
        implied = load.concurrency * out / e2e[0] / chips
        users = f"{load.concurrency} user{'s' if load.concurrency != 1 else ''}"
        basis = f"{users} x {out:.4g} output tokens over {e2e[1]} ({e2e[0]:.4g} s)"
    else:
        return None
    if not (math.isfinite(implied) and implied > 0):
        return None
    return SelfCheck(implied=implied, ratio=measured / implied, basis=basis)

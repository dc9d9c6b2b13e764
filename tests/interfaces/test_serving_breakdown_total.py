"""`chipwise predict`'s serving breakdown gives its steady iteration's total and the batch it is priced at beside the
simulated iterations' mean and the mean TPOT, as `validate --explain` does: its parts (36.3 ms for Llama-3.1-70B on
eight H200 at 20 req/s) had stood beside a mean TPOT of 33.1 ms and simulated iterations of 29.3 ms, unreconciled."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import chipwise.api as cw
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.serve_views import iterations_text, print_serving

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "serve-llama70b-h200.yaml"


def test_the_breakdown_has_its_total_and_the_batch_it_is_priced_at(capsys: pytest.CaptureFixture[str]) -> None:
    text = EXAMPLE.read_text()
    r = cw.predict(text.replace(text[text.index("requests:") :].split("\n")[0], "requests: 2000"))
    print_serving(r)
    out = capsys.readouterr().out
    total = next(line for line in out.splitlines() if line.startswith("│ total "))
    cells = [c.strip() for c in total.split("│")[2:6]]
    assert cells == [
        fmt.latency(sum(r["breakdown"].values())),
        "100%",
        fmt.latency(sum(r["prefill_breakdown"].values())),
        "100%",
    ]
    caption = out.split("Track record", 1)[0].rsplit("└", 1)[1].splitlines()[1:]  # under the breakdown's last rule
    note = " ".join(line.strip() for line in caption if line.strip())
    assert note == iterations_text(r)
    assert f"priced at the run's mean batch, {r['steady_batch']:,.1f} sequences a replica" in note
    assert f"averaged {fmt.latency(r['iteration_mean_s'])} over the whole run" in note
    assert f"the mean TPOT ({fmt.latency(r['tpot_s']['mean'])}) weighs each iteration" in note


def test_the_note_leaves_out_what_the_run_did_not_measure() -> None:
    e = {"steady_batch": 1.0, "iteration_mean_s": math.nan, "tpot_mean_s": math.nan}
    assert iterations_text(e) == "the steady iteration is priced at the run's mean batch, 1.0 sequences a replica"
    e = {"steady_batch": 157.26, "iteration_mean_s": 0.02932, "tpot_mean_s": 0.03305}
    assert iterations_text(e) == (
        "the steady iteration is priced at the run's mean batch, 157.3 sequences a replica; its simulated iterations "
        "averaged 29.3 ms over the whole run (ramp and drain included: busy time / iterations); the mean TPOT "
        "(33.1 ms) weighs each iteration by the sequences it carried, so the fuller ones count more"
    )

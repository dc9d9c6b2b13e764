"""The load a serving row is simulated under: its scenario as an open or closed loop, the occupancy its measured run
held (Little's law), and how many requests are simulated and over which window the run is measured."""

from __future__ import annotations

import re
from dataclasses import dataclass

from chipwise.validation.cells import parse_positive
from chipwise.validation.harness import Harness
from chipwise.validation.rows import InferenceRow
from chipwise.validation.serving_case_lengths import served_output
from chipwise.validation.serving_row_load import released_at_once
from chipwise.workload.load import Load

#: Requests simulated per row, by load (enough for a steady window, few enough to validate quickly).
MAX_REQUESTS = 30000
MIN_REQUESTS = 240
#: An offline run's most: six batches of a large deployment (8 GPUs holding 18,000 sequences of MLPerf's Mixtral
#: take 110,000 requests); its first batch, which starts with every prompt at once, must turn over before the
#: steady window (serve.sim.metrics.window) and there must be batches after it.
MAX_OFFLINE_REQUESTS = 150000


def _burst(row: InferenceRow) -> bool:
    """A run that released its stated number of requests together and timed them (a load generator's burst)."""
    return (
        row.scenario == "offline"
        and row.num_requests is not None
        and any(m.metric in ("ttft_s", "tpot_s") for m in row.measured)
        and released_at_once(f"{row.raw.get('scenario', '')} {row.raw.get('batch_or_concurrency', '')}")
    )


def _load(row: InferenceRow, max_batch: int, notes: list[str]) -> Load:
    latencies = any(m.metric in ("ttft_s", "tpot_s") for m in row.measured)
    if _burst(row):
        notes.append(f"a burst: its {row.num_requests} requests released together, timed from fill to drain")
        return Load("offline")
    if row.scenario == "offline" and latencies:
        notes.append("max-throughput run with latencies: a closed loop that keeps every batch slot busy")
        return Load("closed", concurrency=max_batch)
    if row.scenario in ("server", "interactive", "rate"):
        if row.request_rate:
            # the rate the run achieved when it fell short of the one aimed at: the load the latencies were taken at
            achieved = parse_positive(row.raw.get("requests_per_s"))
            if achieved is not None and achieved < row.request_rate:
                notes.append(
                    f"achieved {achieved:g} of the {row.request_rate:g} req/s aimed at; the achieved rate is used"
                )
                return Load("rate", rate=achieved)
            return Load("rate", rate=float(row.request_rate))
        notes.append("request rate not stated; run as a closed loop of max_batch users")
        return Load("closed", concurrency=max_batch)
    if row.scenario == "single":
        return Load("closed", concurrency=1)
    if row.scenario == "closed_loop":
        users = row.concurrency or max_batch
        if row.concurrency is None:
            notes.append(f"concurrency not stated; {users} users (the batch limit)")
        elif users > max_batch:
            # sweeps that saturate a server with more users than it has batch slots (guidellm's throughput
            # mode) report TTFTs of the served requests, not of a queue of the surplus users
            notes.append(f"{users} users for {max_batch} batch slots: the load generator holds the surplus")
            users = max_batch
        return Load("closed", concurrency=users)
    return Load("offline")


def _client_users(row: InferenceRow, gen: Harness | None, replicas: int, max_batch: int) -> int:
    """The requests a closed-loop row's load generator kept in flight, where it holds back some of its stated users
    (guidellm: users - 1) and one replica seats them all; 0 otherwise. Where more users than seats were stated, the
    server's queue and the client's request timeout shaped the run (guidellm's scripts set 60 s), and several
    replicas behind optimum-neuron's proxy share one host (its README: 'DP replicas share host CPU and memory
    bandwidth'), which the simulator does not model: those rows are run at the occupancy they held instead."""
    if gen is None or not gen.held_back or row.scenario != "closed_loop" or not row.concurrency or replicas != 1:
        return 0
    users = row.concurrency - gen.held_back
    return users if 1 <= users <= max_batch else 0


#: Latency statistics that estimate a mean well enough for Little's law.
_CENTRAL = ("mean", "p50", "value")


#: A printed request rate whose rounding (half a unit in its last digit) exceeds this share of it is too coarse for
#: Little's law: guidellm's tables print two decimals, so '0.04' req/s is anything from 0.035 to 0.045 (+-12.5%).
COARSE_RATE = 0.05


def _rounding_share(text: str) -> float:
    """Half a unit in the last printed digit of a number, as a share of it (0 where no positive number)."""
    found = re.search(r"\d[\d,]*(?:\.(\d+))?", text)
    value = float(found.group(0).replace(",", "")) if found else 0.0
    if found is None or value <= 0:
        return 0.0
    return 0.5 * 10.0 ** -len(found.group(1) or "") / value


def achieved_rate(row: InferenceRow) -> tuple[float | None, str]:
    """The request rate a run achieved, and a note where it is not the printed one: a rate printed too coarsely
    (COARSE_RATE) is its output tokens/s over the tokens a request generated (8.07 / 230 = 0.0351 where '0.04'
    is printed), the printed one otherwise."""
    text = row.raw.get("requests_per_s", "")
    rate = parse_positive(text)
    total = parse_positive(row.raw.get("output_tokens_per_s_total"))
    if rate is None or total is None or row.output_len is None or _rounding_share(text) <= COARSE_RATE:
        return rate, ""
    out = served_output(row, row.output_len)
    derived = total / out
    return derived, (
        f"requests/s printed as {text.strip()}: taken as output tokens/s over the tokens a request generated, "
        f"{total:g} / {out:.0f} = {derived:.3g}"
    )


def occupancy(row: InferenceRow) -> float | None:
    """Requests in flight during a measured run, by Little's law: N = X (TTFT + (O - 1) TPOT), with X the achieved
    request rate, O the tokens a request generated (as the row is simulated) and TTFT, TPOT the run's central
    latencies (None when the row does not give all three)."""
    rate = achieved_rate(row)[0]
    got = {m.metric: m for m in row.measured if m.stat in _CENTRAL}
    if rate is None or row.output_len is None or "ttft_s" not in got or "tpot_s" not in got:
        return None
    out = served_output(row, row.output_len)
    return rate * (got["ttft_s"].value + max(0.0, out - 1.0) * got["tpot_s"].value)


def _equal_occupancy(row: InferenceRow, load: Load, held: int, notes: list[str]) -> tuple[Load, Load | None, float]:
    """The load to simulate and, for open loops, the load at which latencies are compared.

    An open-loop run that sustained its rate was stable, but how far below capacity it ran is unknown: near
    saturation the queueing delay grows as rho / (1 - rho), so a few % of capacity error moves the predicted
    latencies without bound. What the run does pin down is how many requests it held in flight (Little's law).
    Latencies are compared at that occupancy (a closed loop of N users), which tests the iteration model rather
    than the last few % of capacity; throughput is still predicted at the measured rate. A closed-loop sweep that
    held fewer requests in flight than the users it states (a load generator that could not keep them all busy)
    is run at the occupancy it held. Open loops compared this way ramp their users up over one measured request
    lifetime (N / X) and take their latencies in the steady state after it (the third value: the ramp, in s).

    `held` is how many requests of the assumed lengths the deployment's KV caches hold. An open loop cannot have
    held more in flight than its memory allows, so a larger N means the assumed lengths are too long (MLPerf rows
    state none), and N is capped there rather than turned into a queue the run did not have. A closed loop's N is
    not capped: its clients time each request from when they send it, so requests waiting in the server's queue
    for KV room are in flight too (GenAI-Perf's 250 users against a cache that holds 54 wait in the queue, and
    their TTFTs say so)."""
    n = occupancy(row)
    rate, derived = achieved_rate(row)
    if n is None or rate is None or row.scenario == "single":
        return load, None, 0.0
    if derived:
        notes.append(derived)
    users = max(1, round(n))
    if users > held and load.kind == "rate":
        notes.append(f"{n:.0f} requests in flight exceed the {held} the KV caches hold at the assumed lengths")
        users = held
    ramp = n / rate
    if load.kind == "rate":
        notes.append(f"latencies compared at the measured occupancy: {n:.1f} requests in flight (Little's law)")
        return load, Load("closed", concurrency=users), ramp
    if load.kind == "closed" and row.scenario == "closed_loop":
        held = min(users, load.concurrency if row.concurrency is None else row.concurrency)
        if held < load.concurrency or (row.concurrency and held < row.concurrency):
            notes.append(f"the run held {n:.1f} requests in flight (Little's law); run at that")
        return Load("closed", concurrency=held), None, 0.0
    return load, None, 0.0


def requests_to_simulate(load: Load, concurrency: int, stated: int | None, out_len: float) -> tuple[int, str]:
    """Requests to simulate and the throughput basis: the run's own request count when it is within a few batches
    (the benchmark's fill and drain then matter, as in its own timing), else several batches' worth, measured
    over the steady window; a few minutes of arrivals for open loops. A closed loop runs its stated count whenever
    it can be simulated whole: its clients time every request, the burst of first prompts included, so a shorter
    run would weigh that burst more than the benchmark did. So does an offline run: requests of one length that
    start together stay nearly in step for many batches, so that no shorter window reads what the whole run did."""
    if load.kind == "closed" and stated is not None and stated <= MAX_REQUESTS:
        return stated, "run"
    if load.kind == "offline" and stated is not None and stated <= MAX_OFFLINE_REQUESTS:
        return stated, "run"
    if load.kind == "closed":
        users = load.concurrency
        n = 4 * users if users > 1 else 12
    elif load.kind == "rate":
        n = int(load.rate * (240.0 + 0.2 * out_len))  # four minutes plus a few request lifetimes
    else:
        n = 6 * concurrency
    most = MAX_OFFLINE_REQUESTS if load.kind == "offline" else MAX_REQUESTS
    n = min(max(n, MIN_REQUESTS if load.kind != "closed" or load.concurrency > 1 else 12), most)
    if stated is not None and stated <= n:
        return stated, "run"
    return n, "steady"


def simulated_load(
    row: InferenceRow, gen: Harness | None, replicas: int, seats: int, fits: int, notes: list[str]
) -> tuple[Load, Load | None, float]:
    """The load to simulate, the load at which latencies are compared (None: the same) and the ramp in s: the
    requests a closed-loop client keeps in flight where it holds some of its users back (_client_users), else the
    row's scenario (_load) compared at its measured occupancy (_equal_occupancy). `seats`: the batch slots a replica
    gives the users; `fits`: the requests of the assumed lengths a replica's KV cache admits."""
    clients = _client_users(row, gen, replicas, seats)
    if clients and gen is not None:
        notes.append(f"{row.concurrency} users: the client keeps {clients} requests in flight ({gen.name})")
        return Load("closed", concurrency=clients), None, 0.0
    given = _load(row, seats * replicas, notes)
    return _equal_occupancy(row, given, fits * replicas, notes)


@dataclass(frozen=True)
class RequestSchedule:
    """How many requests a case simulates and how its run is measured (the fields of validation.serving_case.Case
    of the same names)."""

    requests: int
    basis: str
    duration_s: float | None = None
    after_warmup: bool = False
    windows: Harness | None = None


def request_schedule(
    row: InferenceRow,
    gen: Harness | None,
    load: Load,
    latency_load: Load | None,
    concurrency: int,
    out_len: float,
    notes: list[str],
) -> RequestSchedule:
    """The requests a row's run is simulated with (requests_to_simulate, `concurrency` the requests its deployment
    holds at once): every request of a burst, however many batches it takes; and a closed loop issued as its load
    generator issues it, for time windows, for a duration, or a request count taken after a warm-up."""
    n, basis = requests_to_simulate(load, concurrency, row.num_requests, out_len)
    if _burst(row) and row.num_requests is not None:  # every request of the burst, however many batches it takes
        n, basis = min(row.num_requests, MAX_REQUESTS), "run"
    duration = None
    after_warmup = False
    windows = None
    if gen is not None and load.kind == "closed" and latency_load is None:
        users = load.concurrency
        issued = gen.requests(users, row.num_requests)
        if gen.window_s is not None and row.num_requests is None:
            windows, n, basis, issued = gen, MAX_REQUESTS, "run", 0
            duration = gen.window_s * gen.max_windows
        elif gen.duration_s is not None and users > 1 and row.num_requests is None:
            duration, n, basis, issued = gen.duration_s, MAX_REQUESTS, gen.basis, 0
        elif issued:
            n, basis = min(MAX_REQUESTS, issued), gen.basis
            after_warmup = gen.after_warmup and users > 1
        if gen.duration_s is None or users > 1:
            notes.append(gen.note(users, issued))
    return RequestSchedule(n, basis, duration, after_warmup, windows)

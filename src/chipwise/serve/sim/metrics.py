"""What a simulation measured: throughput, latency percentiles, goodput under an SLO, KV-cache utilisation.

Per request: TTFT = first token - arrival, of which the wait to start is the time from the front end's hand-over
(arrival + the front end's time, SimOutput.front_latency_s) to its prompt's first iteration; TPOT (time per output
token, the mean inter-token latency of the request, as MLPerf and vLLM's benchmark define it) = (finish - first
token) / (output tokens - 1); end-to-end latency = finish - arrival. In a split TTFT has two waits: to start (for
the prefill pool) and for the decode pool, from the prompt's prefill to its first token less the KV transfer
(`decode_wait`; the transfer, `transfer`, apart).

Throughput is measured over a steady window, so that the fill and the final drain of a finite run do not bias it:
open loop, from one median end-to-end latency after the first arrival (the batch has filled) to the last arrival
(or on to the run's end where no request finished by then); closed loop, from the start (or the end of its users'
ramp, whenever the last admission comes after it) to the last admission of a request into a batch (after it the
batch only drains; on to the run's end where no request finished by then), or the whole run when that admission
came in its first half (every request fitted in the first batches). An offline run is measured whole, as offline
benchmarks (trtllm-bench, MLPerf Offline) time a fixed set of requests: requests of one length that start together
run in waves, and a window cut inside the run (from the first batch's turn-over to the last admission, until stop
23) read MI325X's Llama 2 70B 20% low at four waves and ranked it under MI300X; the whole run reads it within 1% of
its steady rate from two waves on. The output tokens counted are those the replicas generated within the window (a
decode run's tokens spread evenly over its iterations), the input tokens those of the requests that finished in it.
With basis 'run' the window is the whole run, as a benchmark that times a fixed set of requests reports it.

Goodput (the requests within every SLO target) is counted over the requests the throughput window counts, its
fraction and its rates alike (over every request where the window counts none: a run shorter than its fill).
KV-cache occupancy is recorded at every event with where it has grown to by the next (serve.sim.replica): its mean
is time-weighted, its peak the largest occupancy any decode step reached.

A trace's arrivals are the load itself, not a steady process to sample (`trace`): its goodput counts every request,
and its throughput is its steady window's or, where more, the whole run's (trace_window), so that a burst after the
last steady stretch, or a load that never settles, is counted.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chipwise.serve.sim.run import SimOutput
from chipwise.types import Array as FloatArray

PERCENTILES: tuple[int, ...] = (50, 90, 99)
UTIL_POINTS = 200


def stats(values: FloatArray) -> dict[str, float]:
    """mean, p50, p90, p99 of finite values (NaN when there are none)."""
    v = values[np.isfinite(values)]
    if v.size == 0:
        return {"mean": math.nan, **{f"p{p}": math.nan for p in PERCENTILES}}
    q = np.percentile(v, PERCENTILES)
    return {"mean": float(v.mean()), **{f"p{p}": float(x) for p, x in zip(PERCENTILES, q, strict=True)}}


#: One-sided normal quantile of the percentiles' upper confidence bounds (95%).
BOUND_Z = 1.645
#: The fewest independent requests past a percentile (the requests past it over the correlation factor,
#: tail_correlation) whose order statistics bound it. A chosen threshold, not fitted: the common rule of thumb for
#: the normal approximation of a binomial count (n p >= 10); fewer are a handful of busy periods, whose own count
#: varies more than a bound drawn from them. Below it the largest value seen bounds the percentile.
MIN_TAIL_EVENTS = 10.0


def percentile_bounds(timing: dict[str, FloatArray], arrival: FloatArray | None = None) -> dict[str, float]:
    """An upper 95% confidence bound of each latency's p90 and p99 ('ttft_p99': seconds), from the order
    statistics: the sorted sample's value at rank n q + z sqrt(n q (1 - q) f) (the normal approximation of the
    binomial count below the true quantile, its variance times f, the tail's correlation factor in the requests'
    `arrival` order, tail_correlation; 1 without `arrival`), at or above the true q-quantile with 95% confidence;
    where the requests past the percentile hold fewer than MIN_TAIL_EVENTS independent ones (n (1 - q) / f), the
    largest value. 1,200 independent requests bound their p99 by their 6th largest (the 0-based rank
    ceil(1188 + 1.645 sqrt(11.88)) = 1194); a p99 of long prompts' TTFT 11% under its target had a bound past it,
    and other seeds of the run missed it. Queueing waits come in busy periods: Llama-3.1-8B's 120,000-token prompts
    at 0.2 req/s on four TP4 H100 replicas held their 12 TTFTs past the p99 in 8 runs of neighbours (f = 1.95), and
    as independent draws the bound had read 4.63 s against a 5 s target where 40,000 requests (two seeds) read a p99 of
    5.17-5.24 s; 6.2 independent requests past the p99 now bound it by the largest, 6.48 s."""
    order = np.argsort(arrival, kind="stable") if arrival is not None else None
    out = {}
    for metric in ("ttft", "tpot", "e2e"):
        seq = timing[metric] if order is None else timing[metric][order]
        seq = seq[np.isfinite(seq)]
        v = np.sort(seq)
        n = v.size
        for q in (0.9, 0.99):
            key = f"{metric}_p{round(100 * q)}"
            if not n:
                out[key] = math.nan
                continue
            f = tail_correlation(seq > np.percentile(seq, 100 * q)) if order is not None else 1.0
            k = math.ceil(n * q + BOUND_Z * math.sqrt(n * q * (1.0 - q) * f))
            out[key] = float(v[-1] if n * (1.0 - q) / f < MIN_TAIL_EVENTS else v[min(k, n - 1)])
    return out


def tail_correlation(past: NDArray[np.bool_]) -> float:
    """How many times a binomial count's variance the count of requests past a percentile has, its requests taken in
    arrival order (`past`: each request past it or not): 1 + 2 sum_k rho_k, the indicator's autocorrelations summed
    by Geyer's initial positive sequence (Geyer 1992, Statistical Science 7(4); the effective sample size of a
    quantile's indicator, Vehtari et al. 2021, Bayesian Analysis 16(2)), at least 1. Requests past it in runs of
    three read about 3 (a run's size squared over its size), ones apart 1."""
    x = past.astype(np.float64)
    n = x.size
    x = x - x.mean()
    var = float(x @ x) / n if n else 0.0
    if var <= 0.0:
        return 1.0
    spectrum = np.fft.rfft(x, 2 * n)
    rho = np.fft.irfft(spectrum * np.conj(spectrum), 2 * n)[:n] / (n * var)
    pairs = rho[: n - n % 2].reshape(-1, 2).sum(axis=1)  # Gamma_m = rho_2m + rho_2m+1
    stop = int(np.argmax(pairs <= 0.0)) if (pairs <= 0.0).any() else pairs.size
    return max(1.0, float(-1.0 + 2.0 * pairs[:stop].sum()))


def per_request(out: SimOutput) -> dict[str, FloatArray]:
    r = out.requests
    served = np.isfinite(r["finish"]) & (r["dropped"] == 0)
    ttft = np.where(served, r["first"] - r["arrival"], np.nan)
    tpot = np.where(served & (r["output"] > 1), (r["finish"] - r["first"]) / np.maximum(r["output"] - 1, 1), np.nan)
    e2e = np.where(served, r["finish"] - r["arrival"], np.nan)
    # TTFT's part before its prompt's first iteration, past the front end (reported apart, `ttft_front_end_s`): it
    # had counted vLLM's 30 ms a request there, and at 0.01 req/s, nothing queued, the wait's p50 read 30.0 ms
    # (the hand-over's time as the simulation computed it, so that a prompt started at once waits exactly 0)
    wait = np.where(served, np.maximum(r["started"] - (r["arrival"] + out.front_latency_s), 0.0), np.nan)
    lat = {"ttft": ttft, "tpot": tpot, "e2e": e2e, "wait": wait, "served": served.astype(np.float64)}
    if "prefilled" in r:
        # a split's wait for a decode slot after the prefill, which the wait to start leaves out: at 95.7% of
        # capacity it was nearly all of a 2.46 s TTFT p50 that read a wait of 0 (front end 30 ms, prefill 15.9 ms,
        # transfer 0.36 ms)
        split = served & np.isfinite(r["prefilled"])
        lat["decode_wait"] = np.where(
            split, np.maximum(r["first"] - r["prefilled"] - np.nan_to_num(r["transfer"]), 0.0), np.nan
        )
        lat["transfer"] = np.where(split, r["transfer"], np.nan)
    return lat


def window(out: SimOutput, basis: str = "steady", ramp_s: float = 0.0) -> tuple[float, float]:
    """The window (s) over which throughput is measured ('steady' or the whole 'run'); a steady closed loop whose
    users ramp up over `ramp_s` is measured from the end of the ramp when its last admission comes after it (until
    2026-12 only when the ramp was under half the window: 130 requests of 64 users of Llama-3.1-8B on one H100 were
    measured over a window whose first half was the ramp, and read 4,036 output tok/s where the steady state
    delivers 5,159; measured after the ramp they read 5,244). A window that includes the ramp is not steady
    (`ramp_included`)."""
    r = out.requests
    arrivals = r["arrival"][np.isfinite(r["arrival"])]
    lo = float(arrivals.min()) if arrivals.size else 0.0
    if basis == "run":
        return lo, max(out.end, lo + 1e-12)
    if not out.closed_loop and arrivals.size > 1 and arrivals.max() > arrivals.min():
        hi = float(arrivals.max())
        start = lo + min(_fill_s(out), 0.5 * (hi - lo))
        if tokens_in_window(out, start, hi)[1] < 1.0:
            # not one request's tokens made by the last arrival (two requests 0.5 s apart, each done in 46 ms, had
            # read 0 output tok/s and 0 req/s, unexplained; two 1 s apart, the first done as the window started,
            # 0 tok/s and $1.42e+17 per M tokens until 2026-12, when a finish at its start counted as one within
            # it): the window runs on to the run's end, and so measures the 2 req/s offered (the whole run, its fill
            # too, read 3.66)
            hi = max(out.end, start + 1e-12)
        return start, hi
    hi = out.last_admit
    if not out.closed_loop or not math.isfinite(hi) or hi - lo < 0.5 * (out.end - lo):
        return lo, max(out.end, lo + 1e-12)  # offline: the whole run, as an offline benchmark times it
    if ramp_s > 0.0 and hi > ramp_s:
        lo = ramp_s
    if not _finished_within(out, lo, hi):
        # as an open loop's: no request finished by the last admission (32 users of 32 requests, each of 2 output
        # tokens, all admitted at 30 ms and done at 41 ms, had read 0 output tok/s, 0 req/s and no cost per token),
        # so the window runs on to the run's end and measures the 64 tokens in 41 ms, 1,552 output tok/s
        return lo, max(out.end, lo + 1e-12)
    return lo, max(hi, lo + 1e-12)


def _finished_within(out: SimOutput, lo: float, hi: float) -> bool:
    """Whether any request that was served (not dropped) finished within [lo, hi]."""
    r = out.requests
    finish = r["finish"][np.isfinite(r["finish"]) & (r["dropped"] == 0)]
    return bool(np.any((finish >= lo) & (finish <= hi)))


def ramp_included(out: SimOutput, lo: float, ramp_s: float) -> bool:
    """Whether a closed loop's throughput window (from `lo`) includes its users' ramp-up (`ramp_s`): a run whose
    last admission came before the ramp's end, or in the first half of the run."""
    return out.closed_loop and ramp_s > 0.0 and lo < ramp_s


def _fill_s(out: SimOutput) -> float:
    """An open loop's fill: one median end-to-end latency."""
    r = out.requests
    e2e = (r["finish"] - r["arrival"])[np.isfinite(r["finish"])]
    return float(np.median(e2e)) if e2e.size else 0.0


def steady_state(out: SimOutput) -> bool:
    """Whether an open loop's arrivals outlast its fill twice over, so that its throughput window starts after
    the fill (closed loops and offline runs of more than one request have windows of their own: `window`)."""
    r = out.requests
    arrivals = r["arrival"][np.isfinite(r["arrival"])]
    if out.closed_loop or arrivals.size < 2 or arrivals.max() <= arrivals.min():
        return arrivals.size > 1 or out.closed_loop
    return _fill_s(out) <= 0.5 * float(arrivals.max() - arrivals.min())


def tokens_in_window(out: SimOutput, lo: float, hi: float) -> tuple[float, float, float]:
    """(output tokens generated within [lo, hi], the requests they complete, those requests' input tokens). The
    requests are counted in whole cycles, as the window's output tokens over the mean output of a request served,
    and their prompts at the mean prompt, as a benchmark's total token throughput counts its completed requests'.
    Counting the finishes within the window (until 2026-12) counted one more than the cycles it spans when it
    started just before a finish: 50 requests of one user read 0.12289 req/s and 249 total tok/s where each takes
    8.31 s (0.12040, 246.6), and 300 of 64 users 4.089 req/s where their output made 4.264. Counted by their first
    token (until 2026-12), a split's window, which ends when its decode replica takes the last request and streams
    that request's first token, held one prompt more than it finished requests, and 20 requests of one user read
    4,323.6 input tokens each where they had 4,096 (+5.2% total tok/s)."""
    made = 0.0
    for rep in out.replicas:
        t, v = rep["util_t"], rep["emit_v"]
        if t.size:
            made += float(np.interp(hi, t, v) - np.interp(lo, t, v))
    r = out.requests
    served = np.isfinite(r["finish"]) & (r["dropped"] == 0)
    if not served.any():
        return made, 0.0, 0.0
    requests = made / max(float(r["output"][served].mean()), 1e-12)
    return made, requests, requests * float(r["input"][served].mean())


def iterations_in_window(out: SimOutput, lo: float, hi: float) -> dict[str, dict[str, float]]:
    """Per pool role ('both', 'prefill', 'decode'), per replica: the iterations completed within [lo, hi] that
    carried prompt chunks, the prompt tokens they ran (a static engine's padded buckets), and the decode-only ones."""
    sums: dict[str, list[float]] = {}
    count: dict[str, int] = {}
    for rep in out.replicas:
        log = rep["iterations"]  # rows of (time, prompt iterations, prompt tokens, decode iterations) completed
        role = str(rep["role"])
        count[role] = count.get(role, 0) + 1
        if log.size:
            t = log[:, 0]
            done = [
                float(np.interp(hi, t, log[:, j], left=0.0) - np.interp(lo, t, log[:, j], left=0.0)) for j in (1, 2, 3)
            ]
            sums[role] = [a + b for a, b in zip(sums.get(role, [0.0] * 3), done, strict=True)]
    return {
        role: {k: x / count[role] for k, x in zip(("prompt", "prompt_tokens", "decode"), s, strict=True)}
        for role, s in sums.items()
    }


def iteration_means(out: SimOutput) -> dict[str, float]:
    """Per pool role, the mean seconds of the iterations its replicas ran over the whole run: their busy time over
    the iterations they completed, a figure for the steady iteration a breakdown prices at the mean batch to be read
    beside (planner.serving_breakdown.where_time_goes)."""
    busy: dict[str, float] = {}
    ran: dict[str, float] = {}
    for rep in out.replicas:
        log, role = rep["iterations"], str(rep["role"])
        busy[role] = busy.get(role, 0.0) + float(rep["busy_s"])
        ran[role] = ran.get(role, 0.0) + (float(log[-1, 1] + log[-1, 3]) if log.size else 0.0)
    return {role: busy[role] / ran[role] for role in busy if ran[role] > 0}


#: The order pools are reported in: a split's decode pool first, where the KV cache limits the deployment (its
#: prefill replicas hold a prompt's cache only until it is handed over).
POOL_ORDER: tuple[str, ...] = ("both", "decode", "prefill")


def _occupancy(rep: Mapping[str, Any]) -> tuple[FloatArray, FloatArray, FloatArray]:
    """A replica's KV occupancy records: their times, the occupancy at each and where it has grown to by the next
    (a decode run's last step; records without `util_e` are flat)."""
    v = rep["util_v"]
    return rep["util_t"], v, rep.get("util_e", v)


def _replica_kv(rep: Mapping[str, Any], end: float) -> tuple[float, float]:
    """(time-weighted mean, peak) KV-cache occupancy of one replica up to `end`: between two records it goes
    linearly from one's occupancy to where that one has grown to (a decode run's cache grows by a token per sequence
    each step), so the mean takes each interval's midpoint and the peak the largest end. A run's midpoint alone
    (until 2026-12) read one user's 20,000-token answer at 41.6% of the cache where its last step held 79.3%."""
    t, v, e = _occupancy(rep)
    dt = np.diff(np.append(t, end))
    total = dt.sum()
    mid = 0.5 * (v + e)
    return (float((mid * dt).sum() / total) if total > 0 else float(mid.mean())), float(max(v.max(), e.max()))


def _kv_points(rep: Mapping[str, Any], end: float) -> tuple[FloatArray, FloatArray]:
    """The occupancy of one replica as at most UTIL_POINTS (time, occupancy) points to draw as a line: each record's
    start, and its end where it grows (a decode run). A longer run keeps, of each of UTIL_POINTS / 2 stretches of
    records, the lowest start and the highest end, so that the curve reaches the peak."""
    t, v, e = _occupancy(rep)
    m = t.size
    t_next = np.append(t[1:], end)
    grows = e != v
    if m + int(grows.sum()) <= UTIL_POINTS:
        counts = 1 + grows.astype(np.int64)
        at = np.cumsum(counts) - counts
        ts, vs = np.empty(int(counts.sum())), np.empty(int(counts.sum()))
        ts[at], vs[at] = t, v
        ts[at[grows] + 1], vs[at[grows] + 1] = t_next[grows], e[grows]
        return ts, vs
    edges = np.linspace(0, m, UTIL_POINTS // 2 + 1).astype(np.int64)
    ts_l: list[float] = []
    vs_l: list[float] = []
    for a, b in itertools.pairwise(edges):
        if b <= a:
            continue
        low = int(a + np.argmin(v[a:b]))
        high = int(a + np.argmax(e[a:b]))
        pair = sorted(((float(t[low]), float(v[low])), (float(t_next[high]), float(e[high]))))
        for x, y in pair:
            ts_l.append(x)
            vs_l.append(y)
    return np.asarray(ts_l), np.asarray(vs_l)


def kv_utilisation(out: SimOutput) -> dict[str, Any]:
    """KV-cache occupancy per pool ('pools', by role: 'both', or a split's 'decode' then 'prefill'): its replicas'
    mean time-weighted occupancy and their peak; and `series`, a down-sampled series of the first replica of the
    pool whose cache limits the deployment (a split's decode pool), with that replica's own mean and peak. A
    deployment of one pool also has that pool's 'mean' and 'peak' at the top, the whole deployment's; a split has
    none: averaged over both pools, seven B200 prefill replicas of Llama-3.1-70B at 20 req/s, each holding a prompt's
    cache until it is handed over, read 2.7% where their decode replica used 18%."""
    members: dict[str, list[Mapping[str, Any]]] = {}
    for rep in out.replicas:
        members.setdefault(str(rep["role"]), []).append(rep)
    roles = sorted(members, key=lambda r: POOL_ORDER.index(r) if r in POOL_ORDER else len(POOL_ORDER))
    pools: dict[str, dict[str, float]] = {}
    series: dict[str, Any] = {}
    for role in roles:
        measured = [(k, rep) for k, rep in enumerate(members[role]) if rep["util_t"].size]
        if not measured:
            continue
        figures = [_replica_kv(rep, out.end) for _, rep in measured]
        pools[role] = {
            "mean": float(np.mean([m for m, _ in figures])),
            "peak": max(p for _, p in figures),
            "replicas": len(members[role]),
        }
        if not series:  # the first replica of the first pool in POOL_ORDER: a split's decode pool
            k, drawn = measured[0]
            t, v = _kv_points(drawn, out.end)
            mean, peak = figures[0]
            series = {"role": role, "replica": k, "mean": mean, "peak": peak,
                      "t_s": t.tolist(), "utilisation": v.tolist()}  # fmt: skip
    result: dict[str, Any] = {"pools": pools, "series": series}
    if len(members) <= 1:  # one pool: its figures are the whole deployment's
        only = next(iter(pools.values()), {"mean": 0.0, "peak": 0.0})
        result = {"mean": only["mean"], "peak": only["peak"], **result}
    return result


def meets(targets: Mapping[str, float], lat: Mapping[str, FloatArray]) -> FloatArray:
    """Per request: 1 when its TTFT, TPOT and end-to-end latency are within every target, else 0."""
    ok = lat["served"] > 0
    for key, limit in targets.items():
        metric = key.split("_")[0]
        values = lat.get(metric)
        if values is None:
            continue
        ok = ok & (np.nan_to_num(values, nan=0.0) <= limit)
    return np.asarray(ok, dtype=np.float64)


def in_window(lat: Mapping[str, FloatArray], arrival: FloatArray, lo: float, hi: float) -> dict[str, FloatArray]:
    """The per-request latencies of the requests that arrived within [lo, hi] (all of them when fewer than 8 did)."""
    keep = (arrival >= lo) & (arrival <= hi)
    if int(keep.sum()) < 8:
        return dict(lat)
    return {k: np.where(keep, v, np.nan) if k != "served" else v for k, v in lat.items()}


def summarise(
    out: SimOutput,
    chips: float,
    targets: Mapping[str, float] | None = None,
    basis: str = "steady",
    latency_window: tuple[float, float] | None = None,
    ramp_s: float = 0.0,
    trace: bool = False,
    bounds: bool = False,
) -> dict[str, Any]:
    """The serving figures of a run (SI units). With `latency_window` the latency statistics are taken over the
    requests that arrived within it (a steady state, without a load generator's ramp-up and final drain); `trace`:
    its arrivals are a trace's own times (trace_window, _goodput_basis); `bounds`: with the upper confidence bounds
    of its percentiles (percentile_bounds, which planner.serving_check reads to confirm a narrow pass; their
    autocorrelations had been a twentieth of a validation's time and of a fleet's replays, unread)."""
    lat = per_request(out)
    timing = in_window(lat, out.requests["arrival"], *latency_window) if latency_window else lat
    lo, hi = window(out, basis, ramp_s)
    if trace:
        lo, hi = trace_window(out, lo, hi)
    width = hi - lo
    out_tok, completed, in_tok = tokens_in_window(out, lo, hi)
    r = out.requests
    served = lat["served"] > 0
    issued = np.isfinite(r["arrival"])
    finished = int(served.sum())
    dropped = int((r["dropped"] > 0).sum())
    arrivals = r["arrival"][issued]
    first = float(arrivals.min()) if arrivals.size else 0.0
    span = float(arrivals.max()) - first if arrivals.size > 1 else 0.0
    good = meets(targets or {}, lat)
    output_tps = out_tok / width
    # requests and goodput over the throughput's window (the whole run's makespan counted the final drain: 6.6 req/s
    # at 8.2 arriving, 63% load); the goodput fraction too, so that goodput's rate is the fraction of the requests'
    # (over every request it counted the fill's: 10.2% x 24.6 req/s where 2.23 req/s met the SLO in the window);
    # requests dropped (never fitting the cache) count against it where they arrived in the window
    done_in, dropped_in = _goodput_basis(served, r, lo, hi, trace)
    good_in = (good > 0) & done_in
    outputs = np.nan_to_num(r["output"])
    good_share = float((good_in * outputs).sum() / max(float((done_in * outputs).sum()), 1e-12))
    result: dict[str, Any] = {
        "output_tokens_per_s": output_tps,
        "input_tokens_per_s": in_tok / width,
        "throughput_tokens_per_s": (out_tok + in_tok) / width,
        "output_tokens_per_s_per_chip": output_tps / chips,
        "throughput_tokens_per_s_per_chip": (out_tok + in_tok) / width / chips,
        "requests_per_s": completed / width,
        "ttft_s": stats(timing["ttft"]),
        "ttft_wait_s": stats(timing["wait"]),
        "ttft_front_end_s": out.front_latency_s,
        **_split_waits(out, timing),
        "tpot_s": stats(timing["tpot"]),
        "e2e_s": stats(timing["e2e"]),
        **({"percentile_bounds": percentile_bounds(timing, r["arrival"])} if bounds else {}),
        "goodput": {
            "targets": dict(targets or {}),
            "fraction": float(good_in.sum() / max(int(done_in.sum() + dropped_in.sum()), 1)),
            # the share of the window's finished requests that met every target, of its requests' rate
            "requests_per_s": completed / width * float(good_in.sum()) / max(int(done_in.sum()), 1),
            "output_tokens_per_s": output_tps * good_share,
        },
        "kv_cache_utilisation": kv_utilisation(out),
        "iterations": iterations_in_window(out, lo, hi),
        "iteration_mean_s": iteration_means(out),
        "requests": {
            "total": int(r["arrival"].size),
            "issued": int(issued.sum()),
            "finished": finished,
            "dropped": dropped,
            "preemptions": int(r["preempted"].sum()),
        },
        "little_law": little_law(out, lat["e2e"], lo),
        "window_s": [lo, hi],
        "arrival_span_s": span,
        "steady_state": steady_state(out) and not ramp_included(out, lo, ramp_s),
        "latency_requests": int(np.isfinite(timing["ttft"]).sum()),  # the requests the latency statistics cover
        "makespan_s": out.end,
        "simulation_wall_s": out.wall_s,
    }
    return result


def _split_waits(out: SimOutput, timing: Mapping[str, FloatArray]) -> dict[str, dict[str, float]]:
    """A split's TTFT wait for the decode pool after its prompt's prefill (`ttft_decode_wait_s`) and its KV transfer
    (`ttft_transfer_s`); nothing for a deployment of one pool."""
    if len(out.roles) != 2 or "decode_wait" not in timing:
        return {}
    return {"ttft_decode_wait_s": stats(timing["decode_wait"]), "ttft_transfer_s": stats(timing["transfer"])}


def trace_window(out: SimOutput, lo: float, hi: float) -> tuple[float, float]:
    """A trace's throughput window: its steady window [lo, hi] or, where it reads more output tokens/s, the whole
    run, which times every request the trace brought, from one mean gap before the first arrival (a trace of N
    arrivals offers N requests over its span and a mean gap: serve.sim.arrivals.offered_request_rate). The steady
    window ends at the last arrival: 1,000 requests of Llama-3.1-8B on one H100 a second apart and 1,000 more in
    the trace's last second had read 256 output tok/s (the first thousand's rate) where the run served 2,000 x 256
    tokens in 1,054.5 s (its 1,054 s and a mean gap of 0.5), 486 tok/s, and priced them $7.47 per M; it now reads
    486 and the load's $3.74 (kept up with). A steady trace reads its steady window, above the whole run's fill
    and drain; two requests 0.5 s apart, each done in 46 ms, read their 2 req/s offered (1.91 over the whole run and
    the gap; 3.66 over the run alone)."""
    arrivals = out.requests["arrival"][np.isfinite(out.requests["arrival"])]
    first, end = window(out, "run")
    gap = float(arrivals.max() - first) / (arrivals.size - 1) if arrivals.size > 1 else 0.0
    steady = tokens_in_window(out, lo, hi)[0] / max(hi - lo, 1e-12)
    whole = tokens_in_window(out, first - gap, end)[0] / max(end - first + gap, 1e-12)
    return (first - gap, end) if whole > steady else (lo, hi)


def _goodput_basis(
    served: NDArray[np.bool_], r: Mapping[str, FloatArray], lo: float, hi: float, trace: bool = False
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """The requests goodput is counted over, its fraction and its rates alike (finished, dropped): those the
    throughput window [lo, hi] counts (finished in it, or dropped having arrived in it), or every request where it
    counts none (a run shorter than its fill). Only the fraction had fallen back: 50 requests at 25 req/s on one
    H100, none finished in their window of 0.98-1.96 s, had read a fraction of 1.0 beside goodput rates of 0 req/s
    and 0 tok/s, where 10.41 req/s and 2,665 output tok/s were served, every request within its 1 s TTFT target;
    they read 10.41 and 2,665 now. A trace's goodput counts every request (`trace`): its requests are the load, and
    the 1,000 of a final burst, finished after the last arrival, had been left out, so that 100.0% met the SLO
    beside a TTFT p90 of 39.2 s where 999 of the 2,000 (49.95%) did."""
    dropped = r["dropped"] > 0
    if trace:
        return served, dropped
    done_in = served & (r["finish"] >= lo) & (r["finish"] <= hi)
    dropped_in = dropped & (r["arrival"] >= lo) & (r["arrival"] <= hi)
    if done_in.any() or dropped_in.any():
        return done_in, dropped_in
    return served, dropped


def little_law(out: SimOutput, e2e: FloatArray, start: float) -> dict[str, float]:
    """Little's law's three terms over one span, from `start` to the last arrival, all three of the requests served
    (`e2e` finite): the rate of their arrivals within it, their mean end-to-end latency, and the time-average number
    of them in the system over it. A closed loop's span starts where its throughput window does (after its users'
    ramp, the system holding them all), so that the requests in the system at the span's end, counted whole in
    lambda W and in part in the system, balance those in it at its start, counted the other way round; from the
    first arrival (until 2026-12) only the end counted, and 64 users read lambda W = 66.3 with 63.0 in the system.
    An open loop's span starts where its throughput window does too, after the fill: from the first arrival, the
    system empty there, Llama-3.1-70B at 20 req/s on H200 read lambda W = 832.4 against 811.9 in the system (2.5%);
    from the window's start 855.1 against 855.6. From the first arrival (a closed loop without a ramp, a run measured
    whole) the rate is that of the gaps that follow it, times the share of the arrivals served (`arrivals_per_s`:
    every arrival's). A dropped request (one its cache
    can never hold) has no latency and no recorded time of leaving, so it is left out of every term: counted in the
    rate and in the system to the span's end (until 2026-12), 196 drops of 2,000 arrivals over 200 s read 100.7 in
    the system against lambda W = 5.41, where the 1,804 served held 4.9."""
    r = out.requests
    issued = np.isfinite(r["arrival"])
    arrivals = r["arrival"][issued]
    if arrivals.size == 0:
        return dict.fromkeys(("arrivals_per_s", "arrival_rate_per_s", "mean_latency_s", "mean_in_system"), math.nan)
    first, last = float(arrivals.min()), float(arrivals.max())
    start = float(start) if first < start < last else first
    within = issued & (r["arrival"] >= start) & (r["arrival"] <= last)
    served = within & np.isfinite(e2e)
    arrived = int(within.sum())
    gaps = arrived - (1 if start == first else 0)
    count = gaps * int(served.sum()) / max(arrived, 1)
    latencies = e2e[served]
    return {
        # every arrival, dropped or not: the load the run was offered (planner.serving_outcome.delivered_share)
        "arrivals_per_s": gaps / (last - start) if last > start else math.nan,
        "arrival_rate_per_s": count / (last - start) if last > start else math.nan,
        "mean_latency_s": float(latencies.mean()) if latencies.size else math.nan,
        "mean_in_system": _mean_in_system(r, start, last),
    }


def _mean_in_system(r: Mapping[str, FloatArray], lo: float, hi: float) -> float:
    """Time-average number of served requests in the system over [lo, hi], the span of the arrivals that the
    arrival rate is counted over (over the first arrival to the last finish it counted the drain, and Little's law
    read 0.8)."""
    ok = np.isfinite(r["arrival"]) & (r["dropped"] == 0)
    if not ok.any() or hi <= lo:
        return math.nan
    f = np.where(np.isfinite(r["finish"][ok]), r["finish"][ok], hi)  # one still in the system at the span's end
    inside = np.clip(np.minimum(f, hi) - np.maximum(r["arrival"][ok], lo), 0.0, None)
    return float(inside.sum() / (hi - lo))

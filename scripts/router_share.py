"""How often a routed prompt lands on a replica still encoding another, by router (the source of
serve.queueing.ROUTED_FLOOR and ROUTED_REQUESTS).

A fleet of n replicas behind one of the simulator's routers (serve/sim/policies: least_loaded takes the replicas
tied at the fewest outstanding requests in turn, power_of_two draws two at random, round_robin goes in order). Each
replica encodes one prompt at a time (S = 1 s, FIFO) and then holds the request for D more seconds; arrivals are
Poisson. Printed per router: the share of arrivals that wait behind a prompt, over the lone replica's (busy =
lam S), at L = lam (S + D) requests held per replica, and on each row the estimate's share
(serve.queueing.prompt_waits over the same fleet, which adds Erlang C over the replicas where every one is encoding).
Run: .venv/bin/python scripts/router_share.py
"""

from __future__ import annotations

import heapq
import math
import random

import numpy as np

from chipwise.serve.queueing import prompt_waits
from chipwise.serve.sim.policies import ROUTERS, LoadBoard, make_router

REPLICAS = (4, 16, 64)
BUSY = (0.05, 0.2, 0.5)
HELD = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


def waiting_share(router: str, n: int, busy: float, held: float, requests: int = 40000, seed: int = 1) -> float:
    """Share of arrivals (after the first tenth) that find their replica encoding a prompt."""
    rng = random.Random(seed)
    pick = make_router(router, n).pick
    lam = busy  # per replica, S = 1 s
    hold = held / lam - 1.0  # D: what a request holds after its prompt
    outstanding = LoadBoard([0] * n)
    encoder_free = [0.0] * n
    done: list[tuple[float, int]] = []
    t, waited = 0.0, 0
    for i in range(requests):
        t += rng.expovariate(lam * n)
        while done and done[0][0] <= t:
            outstanding.add(heapq.heappop(done)[1], -1)
        r = pick(outstanding)
        start = max(t, encoder_free[r])
        waited += start > t and i >= requests // 10
        encoder_free[r] = start + 1.0
        outstanding.add(r, +1)
        heapq.heappush(done, (start + 1.0 + hold, r))
    return waited / (requests - requests // 10)


def main() -> None:
    print("share of a lone replica's waits (P(wait) / busy) by requests held per replica L: simulated | estimate")
    header = " ".join(f"{'L=' + format(h, 'g'):>6s}" for h in HELD)
    for router in ROUTERS:
        print(f"\n{router}\n{'replicas':>8s} {'busy':>5s} {header} | {header}")
        for n in REPLICAS:
            for busy in BUSY:
                sim = [waiting_share(router, n, busy, h) / busy if h >= busy else math.nan for h in HELD]
                est = [float(prompt_waits(router, np.asarray(float(n)), np.asarray(h), np.asarray(busy))) / busy
                       for h in HELD]  # fmt: skip
                print(f"{n:8d} {busy:5.2f} " + " ".join(f"{c:6.2f}" for c in sim) + " | "
                      + " ".join(f"{c:6.2f}" for c in est))  # fmt: skip


if __name__ == "__main__":
    main()

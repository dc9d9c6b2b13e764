"""How much of a lone replica's prompt queue a least-loaded router leaves (the source of
serve.search.ROUTED_REQUESTS).

A fleet of n replicas behind a router that sends each request to the replica with the fewest outstanding
requests (ties to the lowest index, as serve/sim/policies.LeastLoaded). Each replica encodes one prompt at a time
(S = 1 s, FIFO) and then holds the request for D more seconds; arrivals are Poisson. Printed: the share of
arrivals that wait behind a prompt, over the lone replica's (busy = lam S), at L = lam (S + D) requests held per
replica, beside the model 1 - exp(-L / ROUTED_REQUESTS) (Erlang C over the replicas adds to it where L is small).
Run: .venv/bin/python scripts/router_share.py
"""

from __future__ import annotations

import heapq
import math
import random

from chipwise.serve.search import ROUTED_REQUESTS

REPLICAS = (4, 16, 64)
BUSY = (0.05, 0.2, 0.5)
HELD = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


def waiting_share(n: int, busy: float, held: float, requests: int = 40000, seed: int = 1) -> float:
    """Share of arrivals (after the first tenth) that find their replica encoding a prompt."""
    rng = random.Random(seed)
    lam = busy  # per replica, S = 1 s
    hold = held / lam - 1.0  # D: what a request holds after its prompt
    outstanding = [0] * n
    encoder_free = [0.0] * n
    done: list[tuple[float, int]] = []
    t, waited = 0.0, 0
    for i in range(requests):
        t += rng.expovariate(lam * n)
        while done and done[0][0] <= t:
            outstanding[heapq.heappop(done)[1]] -= 1
        r = outstanding.index(min(outstanding))
        start = max(t, encoder_free[r])
        waited += start > t and i >= requests // 10
        encoder_free[r] = start + 1.0
        outstanding[r] += 1
        heapq.heappush(done, (start + 1.0 + hold, r))
    return waited / (requests - requests // 10)


def main() -> None:
    print("share of a lone replica's waits (P(wait) / busy) by requests held per replica L")
    print(f"{'replicas':>8s} {'busy':>5s} " + " ".join(f"{'L=' + format(h, 'g'):>6s}" for h in HELD))
    for n in REPLICAS:
        for busy in BUSY:
            cells = [waiting_share(n, busy, h) / busy if h >= busy else math.nan for h in HELD]
            print(f"{n:8d} {busy:5.2f} " + " ".join(f"{c:6.2f}" for c in cells))
    model = " ".join(f"{1.0 - math.exp(-h / ROUTED_REQUESTS):6.2f}" for h in HELD)
    print(f"{'model':>14s} {model}")


if __name__ == "__main__":
    main()

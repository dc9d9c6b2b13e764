"""What serving reports share (predict's, plan serve's rows and checks, validation's explanations): a chip count as
JSON shows it, a pool's plan and a split's KV transfer as dicts, the largest fleet a report sizes, and the run
lengths a simulated run needs to reach a steady state."""

from __future__ import annotations

import math
from typing import Any

from chipwise.catalog.units import BYTES_PER_GIB
from chipwise.serve.build import ReplicaSetup
from chipwise.serve.disaggregated import KVTransfer
from chipwise.serve.simulate import Pool
from chipwise.workload.bounds import MAX_CHIPS
from chipwise.workload.serving_job import ServingJob


def fleet_problem(chips: float, what: str) -> str | None:
    """Why a serving fleet sized for the load is refused, or None: past MAX_CHIPS, the largest fleet planned, the
    bound training's fleets keep (1e9 req/s had sized 67 million H100s, priced to the cent)."""
    if chips <= MAX_CHIPS:
        return None
    return (
        f"{what} takes {math.ceil(chips):,} chips, past the largest fleet planned (at most {MAX_CHIPS:,}). "
        "Fix: give the load of one deployment (a lower rate or fewer users)"
    )


#: An open loop is steady when its arrivals span at least two request latencies (its throughput window starts one
#: latency in: serve.sim.metrics.steady_state); a shorter run is flagged with the request count whose arrivals span
#: this many, a latency's margin over the least.
STEADY_FILLS = 3.0
#: An open loop is flagged short under this many requests' tokens in its throughput window: the window's two ends
#: each cut a request's tokens, so a window of n requests reads up to about 1 in n off (three requests 1 s apart
#: had read 5 output tok/s where they offered 10, unflagged); 20 keeps that within 5%.
STEADY_REQUESTS = 20
#: A closed loop's users each issue, and an offline run's requests fill its batch slots, this many waves of requests
#: for a steady state: a run of one wave never has a request wait for a slot or join a running batch.
STEADY_WAVES = 4
#: A closed loop's run is flagged short under this many requests per user: the requests sent in its last cycle see
#: the final drain, and Little's law read lambda W 6% under the 64 users in the system at 4.7 (300 requests of
#: 64 users of Llama-3.1-8B on one H100) and 8% under 128 at 4; from 6 it is within 5% (3.3%, 4.6%).
CLOSED_WAVES = 6


def whole_count(chips: float) -> float | int:
    """A chip count as JSON shows it: 12, not 12.0; a fraction stays one (a replica on part of a chip)."""
    return int(chips) if float(chips).is_integer() else chips


def plan_dict(setup: ReplicaSetup, replicas: int, role: str) -> dict[str, Any]:
    """One pool's plan as a report shows it: `replicas` replicas of `setup` in `role` ('both', 'prefill' or
    'decode'), their shape, batching, precisions and engine knobs, their chips, and each rank's memory in GiB."""
    p, pol = setup.plan, setup.policy()
    return {
        "hardware": setup.system.chip.id,
        "system": setup.system.id,
        "engine": setup.engine.engine,
        "role": role,
        "tp": p.tp,
        "pp": p.pp,
        "ep": p.ep,
        "attention_dp": p.attention_dp,
        # attention-DP context balancing (TensorRT-LLM's enable_balance): while every rank generates, prompts wait
        # until each rank has one, or a counter of iterations reaches this many (0: none; a disaggregated pool has
        # none to hold: a prefill pool's ranks generate nothing, a decode pool's encode no prompt)
        "adp_balance": p.adp_balance if p.attention_dp else None,
        "adp_balance_iters": pol.hold_timeout if pol.adp_ranks > 1 and role == "both" else 0,
        "replicas": replicas,
        "max_batch": p.max_batch,
        "max_tokens": p.max_tokens,
        "chunked_prefill": p.chunked_prefill,
        "mixed_batching": pol.mixed_batching,
        "front_end": p.front_end,
        "recv_interval": p.recv_interval,
        "batch_wait_iters": p.batch_wait_iters,
        "batch_wait_ratio": p.batch_wait_ratio,
        "piecewise_graphs": p.piecewise_graphs,
        # the largest decode batch replayed in a captured graph and the KV cache's share of memory, as given (null: the
        # engine's own, serve.engine.decode_graph_batch and engines.*.memory_fraction)
        "graph_batch": p.graph_batch or None,
        "memory_fraction": p.memory_fraction or None,
        "weight_precision": p.weight_precision,
        "kv_precision": p.kv_precision,
        "speculative": p.speculation.label() if p.speculation else None,
        "speculation": p.speculation.record() if p.speculation else None,
        "chips_per_replica": setup.chips,
        "chips": whole_count(Pool(setup, replicas, role).chips),  # whole chips, where replicas are smaller than one
        "kv_cache_tokens_per_replica": setup.kv_tokens,
        "kv_cache_block_tokens": setup.memory.block_tokens,
        "admission": setup.engine.admission,  # reserve: a request's whole context held; on_demand: as it grows
        "memory_per_rank_gib": {
            "weights": float(setup.memory.weights) / BYTES_PER_GIB,
            "activations": float(setup.memory.activations) / BYTES_PER_GIB,
            "reserved": float(setup.memory.reserved) / BYTES_PER_GIB,
            "kv_cache": float(setup.memory.kv_memory) / BYTES_PER_GIB,
            "capacity": float(setup.memory.capacity) / BYTES_PER_GIB,
        },
    }


def transfer_dict(t: KVTransfer, job: ServingJob) -> dict[str, Any]:
    """A split's KV path as a report shows it: its fabric, bytes per token, bandwidth and latency, and the seconds
    one mean prompt of `job` takes over it."""
    return {
        "fabric": t.fabric,
        "projected": t.projected,
        "bytes_per_token": t.bytes_per_token,
        "bandwidth_bytes_per_s": t.bandwidth,
        "latency_s": t.latency_s,
        "seconds_for_mean_prompt": t.latency_s + t.seconds(job.mean_input),
    }

"""Layer 4 - perf: operator costs on one rank, collectives on a topology."""

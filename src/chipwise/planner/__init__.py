"""Layer 7 - planner: plan search across fleets, ranking, Pareto fronts, fleet mixes, sensitivity."""

"""Layer 6 - economics: cloud prices, owned-fleet TCO, energy and carbon."""

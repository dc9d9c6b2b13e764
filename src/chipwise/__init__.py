"""chipwise: where does an LLM workload run best - time, plan, dollars, energy and carbon across AI accelerators.

The Python API is `chipwise.api` (`import chipwise.api as cw`; `import chipwise` then `chipwise.api.predict` works
too): loaded on first use, so that the `chipwise` command, which never uses it, does not import every planner.
"""

from __future__ import annotations

import typing

__version__ = "0.1.0"

if typing.TYPE_CHECKING:
    from chipwise import api as api


def __getattr__(name: str) -> typing.Any:
    """`chipwise.api` on first use (PEP 562); any other missing name is the usual AttributeError."""
    if name == "api":
        import chipwise.api as api_module  # sets the attribute: no second call (a `from` import recursed here)

        return api_module
    raise AttributeError(f"module 'chipwise' has no attribute {name!r}")

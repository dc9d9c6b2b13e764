"""The NumPy types of the vectorised model, defined once: every layer prices one plan or a million of them with
the same code (DESIGN.md, "One model, scalar or batched"), so its functions take `ArrayLike` (a float, a list or an
array) and return `Array` (float64) or `IntArray` (int64). A module of no layer, as errors.py is: any may import it."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["Array", "ArrayLike", "IntArray"]

Array: TypeAlias = NDArray[np.float64]
IntArray: TypeAlias = NDArray[np.int64]

"""A global batch given in tokens, as sequences that data parallelism can divide.

A batch of tokens over a sequence length is seldom a whole number of sequences ('4M' is 4,000,000 tokens, 488.3
sequences of 8,192), and rounding it to the nearest whole one can leave a batch that data parallelism divides badly:
'8M' at 8,192 tokens was 977 sequences, a prime, so the plan could run no data parallelism at all. The batch is
instead the one within BATCH_TOLERANCE of the tokens asked for with the most factors of two (a power-of-two fleet's
data parallelism divides it), the nearest of those: 4M -> 512 sequences, 8M -> 1,024, 3M -> 384 (3 x 2^7). A whole
number of sequences is taken as it is: the batch was stated exactly.
"""

from __future__ import annotations

import math

#: how far (a share of the batch asked for) the batch may move to be divisible by a larger power of two: a decimal
#: 'M' is 4.6% short of a binary one (2^20), so 4M, 8M and 16M of 2^k-token sequences find 2^j sequences
BATCH_TOLERANCE = 0.05


def divisible_batch(tokens: float, seq_len: int) -> int:
    """The global batch in sequences for `tokens` a step of `seq_len`-token sequences: the exact count where it is
    whole, else the count within BATCH_TOLERANCE of it with the largest power-of-two factor (the nearest on a log
    scale of those), at least one sequence."""
    wanted = tokens / seq_len
    if wanted <= 1.0:
        return 1
    if float(wanted).is_integer():
        return int(wanted)
    lo = math.ceil(wanted / (1.0 + BATCH_TOLERANCE))
    hi = math.floor(wanted * (1.0 + BATCH_TOLERANCE))
    if hi < lo:  # a batch of a few sequences: the nearest whole one
        return max(1, round(wanted))
    step = 1 << hi.bit_length()
    while step > 1 and (hi // step) * step < lo:  # the largest power of two with a multiple in [lo, hi]
        step >>= 1
    multiples = range(math.ceil(lo / step) * step, hi + 1, step)
    return min(multiples, key=lambda n: abs(math.log(n / wanted)))

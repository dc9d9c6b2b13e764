"""Request lengths (tokens): a scenario's length distribution (LengthSpec; dist is fixed, uniform, normal, lognormal
or exponential, e.g. {dist: lognormal, mean: 512, std: 256, min: 1, max: 4096}), the LengthDist that draws lengths
from it, and the check that requests fit the model's context."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, Literal, get_args

import numpy as np
from pydantic import AfterValidator, Field, ValidationError, model_validator

from chipwise.errors import ChipwiseError, shown_value
from chipwise.types import Array, IntArray
from chipwise.workload.bounds import TOKENS, TokenCount, TokenFloat
from chipwise.workload.counts import count_value, read_count
from chipwise.workload.model import ModelSpec
from chipwise.workload.strict_model import StrictModel
from chipwise.workload.traces import Trace


class LengthSpec(StrictModel):
    """A request-length distribution (tokens)."""

    dist: Literal["fixed", "uniform", "normal", "lognormal", "exponential"] = "fixed"
    mean: TokenFloat | None = None
    #: a spread past any context (or an infinite one) drew nonsense lengths or overflowed the lognormal's shape
    std: Annotated[float, Field(ge=0, allow_inf_nan=False), AfterValidator(TOKENS.check)] = 0.0
    min: TokenCount = 1
    max: TokenCount | None = None

    @model_validator(mode="after")
    def _bounds(self) -> LengthSpec:
        unused = {"fixed": ("std", "min", "max"), "uniform": ("mean", "std"), "exponential": ("std",)}
        ignored = [k for k in unused.get(self.dist, ()) if k in self.model_fields_set]
        if ignored:  # it was dropped silently: a uniform length's mean, an exponential one's spread
            raise ValueError(
                f"{'an' if self.dist == 'exponential' else 'a'} {self.dist} length has no {' or '.join(ignored)} "
                f"({self._shape()}): drop {', '.join(ignored)}"
            )
        if self.dist == "uniform":
            if self.max is None:
                raise ValueError("a uniform length needs min and max")
        elif self.mean is None:
            raise ValueError(f"a {self.dist} length needs a mean")
        if self.dist == "fixed" and self.mean is not None and self.mean != int(self.mean):
            # every request is `mean` tokens long: 1.5 had been reported as the mean and simulated as 2 tokens
            raise ValueError(f"a fixed length is a whole number of tokens, got mean {self.mean:g}; give a whole number")
        if self.max is not None and self.max < self.min:
            raise ValueError(f"length max {self.max} is below min {self.min}")
        if self.mean is not None and not self.min <= self.mean <= (self.max or math.inf):
            bounds = f"outside min {self.min} .. max {self.max}" if self.max is not None else f"below min {self.min}"
            raise ValueError(
                f"length mean {self.mean:g} lies {bounds}: clipping every length to the bounds would make a different "
                "mean; give a mean within them"
            )
        # a lognormal or exponential length is checked where its bounds are the user's: without them it is cut at
        # chipwise's own LengthDist.maximum, and draws a little under its mean as LengthDist.expected reports (a
        # lognormal of mean 1,000 and std 3,000 had been refused for the cap the user never gave)
        bounded = bool({"min", "max"} & self.model_fields_set)
        if self.dist == "normal" or (self.dist in ("lognormal", "exponential") and bounded):
            self._clipped_mean()
        return self

    def _clipped_mean(self) -> None:
        """Refuse a spread whose draws, clipped to [min, max] (at least one token; without a max at
        LengthDist.maximum), have a mean more than MEAN_SHIFT off the one asked: a normal of mean 100 and std 500 had
        been simulated at a mean of 254 tokens, and one of 512 and 512 at 555. Only a normal length was checked: a
        lognormal of mean 1,000 and std 500 with min 900 had drawn 1,129 tokens a request and an exponential of mean
        300 with min 200 354, each priced so without a word; both are refused now."""
        assert self.mean is not None
        dist = LengthDist.of(self)
        if keeps_mean(dist):
            return
        spread = "" if self.dist == "exponential" else f" and std {self.std:g}"
        raise ValueError(
            f"{'an' if self.dist == 'exponential' else 'a'} {self.dist} length of mean {self.mean:g}{spread}, clipped "
            f"to {max(1, self.min):,} .. {dist.maximum:,} tokens, draws a mean of {dist.expected:,.0f}: give "
            f"{self._mean_keeping(dist)}"
        )

    def _mean_keeping(self, dist: LengthDist) -> str:
        """The changes that keep the mean asked, where `dist` does not: a smaller spread, bounds further from the
        mean on the side that moved it, a lognormal (for a normal) only where it keeps the mean itself (the advice
        had named it for a normal of mean 100 and std 500, whose lognormal draws 89 tokens, 11% under), and always a
        uniform length, whose mean is its bounds' midpoint."""
        assert self.mean is not None
        fixes = [] if self.dist == "exponential" else ["a smaller std"]
        if dist.expected > self.mean and self.min > 1:
            fixes.append("a lower min")
        if dist.expected < self.mean and self.max is not None:
            fixes.append("a higher max")
        if self.dist == "normal" and keeps_mean(LengthDist("lognormal", self.mean, self.std, self.min, self.max)):
            fixes.append("a lognormal length (never below one token)")
        fixes.append("a uniform length (min .. max, its mean halfway between)")
        return ", ".join(fixes[:-1]) + (" or " if len(fixes) > 1 else "") + fixes[-1]

    def _shape(self) -> str:
        return {
            "fixed": "it is its mean",
            "uniform": "it is set by min and max",
            "exponential": "its spread is its mean",
        }[self.dist]


#: lengths drawn to read a distribution's clipped mean (its standard error: std / 450)
EXPECTED_SAMPLES = 200_000
#: a spread whose clipped draws' mean is further than this share from the mean asked is refused (LengthSpec): the
#: sample's own error is std / 450, well inside it
MEAN_SHIFT = 0.02


def keeps_mean(dist: LengthDist) -> bool:
    """Whether the lengths `dist` draws, rounded and clipped, keep its stated mean to within MEAN_SHIFT."""
    return abs(dist.expected - dist.mean) <= MEAN_SHIFT * dist.mean


@dataclass(frozen=True)
class LengthDist:
    """Tokens per request: fixed, uniform[low, high], normal, lognormal (mean, std) or exponential (mean),
    clipped to [low, high], an unbounded one's draws at `maximum`."""

    kind: str
    mean: float
    std: float = 0.0
    low: int = 1
    high: int | None = None

    @classmethod
    def fixed(cls, n: int) -> LengthDist:
        TOKENS.require(n, "a request length of")  # 10**400 tokens overflowed a float (plan serve, the API)
        return cls("fixed", float(n), 0.0, int(n), int(n))

    @classmethod
    def of(cls, spec: float | LengthSpec | LengthDist) -> LengthDist:
        """The lengths of a scenario's LengthSpec, or of a whole count (every request's length), or `spec` itself."""
        if isinstance(spec, LengthDist):
            return spec
        if isinstance(spec, int | float):
            return cls.fixed(int(spec))
        if spec.dist == "uniform":
            assert spec.max is not None
            return cls("uniform", (spec.min + spec.max) / 2.0, 0.0, spec.min, spec.max)
        assert spec.mean is not None
        return cls(spec.dist, float(spec.mean), float(spec.std), spec.min, spec.max)

    @cached_property
    def expected(self) -> float:
        """The mean of the lengths drawn, after rounding and clipping to [low, high] (a heavy tail clipped at
        `high` draws below the stated mean): `mean` itself for fixed and uniform lengths, else the mean of a
        fixed-seed sample of EXPECTED_SAMPLES lengths."""
        if self.kind in ("fixed", "uniform"):
            return self.mean
        return float(self._draws.mean())

    @cached_property
    def _draws(self) -> IntArray:
        """A fixed-seed sample of EXPECTED_SAMPLES lengths, which the clipped mean and the quantiles are read from."""
        return self.sample(EXPECTED_SAMPLES, np.random.default_rng(0))

    @cached_property
    def _sorted(self) -> Array:
        """The fixed-seed sample, sorted once: the quantiles read from it by interpolation, as numpy's own (linear)."""
        return np.sort(self._draws).astype(np.float64)

    def quantile(self, q: float) -> float:
        """The length below which a share `q` of the requests fall: the length itself when fixed, else read from the
        fixed-seed sample the clipped mean is (a uniform length's exactly)."""
        return float(self.quantiles(np.asarray([q]))[0])

    def quantiles(self, qs: Array) -> Array:
        """quantile at each of `qs` at once (np.quantile's linear interpolation over the sorted sample, which one
        partition of the 200,000 draws a share had made cost 2 ms each: `plan serve --hardware all` reads 32 shares
        for 28 systems)."""
        q = np.asarray(qs, dtype=np.float64)
        if self.kind == "fixed":
            return np.full(q.shape, float(self.mean))
        if self.kind == "uniform":
            return np.asarray(self.low + q * ((self.high or self.low) - self.low), dtype=np.float64)
        ranked = self._sorted
        at = q * (ranked.size - 1)
        below = np.minimum(np.floor(at).astype(np.int64), ranked.size - 1)
        above = np.minimum(below + 1, ranked.size - 1)
        return np.asarray(ranked[below] + (at - below) * (ranked[above] - ranked[below]), dtype=np.float64)

    def sample(self, n: int, rng: np.random.Generator) -> IntArray:
        if self.kind == "fixed":
            return np.full(n, max(1, round(self.mean)), dtype=np.int64)
        if self.kind == "uniform":
            return rng.integers(self.low, (self.high or self.low) + 1, size=n).astype(np.int64)
        if self.kind == "normal":
            x = rng.normal(self.mean, self.std, size=n)
        elif self.kind == "lognormal":
            sigma2 = math.log1p((self.std / self.mean) ** 2) if self.mean > 0 else 0.0
            x = rng.lognormal(math.log(self.mean) - sigma2 / 2.0, math.sqrt(sigma2), size=n)
        else:
            x = rng.exponential(self.mean, size=n)
        return np.clip(np.rint(x), max(1, self.low), self.maximum).astype(np.int64)

    @property
    def maximum(self) -> int:
        """The longest length the distribution yields: its max, or when unbounded a high quantile at which `sample`
        truncates the tail. The context checks (check_context) and the replicas' sizing take this length, so a draw
        past it (a lognormal of mean 20,000 and std 25,000 drew 244,552 tokens against a 131,072-token context,
        simulated, or dropped unexplained by a cache too small for it) is never produced."""
        if self.high is not None:
            return int(self.high)
        if self.kind == "fixed":
            return max(1, round(self.mean))
        if self.kind == "exponential":
            return max(1, round(self.mean * 7.0))
        return max(1, round(self.mean + 4.0 * self.std))

    def scenario_value(self) -> int | dict[str, Any]:
        """The length as a scenario's input_tokens or output_tokens takes it: a whole count for a fixed length (its
        mean rounded: a trace's mean length), else the LengthSpec mapping that draws the same lengths."""
        if self.kind == "fixed":
            return max(1, round(self.mean))
        spec: dict[str, Any] = {"dist": self.kind}
        if self.kind != "uniform":
            spec["mean"] = self.mean
        if self.kind in ("normal", "lognormal"):
            spec["std"] = self.std
        if self.low > 1 or self.kind == "uniform":
            spec["min"] = self.low
        if self.high is not None:
            spec["max"] = self.high
        return spec

    def label(self) -> str:
        """The length in a heading: '1,024', or 'lognormal 2,000 (std 1,500, max 16,000)', 'uniform 256-4,096'."""
        if self.kind == "fixed":
            return f"{max(1, round(self.mean)):,}"
        if self.kind == "uniform":
            return f"uniform {self.low:,}-{self.high or self.low:,}"
        parts = [f"std {self.std:,.0f}"] if self.kind in ("normal", "lognormal") else []
        if self.low > 1:
            parts.append(f"min {self.low:,}")
        if self.high is not None:
            parts.append(f"max {self.high:,}")
        return f"{self.kind} {self.mean:,.0f}" + (f" ({', '.join(parts)})" if parts else "")


#: how a length distribution is written on the command line, for the fixes of its errors
LENGTH_TEXT_EXAMPLE = "lognormal:mean=2k,std=1.5k,max=16k or uniform:min=256,max=4k"


def read_length(value: Any, name: str, example: str) -> LengthDist:
    """A request length given outside a scenario (a command-line option, an API argument): a whole count (1024,
    '4k') is every request's; a distribution is a mapping as a scenario's input_tokens takes it ({'dist':
    'lognormal', 'mean': 2000, 'std': 1500, 'max': 16000}), a LengthSpec, or text naming the distribution, a colon
    and its keys ('lognormal:mean=2k,std=1.5k,max=16k', 'uniform:min=256,max=4k'). Anything else is one line naming
    `name`; a plain count's fix gives `example`."""
    if isinstance(value, LengthSpec):
        return LengthDist.of(value)
    if value is None:  # read_count keeps None, which int() refused with a TypeError
        raise ChipwiseError(f"{name} is None. Fix: give a whole number or a distribution, e.g. {example}.")
    if isinstance(value, str) and ":" in value:
        try:
            spec: Any = length_text(value)
        except ValueError as exc:
            raise ChipwiseError(f"{name} {value!r}: {str(exc).replace(': write', '. Fix: write', 1)}.") from None
    elif isinstance(value, Mapping):
        spec = dict(value)
    else:
        return LengthDist.fixed(int(read_count(value, name, whole=True, example=example)))
    try:
        return LengthDist.of(LengthSpec.model_validate(spec))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        problem, fix = str(err["msg"]).removeprefix("Value error, "), f"correct it, e.g. {LENGTH_TEXT_EXAMPLE}"
        if err["type"] == "extra_forbidden":
            problem = f"unknown key {where!r} (a length takes dist, mean, std, min and max)"
        elif own := re.search(r"[:;] ((?:give|drop) .*)$", problem):  # LengthSpec's own fix
            problem, fix = problem[: own.start()], own.group(1)
        problem = f"{where}: {problem}" if where and err["type"] != "extra_forbidden" else problem
        raise ChipwiseError(f"{name} {shown_value(value)}: {problem}. Fix: {fix}.") from None


def is_length_text(text: str) -> bool:
    """Whether `text` names a distribution before a colon ('lognormal:mean=2k'), not a file ('C:/traces/a.csv')."""
    return text.partition(":")[0].strip() in get_args(LengthSpec.model_fields["dist"].annotation)


def length_text(text: str) -> dict[str, Any]:
    """'lognormal:mean=2k,std=1.5k,max=16k' as the mapping LengthSpec validates (numbers read as counts: '2k' is
    2,000); a ValueError where a key has no '=' or a value is no number."""
    dist, _, rest = text.partition(":")
    spec: dict[str, Any] = {"dist": dist.strip()}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, raw = item.partition("=")
        value = count_value(raw.strip())
        if not eq or not isinstance(value, float):
            raise ValueError(
                f"{item!r} is not KEY=NUMBER: write the distribution, a colon and its keys, e.g. {LENGTH_TEXT_EXAMPLE}"
            )
        spec[key.strip()] = int(value) if key.strip() in ("min", "max") and value.is_integer() else value
    return spec


def context_overflow(model: ModelSpec, prompt: float, answer: float) -> str:
    """'input P + output A tokens exceed M's context of N tokens' where a request outgrows the context its model's
    config states ('' where it fits, or no context is stated)."""
    limit = model.max_seq_len
    if limit <= 0 or prompt + answer <= limit:
        return ""
    return f"input {prompt:,.0f} + output {answer:,.0f} tokens exceed {model.name}'s context of {limit:,} tokens"


def check_context(model: ModelSpec, inp: LengthDist, out: LengthDist, trace: Trace | None = None) -> None:
    """One line when requests outgrow the model's context (where its config.json states one): a trace's longest
    request, else the longest prompt and answer of bounded distributions, the means of unbounded ones, and then
    the longest draws of unbounded ones (LengthDist.maximum, where their draws stop), which the replicas are set up
    to hold."""
    limit = model.max_seq_len
    if limit <= 0:
        return
    if trace is not None:
        i = int(np.argmax(trace.input + trace.output))
        prompt, answer = int(trace.input[i]), int(trace.output[i])
    else:
        prompt, answer = (round(d.high if d.high is not None else d.mean) for d in (inp, out))
    if over := context_overflow(model, prompt, answer):
        fixed = trace is None and inp.kind == out.kind == "fixed"
        raise ChipwiseError(
            f"{'' if fixed else 'the longest request: '}{over}. Fix: shorten the prompt or the answer, or pick a "
            "longer-context model."
        )
    if trace is None:
        _check_tails(model.name, limit, {"input_tokens": (inp, prompt), "output_tokens": (out, answer)})


def _check_tails(model: str, limit: int, lengths: dict[str, tuple[LengthDist, int]]) -> None:
    """One line when an unbounded distribution's longest draws, with the other length, outgrow the context (an
    exponential of mean 100,000 tokens draws 700,000): its fix is a max within the context. `lengths` maps each
    key to its distribution and the length the mean check read (its max, or its mean when unbounded)."""
    (key_a, (a, read_a)), (key_b, (b, read_b)) = lengths.items()
    pairs = ((key_a, a, limit - read_b), (key_b, b, limit - read_a))
    unbounded = [(key, d, room) for key, d, room in pairs if d.high is None]
    if a.maximum + b.maximum <= limit or not unbounded:
        return
    key, dist, room = max(unbounded, key=lambda item: item[1].maximum)
    raise ChipwiseError(
        f"{key}: the {dist.kind} length of mean {dist.mean:,.0f} has no max, and its longest draws (about "
        f"{dist.maximum:,} tokens) outgrow {model}'s context of {limit:,} tokens. Fix: {_tail_fix(key, dist, room)}."
    )


def _tail_fix(key: str, dist: LengthDist, room: int) -> str:
    """A max within the context where clipping there keeps the mean (LengthSpec refuses one that does not: the fix
    had offered an exponential of mean 100,000 a max of 130,944, which draws 72,827 tokens a request), else a
    shorter length or a uniform one."""
    capped = LengthDist(dist.kind, dist.mean, dist.std, dist.low, room)
    if keeps_mean(capped):
        return f"give {key} a max within the context (at most {room:,})"
    reach = "7x its mean" if dist.kind == "exponential" else "its mean + 4 std"
    return (
        f"give {key} a smaller {'mean' if dist.kind == 'exponential' else 'mean or std'} (its draws reach {reach}), "
        f"or a uniform length with a max of at most {room:,} (a max there would draw a mean of "
        f"{capped.expected:,.0f})"
    )

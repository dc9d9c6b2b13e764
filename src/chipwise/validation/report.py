"""Error tables of predictions against measurements: per row, by chip, by source family, by metric."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RowResult:
    """One predicted metric of one ground-truth row. error_pct = 100 (predicted - measured) / measured."""

    id: str
    chip: str
    metric: str
    measured: float
    predicted: float
    plan_source: str
    source_family: str
    notes: str = ""
    #: serving rows: whether the row's throughput agrees with its own load and latencies (validation.consistency);
    #: None where that cannot be checked
    self_consistent: bool | None = None
    #: serving rows: the engine family the row was priced with (serve.engine.ENGINES); "" for training rows
    engine: str = ""
    #: the statistic the source reports and the prediction is read at (p50, mean, p90, p99; 'value': one figure
    #: that names none, a latency compared with the predicted mean): rows.Measured.stat
    stat: str = "value"

    @property
    def error_pct(self) -> float:
        return 100.0 * (self.predicted - self.measured) / self.measured

    def as_json(self) -> dict[str, Any]:
        extra = {"engine": self.engine} if self.engine else {}
        return {
            "id": self.id,
            "chip": self.chip,
            "metric": self.metric,
            "measured": self.measured,
            "predicted": self.predicted,
            "error_pct": self.error_pct,
            "stat": self.stat,
            "plan_source": self.plan_source,
            "source_family": self.source_family,
            "notes": self.notes,
            "self_consistent": self.self_consistent,
            **extra,
        }


def error_stats(errors: Sequence[float]) -> dict[str, float]:
    """n, MAPE, median absolute error and bias (mean signed error) of percentage errors."""
    absolute = [abs(e) for e in errors]
    return {
        "n": len(errors),
        "mape_pct": statistics.fmean(absolute) if absolute else float("nan"),
        "median_ape_pct": statistics.median(absolute) if absolute else float("nan"),
        "bias_pct": statistics.fmean(errors) if errors else float("nan"),
    }


def _group(rows: Iterable[RowResult], key: str) -> dict[str, dict[str, float]]:
    groups: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        groups[str(getattr(r, key)) or "(not stated)"].append(r.error_pct)
    return {k: error_stats(v) for k, v in sorted(groups.items())}


def mape_cell(groups: Mapping[str, Mapping[str, float]], metric: str) -> str:
    """'MAPE (n)' of one metric of a by-metric group, for the tables by engine ('-' where it has no such metric)."""
    st = groups.get(metric)
    return f"{st['mape_pct']:.1f} ({int(st['n'])})" if st else "-"


#: rows `concentration` lists per metric, largest error first
TOP_ROWS = 5


def concentration(rows: Sequence[RowResult]) -> dict[str, dict[str, Any]]:
    """Per metric, where its MAPE comes from: each row adds |error| / n points to it; the fewest rows whose points
    reach half of the MAPE (`rows_for_half`), and the TOP_ROWS rows that add the most, largest first."""
    by_metric: dict[str, list[RowResult]] = defaultdict(list)
    for r in rows:
        by_metric[r.metric].append(r)
    out: dict[str, dict[str, Any]] = {}
    for metric, group in sorted(by_metric.items()):
        ranked = sorted(group, key=lambda r: -abs(r.error_pct))
        points = [abs(r.error_pct) / len(group) for r in ranked]
        half = 0.5 * sum(points)
        carried, rows_for_half = 0.0, 0
        while rows_for_half < len(points) and carried < half:
            carried += points[rows_for_half]
            rows_for_half += 1
        out[metric] = {
            "n": len(group),
            "mape_pct": sum(points),
            "rows_for_half": rows_for_half,
            "largest": [
                {"id": r.id, "chip": r.chip, "error_pct": r.error_pct, "points": p}
                for r, p in zip(ranked[:TOP_ROWS], points, strict=False)
            ],
        }
    return out


def summarise(kind: str, rows: Sequence[RowResult], skipped: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The JSON object `chipwise validate --json` prints."""
    overall = error_stats([r.error_pct for r in rows])
    total = len({r.id for r in rows}) + len(skipped)
    summary: dict[str, Any] = {
        **overall,
        "rows_total": total,
        "rows_predicted": len({r.id for r in rows}),
        "predicted_fraction": len({r.id for r in rows}) / total if total else 0.0,
        "by_chip": _group(rows, "chip"),
        "by_source_family": _group(rows, "source_family"),
        "by_metric": _group(rows, "metric"),
        "concentration": concentration(rows),
    }
    engines = sorted({r.engine for r in rows if r.engine})
    if engines:
        summary["by_engine"] = {e: _group((r for r in rows if r.engine == e), "metric") for e in engines}
    contradicted = sorted({r.id for r in rows if r.self_consistent is False})
    if contradicted:
        summary["self_inconsistent_rows"] = contradicted
        summary["by_metric_self_consistent"] = _group((r for r in rows if r.self_consistent is not False), "metric")
    return {
        "kind": kind,
        "rows": [r.as_json() for r in rows],
        "skipped": [{"id": i, "reason": reason} for i, reason in skipped],
        "summary": summary,
    }

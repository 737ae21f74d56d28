"""Monitoring, typed: a trace as a source gives it, the approved bundle as a stream reads it, and the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

#: Days an approval holds when the bundle's policy does not say (``revalidate_after``).
DEFAULT_REVALIDATE_AFTER = 90
WINDOWS = ("day", "week")
ALARM_KINDS = ("validity", "shift", "expiry")


@dataclass(frozen=True, slots=True)
class Trace:
    """One production trace as read from a source (``line`` names where, for errors)."""

    id: str
    timestamp: str  # ISO 8601, UTC, microseconds: sorts as text
    input: str
    output: str
    category: str = "default"
    score: int | None = None  # the judge's verdict; None: the bundle's judge grades it
    metadata: dict[str, Any] = field(default_factory=dict)
    line: int = 0

    def as_item(self) -> dict[str, Any]:
        """The golden-set item a sampled trace becomes (its time kept in the metadata)."""
        return {"id": self.id, "category": self.category, "input": self.input, "output": self.output,
                "metadata": {**self.metadata, "production_timestamp": self.timestamp}}


@dataclass(frozen=True, slots=True)
class StreamBundle:
    """What a stream needs of its approved bundle (read from the bundle ``load_bundle`` verified)."""

    sha256: str
    file: str
    rubric_name: str
    rubric_version: int
    rubric_content: dict[str, Any]
    judge_id: str
    golden_set: str
    golden_set_hash: str
    values: tuple[int, ...]
    pass_threshold: int
    confusion: tuple[tuple[int, ...], ...]
    agreement_metric: str
    min_agreement_lower: float
    revalidate_after: int
    approved_at: str

    @classmethod
    def from_bundle(cls, bundle: dict[str, Any], file: str) -> StreamBundle:
        rubric, judge, gs = (bundle.get(k) or {} for k in ("rubric", "judge", "golden_set"))
        content = rubric.get("content") or {}
        confusion = (bundle.get("calibration") or {}).get("confusion") or {}
        policy = bundle.get("policy") or {}
        values = tuple(int(v) for v in confusion.get("labels") or ())
        return cls(str(bundle.get("sha256")), file, str(rubric.get("name")), int(rubric.get("version") or 0), content,
                   str(judge.get("id")), str(gs.get("name")), str(gs.get("version_hash")), values,
                   int(content.get("pass_threshold", 0)),
                   tuple(tuple(int(c) for c in row) for row in confusion.get("matrix") or ()),
                   str(policy.get("agreement_metric", "krippendorff_alpha_ordinal")),
                   float(policy.get("min_agreement_lower", 0.667)),
                   int(policy.get("revalidate_after") or DEFAULT_REVALIDATE_AFTER), str(bundle.get("created_at")))

    @property
    def expires_at(self) -> datetime:
        return parse_time(self.approved_at) + timedelta(days=self.revalidate_after)

    def is_pass(self, score: int) -> bool:
        return score >= self.pass_threshold


def parse_time(text: str) -> datetime:
    """An ISO 8601 time (a date alone is midnight UTC; no zone is UTC)."""
    t = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def utc_text(t: datetime) -> str:
    """The stored form: UTC with microseconds, so text order is time order."""
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class IngestResult:
    stream: str
    file: str
    records: int
    added: int
    sampled: int
    graded: int
    unscored: int
    seed: int
    label_rate: float
    too_old: int = 0  # new ids timed before the stream's retention horizon (monitor prune): not taken

    def summary(self) -> str:
        old = (f", {self.too_old} timed before the stream's retention horizon and not taken" if self.too_old else "")
        return (f"{self.file}: {self.records} traces read, {self.added} new ({self.records - self.added - self.too_old}"
                f" already in stream '{self.stream}'{old}); {self.sampled} sampled for labeling into golden set '{self.stream}' "
                f"(rate {self.label_rate:g}, seed {self.seed}); {self.graded} graded by the bundle's judge"
                + (f", {self.unscored} unscored" if self.unscored else "") + ".")


@dataclass(frozen=True, slots=True)
class StoredTrace:
    """A trace as the stream holds it (no texts)."""

    trace_id: str
    ts: str
    category: str
    input_chars: int
    score: int | None
    sampled: bool
    inclusion_prob: float


@dataclass(frozen=True, slots=True)
class DayAggregate:
    """What the report needs of one UTC day of a stream's traces (kept at ingest; a week is the sum of its days).

    ``rates``: scored traces by (inclusion probability, judge pass 0/1), what the weighted estimate reads."""

    day: str  # YYYY-MM-DD
    n_items: int
    n_scored: int
    n_pass: int
    categories: dict[str, int]
    lengths: dict[int, int]
    rates: dict[tuple[float, int], int]


@dataclass(frozen=True, slots=True)
class Alarm:
    kind: str  # validity | shift | expiry
    sentence: str
    since: str | None = None  # the window start (or time) the alarm was first raised

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "sentence": self.sentence}


@dataclass(frozen=True, slots=True)
class Estimate:
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high}
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True, slots=True)
class WindowReport:
    start: str
    end: str
    n_items: int
    n_labeled: int
    raw_pass_rate: float | None
    corrected_pass_rate: Estimate
    agreement: Estimate
    alarms: tuple[Alarm, ...] = ()
    labeled_pass_rate: float | None = None  # the humans' pass rate on the window's labels
    labels_since_approval: int = 0
    validity_wealth: float = 1.0

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "n_items": self.n_items, "n_labeled": self.n_labeled,
                "raw_pass_rate": self.raw_pass_rate, "corrected_pass_rate": self.corrected_pass_rate.to_json(),
                "agreement": self.agreement.to_json(), "alarms": [a.to_json() for a in self.alarms],
                "labels_since_approval": self.labels_since_approval, "validity_e_value": self.validity_wealth}


@dataclass(frozen=True, slots=True)
class MonitorReport:
    stream: str
    bundle: str
    window: str
    agreement_metric: str
    agreement_bound: float
    windows: tuple[WindowReport, ...]

    @property
    def open_alarms(self) -> tuple[Alarm, ...]:
        return self.windows[-1].alarms if self.windows else ()

    def to_json(self) -> dict[str, Any]:
        return {"stream": self.stream, "bundle": self.bundle, "window": self.window,
                "agreement_metric": self.agreement_metric, "agreement_bound": self.agreement_bound,
                "windows": [w.to_json() for w in self.windows]}


@dataclass(frozen=True, slots=True)
class GoldenMix:
    """The approval golden set's traffic: its category counts and input lengths (what shift compares with)."""

    categories: dict[str, int]
    input_lengths: tuple[int, ...]

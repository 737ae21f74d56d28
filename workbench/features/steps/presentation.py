"""Failure attribution in words and tables: the report's ``steps`` section as ``calibrate`` prints it and the
calibration card shows it (docs/steps.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.calibration.report import CalibrationReport

MEASURES = (("exact", "step exact"), ("within_1", "step within 1"), ("within_3", "step within 3"),
            ("agent", "agent"), ("offset", "step offset"))
GROUPS = ("all", "short", "long")
BASELINES = (("last_step", "last step"), ("random", "random"))


@dataclass(frozen=True)
class Measure:
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    beats: bool | None = None  # a paired difference: its interval lies above 0

    @classmethod
    def of(cls, d: dict | None) -> Measure:
        return cls(**{k: v for k, v in (d or {}).items() if k in ("value", "ci_low", "ci_high", "n", "beats")})

    def text(self, digits: int = 2) -> str:
        if self.value is None or self.ci_low is None:
            return "n/a"
        return f"{self.value:.{digits}f} ({self.ci_low:.{digits}f} to {self.ci_high:.{digits}f})"


@dataclass(frozen=True)
class Group:
    """One length group: the judge's measures, each baseline's, and the judge minus each baseline."""

    n_items: int = 0
    judge: dict[str, Measure] = field(default_factory=dict)
    baselines: dict[str, dict[str, Measure]] = field(default_factory=dict)
    beats: dict[str, dict[str, Measure]] = field(default_factory=dict)

    @classmethod
    def of(cls, d: dict | None) -> Group:
        d = d or {}
        nested = {name: {b: {k: Measure.of(m) for k, m in (ms or {}).items()} for b, ms in (d.get(name) or {}).items()}
                  for name in ("baselines", "beats")}
        return cls(d.get("n_items") or 0, {k: Measure.of(m) for k, m in (d.get("judge") or {}).items()}, **nested)


@dataclass(frozen=True)
class Row:
    group: str
    n: int
    measure: str
    judge: str
    last_step: str
    random: str
    beats: str


@dataclass(frozen=True)
class Attribution:
    """The report's ``steps`` section, typed."""

    n_items: int
    n_human_steps: int
    n_unresolved_steps: int
    n_judge_steps: int
    long_after: int
    groups: dict[str, Group]
    humans: Group | None  # people against people, over all items ('judge' holds their measures)

    @classmethod
    def of(cls, report: CalibrationReport) -> Attribution | None:
        s: dict[str, Any] | None = report.steps
        if not s:
            return None
        groups = {g: Group.of(v) for g, v in ((s.get("judge") or {}).get("groups") or {}).items()}
        people = ((s.get("humans") or {}).get("groups") or {}).get("all") or {}
        humans = Group(people.get("n_items") or 0, {k: Measure.of(m) for k, m in (people.get("metrics") or {}).items()})
        return cls(s.get("n_items") or 0, s.get("n_human_steps") or 0, s.get("n_unresolved_steps") or 0,
                   s.get("n_judge_steps") or 0, s.get("long_after") or 0, groups, humans if humans.n_items else None)

    def rows(self) -> list[Row]:
        out = []
        for group in GROUPS:
            g = self.groups.get(group)
            if g is None or not g.n_items:
                continue
            for key, name in MEASURES:
                digits = 1 if key == "offset" else 2
                cells = [g.baselines.get(b, {}).get(key, Measure()).text(digits) for b, _ in BASELINES]
                beaten = [label for b, label in BASELINES if g.beats.get(b, {}).get(key, Measure()).beats]
                out.append(Row(group, g.n_items, name, g.judge.get(key, Measure()).text(digits), *cells,
                               "" if key == "offset" else ", ".join(beaten) or "neither"))
        return out

    def sentences(self) -> list[str]:
        out = [f"Failure attribution: {self.n_items} failing items with the people's decisive step and the judge's "
               f"({self.n_human_steps} with the people's, {self.n_unresolved_steps} where the reviewers' steps have "
               f"no majority, {self.n_judge_steps} the judge named a step for). Short runs have at most "
               f"{self.long_after} steps; an offset below 0 means the judge blames earlier steps than people. The 95% "
               "intervals respect task clusters; the judge beats a baseline when the paired difference's interval "
               "lies above 0 (docs/steps.md)."]
        if self.humans:
            m = self.humans.judge
            out.append(f"People against people on {self.humans.n_items} items two or more marked: step exact "
                       f"{m.get('exact', Measure()).text()}, within 1 {m.get('within_1', Measure()).text()}, "
                       f"within 3 {m.get('within_3', Measure()).text()}, agent {m.get('agent', Measure()).text()}.")
        return out


def report_lines(report: CalibrationReport) -> list[str]:
    """``workbench calibrate``'s lines for failure attribution ([] where no label marks a step)."""
    a = Attribution.of(report)
    if a is None:
        return []
    lines = [""] + a.sentences()
    lines.append(f"  {'length':7s}{'measure':15s}{'judge':22s}{'last step':22s}{'random':22s}beats")
    lines += [f"  {r.group:7s}{r.measure:15s}{r.judge:22s}{r.last_step:22s}{r.random:22s}{r.beats}" for r in a.rows()]
    return lines


def card_sections(report: CalibrationReport) -> list[tuple[str, list[str]]]:
    """The calibration card's failure attribution section ([] where no label marks a step)."""
    a = Attribution.of(report)
    if a is None:
        return []
    lines = a.sentences() + ["", "| length | n | measure | judge | last step | random | beats |",
                             "|---|---|---|---|---|---|---|"]
    lines += [f"| {r.group} | {r.n} | {r.measure} | {r.judge} | {r.last_step} | {r.random} | {r.beats} |"
              for r in a.rows()]
    return [("Failure attribution (where did it go wrong)", lines)]

"""The ordinal scale a rubric grades on (default -1 fail / 0 competent pass / +1 exceptional)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScaleLevel:
    value: int
    label: str
    description: str = ""


@dataclass(frozen=True)
class Scale:
    """Ordered levels, lowest first. Values are distinct integers."""

    levels: tuple[ScaleLevel, ...]

    def __post_init__(self) -> None:
        values = [lv.value for lv in self.levels]
        if len(values) < 2:
            raise ValueError("a scale needs at least two levels")
        if len(set(values)) != len(values):
            raise ValueError(f"scale values must be distinct, got {values}")
        if values != sorted(values):
            raise ValueError(f"scale levels must be listed lowest first, got {values}")

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(lv.value for lv in self.levels)

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value in self.values

    def label_of(self, value: int) -> str:
        for lv in self.levels:
            if lv.value == value:
                return lv.label
        raise KeyError(value)

    def describe(self) -> str:
        """'(-1, 0, 1)': how error messages show the allowed values."""
        return "(" + ", ".join(str(v) for v in self.values) + ")"

    def to_dict(self) -> list[dict]:
        return [{"value": lv.value, "label": lv.label, "description": lv.description} for lv in self.levels]


def fmt(x: object, digits: int = 3) -> str:
    """A measurement for people: 'n/a' for a missing value, floats to a fixed number of digits."""
    return "n/a" if x is None else f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def fmt_usd(usd: float | None, digits: int = 2, *, unknown: str = "unknown") -> str:
    """'$2.11', or ``unknown`` when nothing is priced: an unknown cost is never shown as $0."""
    return unknown if usd is None else f"${usd:,.{digits}f}"


DEFAULT_SCALE = Scale((
    ScaleLevel(-1, "fail", "Wrong, unsafe, or does not do the task."),
    ScaleLevel(0, "competent pass", "Does the task correctly with no notable flaw or distinction."),
    ScaleLevel(1, "exceptional", "Correct and clearly better than a competent answer."),
))

"""The gate policy: the thresholds a judge must clear, from the defaults, rubrics/policy.yaml and a rubric's
own ``gate:`` overrides, each key and value checked where it is written."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Callable

from workbench.core.errors import InputError
from workbench.core.inputs import unknown_key
from workbench.core.strict_yaml import load_yaml, read_utf8


@dataclass(frozen=True)
class SelectivePolicy:
    """A rubric's ``selective:`` section: the judge keeps only items it is confident about, with the guarantee
    that its agreement with the human consensus there is >= ``target_agreement`` with probability >= 1 - ``risk``
    (docs/selective.md); ``cascade`` names the judges, in order, that take what the ones before abstain on."""

    target_agreement: float
    risk: float
    cascade: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"target_agreement": self.target_agreement, "risk": self.risk}
        if self.cascade:
            out["cascade"] = list(self.cascade)
        return out


@dataclass(frozen=True)
class LocatesFailuresPolicy:
    """A rubric's ``locates_failures:`` section (docs/steps.md): the judge's step must lie within ``within`` steps
    of the people's decisive error step on a share of failing items whose 95% lower bound is at least
    ``min_lower_bound``."""

    within: int
    min_lower_bound: float

    def to_dict(self) -> dict[str, Any]:
        return {"within": self.within, "min_lower_bound": self.min_lower_bound}


@dataclass(frozen=True)
class Policy:
    """Thresholds of the gate; every field can be overridden in rubrics/policy.yaml or a rubric's gate:."""

    min_items: int = 50                    # items with a consensus label and a judge score
    min_raters_per_item: int = 2
    min_multi_rated_share: float = 0.30    # share of those items with >= min_raters_per_item labels
    agreement_metric: str = "krippendorff_alpha_ordinal"
    min_agreement_lower: float = 0.667     # lower bound of the interval
    alt_test_min_raters: int = 3           # raters qualifying for the alternative-annotator test
    human_margin: float = 0.05             # judge-human agreement may trail human-human by this much
    max_self_preference: float = 0.10      # same-model and same-family effects, in both directions
    min_class_items: int = 10              # consensus passes (for TPR) and fails (for TNR) needed
    min_category_items: int = 10           # a category smaller than this gets no agreement interval
    min_tpr_lower: float = 0.5             # lower bounds: the judge is shown to pass most passes ...
    min_tnr_lower: float = 0.5             # ... and to catch most fails
    max_flip_rate: float = 0.10
    max_unscored_share: float = 0.02
    drift_min_p: float = 0.01
    drift_max_agreement_drop: float = 0.05
    max_probe_shift: float = 0.10          # stress probes: mean score shift, in scale units, in either direction
    probe_check: str = "warn"              # "warn" (default), "fail" (part of the gate) or "off"
    revalidate_after: int = 90             # days an approval holds in production before `check` fails on it
    selective: SelectivePolicy | None = None  # a guarantee on the items a selective judge keeps (gate check)
    # the raters report names a reviewer whose alpha with the others' consensus lies wholly below this bound
    # (None: min_agreement_lower, the bound a judge is held to)
    min_rater_agreement: float | None = None
    # ... and a reviewer whose exact accuracy on gold items lies wholly below this (None: DEFAULT_GOLD_ACCURACY)
    min_gold_accuracy: float | None = None
    locates_failures: LocatesFailuresPolicy | None = None  # failure attribution must be shown (gate check)

    def __post_init__(self) -> None:
        if isinstance(self.selective, dict):  # read back from a report's or a bundle's JSON
            object.__setattr__(self, "selective", selective_from_dict(self.selective))
        if isinstance(self.locates_failures, dict):
            object.__setattr__(self, "locates_failures", locates_failures_from_dict(self.locates_failures))

    def to_dict(self) -> dict[str, Any]:
        """The policy's JSON; a policy without a selective section writes no ``selective`` key (so the reports and
        bundles of such policies, and their cache keys, are what they were before the section existed)."""
        out = asdict(self)
        out.pop("selective")
        for key in ("min_rater_agreement", "min_gold_accuracy"):
            if out[key] is None:  # unset: the JSON (and cache keys) of policies from before it
                out.pop(key)
        if self.selective is not None:
            out["selective"] = self.selective.to_dict()
        out.pop("locates_failures")  # written only where set, like selective (cache keys stay what they were)
        if self.locates_failures is not None:
            out["locates_failures"] = self.locates_failures.to_dict()
        return out


POLICY_KEYS = tuple(f.name for f in fields(Policy))
PROBE_CHECK_MODES = ("warn", "fail", "off")
#: The metrics the agreement check may bound from below (names of workbench.stats.agreement.METRIC_NAMES).
AGREEMENT_METRICS = ("krippendorff_alpha_ordinal", "cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic",
                     "gwet_ac2_linear", "exact_agreement", "spearman")
#: The range each number of the policy must lie in (inclusive), so a typo such as a negative count is refused.
POLICY_RANGES = {
    "min_items": (1, None), "min_raters_per_item": (1, None), "min_multi_rated_share": (0.0, 1.0),
    "min_agreement_lower": (-1.0, 1.0), "alt_test_min_raters": (1, None), "human_margin": (0.0, 1.0),
    "max_self_preference": (0.0, None), "min_class_items": (1, None), "min_category_items": (1, None),
    "min_tpr_lower": (0.0, 1.0), "min_tnr_lower": (0.0, 1.0), "max_flip_rate": (0.0, 1.0),
    "max_unscored_share": (0.0, 1.0), "drift_min_p": (0.0, 1.0), "drift_max_agreement_drop": (0.0, 2.0),
    "max_probe_shift": (0.0, None), "revalidate_after": (1, None), "min_rater_agreement": (-1.0, 1.0),
    "min_gold_accuracy": (0.0, 1.0),
}
#: Keys whose default is None (unset) and whose value, when set, is a number.
OPTIONAL_NUMBERS = {"min_rater_agreement": 0.667, "min_gold_accuracy": 0.8}
#: The raters report's bound on a reviewer's accuracy on gold items when the policy sets none.
DEFAULT_GOLD_ACCURACY = 0.8


def policy_from_dict(data: dict[str, Any] | None, *, base: Policy | None = None, source: str = "policy",
                     line_of: Callable[[str], int | None] | None = None, prefix: str = "") -> Policy:
    """Apply overrides to a base policy, refusing unknown keys (naming the closest known one) and wrong types.

    ``line_of`` gives the line of a key in ``source`` (for the error); ``prefix`` is where the block sits in its
    file (``gate.`` in a rubric).
    """
    base = base or Policy()
    if data is None:
        return base
    if not isinstance(data, dict):
        raise InputError("the gate policy must be a mapping of overrides", file=source, line=line_of and line_of(""),
                         field=prefix.rstrip(".") or None,
                         fix=f"write keys such as min_items: 80 (known: {', '.join(POLICY_KEYS)})")
    changes = {}
    for key, value in data.items():
        line = line_of(key) if line_of and isinstance(key, str) else None
        field = f"{prefix}{key}"
        if key not in POLICY_KEYS:
            raise unknown_key(key, POLICY_KEYS, what="gate key", file=source, line=line, field=field)
        if key == "selective":
            changes[key] = selective_from_dict(value, source=source, line=line, field=field)
            continue
        if key == "locates_failures":
            changes[key] = locates_failures_from_dict(value, source=source, line=line, field=field)
            continue
        default = getattr(base, key)
        if key in OPTIONAL_NUMBERS:
            if value is None:
                changes[key] = None
                continue
            default = OPTIONAL_NUMBERS[key]
        if isinstance(default, str):
            ok = isinstance(value, str)
        elif isinstance(default, int) and not isinstance(default, bool):
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok:
            wanted = {str: "text", int: "a whole number", float: "a number"}[type(default)]
            raise InputError(f"must be {wanted}, got {_shown_value(value)}", file=source, line=line,
                             field=field, fix=f"write e.g. {key}: {default}")
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"must be a finite number, got {value!r}", file=source, line=line, field=field,
                             fix=f"write e.g. {key}: {default}")
        low, high = POLICY_RANGES.get(key, (None, None))
        if (low is not None and value < low) or (high is not None and value > high):
            span = f"at least {low}" if high is None else f"between {low} and {high}"
            raise InputError(f"must be {span}, got {value!r}", file=source, line=line, field=field,
                             fix=f"write e.g. {key}: {default}")
        if key == "probe_check" and value not in PROBE_CHECK_MODES:
            raise InputError(f"must be one of {', '.join(PROBE_CHECK_MODES)}, got {_shown_value(value)}", file=source,
                             line=line, field=field,
                             fix="write e.g. probe_check: fail to make the stress probes part of the gate")
        if key == "agreement_metric" and value not in AGREEMENT_METRICS:
            raise InputError(f"must be one of {', '.join(AGREEMENT_METRICS)}, got {_shown_value(value)}", file=source,
                             line=line, field=field, fix=f"write e.g. {key}: {default}")
        changes[key] = float(value) if isinstance(default, float) else value
    return replace(base, **changes)


SELECTIVE_KEYS = ("target_agreement", "risk", "cascade")
_SELECTIVE_FIX = "write e.g. selective: {target_agreement: 0.9, risk: 0.05} (docs/selective.md)"


def selective_from_dict(data: Any, *, source: str = "policy", line: int | None = None,
                        field: str = "selective") -> SelectivePolicy | None:
    """A ``selective:`` section checked key by key (null: none): the target agreement A in (0, 1), the risk D in
    (0, 0.5], and an optional cascade of two or three different judge names; a sentence naming the field and the
    value otherwise."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise InputError(f"must be a mapping, got {_shown_value(data)}", file=source, line=line, field=field,
                         fix=_SELECTIVE_FIX)
    for key in data:
        if key not in SELECTIVE_KEYS:
            raise unknown_key(key, SELECTIVE_KEYS, what="selective key", file=source, line=line,
                              field=f"{field}.{key}")
    numbers = {}
    for key, low, high, closed in (("target_agreement", 0.0, 1.0, False), ("risk", 0.0, 0.5, True)):
        value = data.get(key)
        ok = (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
              and low < value and (value <= high if closed else value < high))
        if not ok:
            span = "in (0, 0.5]" if closed else "strictly between 0 and 1"
            raise InputError(f"must be a number {span}, got {'nothing' if value is None else _shown_value(value)}",
                             file=source, line=line, field=f"{field}.{key}", fix=_SELECTIVE_FIX)
        numbers[key] = float(value)
    cascade = data.get("cascade")
    if cascade is not None:
        if (not isinstance(cascade, list) or not 2 <= len(cascade) <= 3
                or not all(isinstance(j, str) and j.strip() for j in cascade) or len(set(cascade)) != len(cascade)):
            raise InputError(f"must be a list of two or three different judge names, got {_shown_value(cascade)}",
                             file=source, line=line, field=f"{field}.cascade",
                             fix="write e.g. cascade: [cheap-judge, strong-judge]")
    return SelectivePolicy(numbers["target_agreement"], numbers["risk"], tuple(cascade or ()))


_LOCATES_FIX = "write e.g. locates_failures: {within: 3, min_lower_bound: 0.5} (docs/steps.md)"


def locates_failures_from_dict(data: Any, *, source: str = "policy", line: int | None = None,
                               field: str = "locates_failures") -> LocatesFailuresPolicy | None:
    """A ``locates_failures:`` section checked key by key (null: none): ``within`` a whole number of steps from 0,
    ``min_lower_bound`` a share strictly between 0 and 1; a sentence naming the field and the value otherwise."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise InputError(f"must be a mapping, got {_shown_value(data)}", file=source, line=line, field=field,
                         fix=_LOCATES_FIX)
    for key in data:
        if key not in ("within", "min_lower_bound"):
            raise unknown_key(key, ("within", "min_lower_bound"), what="locates_failures key", file=source,
                              line=line, field=f"{field}.{key}")
    within, bound = data.get("within"), data.get("min_lower_bound")
    if not isinstance(within, int) or isinstance(within, bool) or not 0 <= within <= 1000:
        raise InputError(f"must be a whole number of steps from 0, got {'nothing' if within is None else _shown_value(within)}",
                         file=source, line=line, field=f"{field}.within", fix=_LOCATES_FIX)
    if (not isinstance(bound, (int, float)) or isinstance(bound, bool) or not math.isfinite(bound)
            or not 0 < bound < 1):
        raise InputError(f"must be a share strictly between 0 and 1, got "
                         f"{'nothing' if bound is None else _shown_value(bound)}", file=source, line=line,
                         field=f"{field}.min_lower_bound", fix=_LOCATES_FIX)
    return LocatesFailuresPolicy(within, float(bound))


def _shown_value(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def load_policy(path: str | Path | None, rubric_gate: dict[str, Any] | None = None) -> Policy:
    """Defaults, then rubrics/policy.yaml (if present), then the rubric's own gate: overrides.

    policy.yaml is read through the one input edge (``workbench.core.inputs``): its size limit first, then the strict
    YAML loader (no aliases, duplicate keys or .nan), then the keys and values, each refused at its line.
    """
    policy = Policy()
    if path is not None and Path(path).exists():
        name = Path(path).name
        data, root = load_yaml(read_utf8(path, kind="policy"), file=name)
        if data is not None:  # an empty file (or only comments) changes nothing
            if not isinstance(data, dict):
                raise InputError(f"the policy must be a mapping of gate keys, got {_kind(data)}", file=name,
                                 line=root.start_mark.line + 1 if root is not None else None,
                                 fix="write one key per line, such as min_items: 80")
            policy = policy_from_dict(data, base=policy, source=name, line_of=_key_lines(root))
    return policy_from_dict(rubric_gate, base=policy, source="rubric gate:")


def _kind(value: Any) -> str:
    return {list: "a list", str: "text", int: "a number", float: "a number", bool: "a boolean"}.get(
        type(value), type(value).__name__)


def _key_lines(root: Any) -> Callable[[str], int | None]:
    """The line of each top-level key of a YAML mapping node."""
    lines = {}
    for key_node, _ in getattr(root, "value", None) or ():
        if hasattr(key_node, "value") and isinstance(key_node.value, str):
            lines.setdefault(key_node.value, key_node.start_mark.line + 1)
    return lambda key: lines.get(key)

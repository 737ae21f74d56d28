"""Rubric YAML: loading and validation into a ``Rubric`` (no storage here).

Errors name the file, the line of the offending key and the field path. A
judge's model is read by ``models.parse_model``, and its provider prefix must
be one the judge registry knows (``workbench.judges.registry``, which imports
no provider or SDK until a judge is run).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from workbench.core.errors import InputError, ModelNameError
from workbench.core.policy import policy_from_dict
from workbench.core.inputs import MAX_REPEATS, closest, unknown_key
from workbench.core.import_maps import ImportMaps
from workbench.judges.registry import provider_entry, provider_names
from workbench.core.models import Criterion, JudgeSpec, Rubric, parse_model
from workbench.core.names import check_name
from workbench.core.scale import DEFAULT_SCALE, Scale, ScaleLevel
from workbench.core.strict_yaml import load_yaml, read_utf8

RUBRIC_KEYS = ("name", "title", "description", "scale", "pass_threshold", "criteria", "instructions", "examples",
               "gate", "judges", "import_maps")
JUDGE_KEYS = ("id", "model", "family", "mode", "temperature", "max_tokens", "max_turns", "repeats", "see_reference")
#: The largest value of a judge's counts: more repeats than MAX_REPEATS measure no more noise and only cost, and a
#: run plans every (item, repeat) before it sends anything.
JUDGE_LIMITS = {"max_tokens": 1_000_000, "max_turns": 1_000, "repeats": MAX_REPEATS}
LEVEL_KEYS = ("value", "label", "description")
MODES = ("single", "agentic")


class _Ctx:
    def __init__(self, file: str, root: yaml.Node | None):
        self.file, self.root = file, root

    def line(self, path: tuple) -> int | None:
        node = self.root
        for key in path:
            if isinstance(node, yaml.MappingNode):
                node = next((v for k, v in node.value if k.value == key), None)
            elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
                node = node.value[key]
            else:
                node = None
            if node is None:
                break
        return node.start_mark.line + 1 if node is not None else None

    def name(self, path: tuple, value: str, what: str) -> str:
        """A name that becomes a path (rubric, judge id), checked by the one rule of workbench.core.names."""
        return check_name(value, what, file=self.file, line=self.line(path), field=self._field(path))

    def _field(self, path: tuple) -> str | None:
        return ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "[") or None

    def error(self, path: tuple, message: str, fix: str) -> InputError:
        return InputError(message, file=self.file, line=self.line(path), field=self._field(path), fix=fix)

    def unknown(self, path: tuple, key: Any, known: tuple[str, ...], what: str) -> InputError:
        return unknown_key(key, known, what=what, file=self.file, line=self.line(path), field=self._field(path))


def load_rubric(path: str | Path) -> Rubric:
    path = Path(path)
    return parse_rubric(read_utf8(path, kind="rubric"), file=path.name, default_name=path.stem)


def parse_rubric(text: str, *, file: str = "<rubric>", default_name: str | None = None) -> Rubric:
    """Refuses what is not plain data (anchors, duplicate keys, .nan, tags) at its line: see strict_yaml."""
    data, root = load_yaml(text, file=file)
    ctx = _Ctx(file, root)
    if not isinstance(data, dict):
        raise ctx.error((), "a rubric must be a YAML mapping", "start the file with 'name: ...'")
    return rubric_from_dict(data, ctx=ctx, default_name=default_name)


def rubric_from_dict(data: dict[str, Any], *, ctx: _Ctx | None = None, default_name: str | None = None) -> Rubric:
    ctx = ctx or _Ctx("<rubric>", None)
    for key in data:
        if key not in RUBRIC_KEYS:
            raise ctx.unknown((key,), key, RUBRIC_KEYS, "key")
    name = data.get("name", default_name)  # a name given empty is refused, not replaced by the file's
    if not isinstance(name, str) or not name.strip():
        raise ctx.error(("name",), "the rubric needs a name", "add 'name: my-rubric'")
    name = ctx.name(("name",), name, "rubric name")
    scale = _scale(data.get("scale"), ctx)
    threshold = data.get("pass_threshold", 0 if 0 in scale.values else scale.values[len(scale.values) // 2])
    if threshold not in scale:
        raise ctx.error(("pass_threshold",), f"{threshold!r} is not a value of the scale {scale.describe()}",
                        "set it to the lowest passing value")
    criteria = []
    if not isinstance(data.get("criteria") or [], list):
        raise ctx.error(("criteria",), "criteria must be a list", "write each as - {id: correctness, description: ...}")
    for n, c in enumerate(data.get("criteria") or []):
        if not isinstance(c, dict) or not isinstance(c.get("id"), str) or not isinstance(c.get("description"), str):
            raise ctx.error(("criteria", n), "a criterion needs a string 'id' and 'description'",
                            "write it like {id: correctness, description: ...}")
        criteria.append(Criterion(c["id"], c["description"]))
    examples = data.get("examples") or []
    if not isinstance(examples, list) or not all(isinstance(e, dict) for e in examples):
        raise ctx.error(("examples",), "examples must be a list of mappings", "write {item: ..., score: ..., rationale: ...}")
    for n, e in enumerate(examples):
        if e.get("score") not in scale:
            raise ctx.error(("examples", n, "score"), f"{e.get('score')!r} is not on the scale {scale.describe()}",
                            "use a value of the scale")
    gate = data.get("gate") or {}
    if not isinstance(gate, dict):
        raise ctx.error(("gate",), "gate must be a mapping of policy overrides", "write e.g. gate: {min_items: 80}")
    # the gate block is checked here, at its lines, by the same rule as rubrics/policy.yaml (not first at calibrate)
    policy_from_dict(gate, source=ctx.file, line_of=lambda key: ctx.line(("gate", key)), prefix="gate.")
    judges = []
    seen: set[str] = set()
    if not isinstance(data.get("judges") or [], list):
        raise ctx.error(("judges",), "judges must be a list of judges", "write each judge as - {id: ..., model: ...}")
    for n, j in enumerate(data.get("judges") or []):
        spec = _judge(j, ctx, n)
        if spec.id in seen:
            raise ctx.error(("judges", n, "id"), f"judge id '{spec.id}' is declared twice", "give each judge its own id")
        seen.add(spec.id)
        judges.append(spec)
    for key in ("title", "description", "instructions"):
        if not isinstance(data.get(key, ""), str):
            raise ctx.error((key,), f"{key} must be text", "quote it or use a YAML block (|)")
    import_maps = data.get("import_maps") or {}
    try:  # `workbench import --from` maps other tools' values onto this scale (workbench/core/import_maps.py)
        ImportMaps.parse(import_maps, scale, ctx.file)
    except InputError as e:
        raise ctx.error(("import_maps", e.field) if e.field else ("import_maps",), e.problem,
                        e.fix or "write e.g. import_maps: {correctness: {categorical: {C: 1, I: -1}}}") from None
    return Rubric(name=name, title=data.get("title", ""), description=data.get("description", ""),
                  scale=scale, pass_threshold=threshold, criteria=tuple(criteria),
                  instructions=data.get("instructions", ""), examples=tuple(examples), gate=gate,
                  judges=tuple(judges), import_maps=import_maps)


def _scale(raw: Any, ctx: _Ctx) -> Scale:
    if raw is None:
        return DEFAULT_SCALE
    if not isinstance(raw, list) or len(raw) < 2:
        raise ctx.error(("scale",), "the scale must be a list of at least two levels",
                        "write levels like {value: -1, label: fail, description: ...}")
    levels = []
    for n, lv in enumerate(raw):
        for key in lv if isinstance(lv, dict) else ():
            if key not in LEVEL_KEYS:
                raise ctx.unknown(("scale", n, key), key, LEVEL_KEYS, "scale key")
        if not isinstance(lv, dict) or isinstance(lv.get("value"), bool) or not isinstance(lv.get("value"), int) \
                or not isinstance(lv.get("label"), str):
            raise ctx.error(("scale", n), "a level needs an integer 'value' and a 'label'",
                            "write it like {value: 0, label: competent pass, description: ...}")
        if not isinstance(lv.get("description", ""), str):
            raise ctx.error(("scale", n, "description"), "a level's description must be text",
                            "quote it or use a YAML block (|)")
        levels.append(ScaleLevel(lv["value"], lv["label"], lv.get("description", "")))
    try:
        return Scale(tuple(levels))
    except ValueError as e:
        raise ctx.error(("scale",), str(e), "list distinct integer values, lowest first") from None


#: A Python grader: ``module.path:function``, each part an identifier.
PYTHON_TARGET = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")


def _judge(j: Any, ctx: _Ctx, n: int) -> JudgeSpec:
    if not isinstance(j, dict):
        raise ctx.error(("judges", n), "a judge must be a mapping", "write {id: ..., model: provider/model}")
    for key in j:
        if key not in JUDGE_KEYS:
            raise ctx.unknown(("judges", n, key), key, JUDGE_KEYS, "judge key")
    if not isinstance(j.get("id"), str) or not j["id"].strip():
        raise ctx.error(("judges", n, "id"), "a judge needs an 'id'", "add id: my-judge")
    judge_id = ctx.name(("judges", n, "id"), j["id"], "judge id")
    model = j.get("model")
    if model is None:
        raise ctx.error(("judges", n), "a judge needs a 'model'", "add model: <provider>/<model>, e.g. openai/gpt-4o")
    try:
        name = parse_model(model)
    except ModelNameError as exc:
        if exc.missing != "provider":
            raise ctx.error(("judges", n, "model"), exc.problem, exc.fix) from None
        name = None
    provider = provider_entry(name.provider) if name is not None else None
    if provider is None:
        best = closest(name.provider, provider_names()) if name is not None else None
        raise ctx.error(("judges", n, "model"), f"model {model!r} has no known provider prefix",
                        (f"did you mean {best}/{name.model}? (" if best else "")
                        + f"write '<provider>/<model>' with provider one of {', '.join(provider_names())}"
                        + (")" if best else ""))
    if name.provider == "python" and not PYTHON_TARGET.fullmatch(name.model):
        raise ctx.error(("judges", n, "model"), f"model {model!r} does not name a function",
                        "write python/<module>:<function>, e.g. python/my_graders:tests_pass")
    mode = j.get("mode", "single")
    if mode not in MODES:
        raise ctx.error(("judges", n, "mode"), f"mode {mode!r} is not known", "use single or agentic")
    for key, most in JUDGE_LIMITS.items():
        v = j.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ctx.error(("judges", n, key), f"{key} must be a positive integer, got {v!r}", "write a whole number")
        if v is not None and v > most:
            raise ctx.error(("judges", n, key), f"{key} is {v}, above the limit of {most:,}",
                            f"write at most {key}: {most}")
    t = j.get("temperature")
    if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 2):
        raise ctx.error(("judges", n, "temperature"), f"temperature must be between 0 and 2, got {t!r}",
                        "write e.g. temperature: 0")
    # The family of a first-party model is its provider's (as registered); an OpenAI-compatible server's
    # must be declared.
    family = j.get("family") or provider.family
    if family is not None and not isinstance(family, str):
        raise ctx.error(("judges", n, "family"), f"family must be text, got {family!r}", "write e.g. family: openai")
    if not isinstance(j.get("see_reference", False), bool):
        raise ctx.error(("judges", n, "see_reference"), f"see_reference must be true or false, got "
                        f"{j['see_reference']!r}", "write see_reference: true")
    return JudgeSpec(id=judge_id, model=model, family=family, mode=mode,
                     temperature=float(t) if t is not None else None, max_tokens=j.get("max_tokens"),
                     max_turns=j.get("max_turns"), repeats=j.get("repeats", 1),
                     see_reference=bool(j.get("see_reference", False)))


def dump_rubric(rubric: Rubric) -> str:
    return yaml.safe_dump(rubric.content(), sort_keys=False, allow_unicode=True, width=100)

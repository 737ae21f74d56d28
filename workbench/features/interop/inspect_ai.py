"""Inspect AI eval logs (``.eval`` and ``.json``), read with ``inspect_ai.log``.

- each sample is an item: its input, its target as the reference, its ``messages`` as the trajectory and
  ``output.completion`` as the output; the eval's model is the producer and the task the category;
- each scorer's ``Score`` is a judgment of the judge named by the scorer and its grader model (the scorer's
  ``model`` option, else ``eval.model_roles["grader"]``, else the eval's model); the original value when humans
  edited it (``Score.history[0]``); epochs are repeats (epoch 1 is repeat 0); a NaN score is unscored with its
  ``reason``; a dict value is one judgment per key (``scorer.key``); a log of two or more scorers is imported
  one scorer at a time (``scorer``) or each scorer as its own judge (``judge_per_scorer``), never by default;
- the log is the judgments' source run (its ``eval_id``): a second log of the task is a second run of the judge
  on the same items, since the eval's run-specific ids stay out of the items;
- each human edit in ``Score.history`` (an edit with ``provenance``) is a label by ``provenance.author``: the
  author's latest edit of that score, with the edit's reason as the rationale.

Record N is the N-th sample of the log.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workbench.features.interop.base import (SourceItem, SourceJudgment, SourceLabel, SourceRecord, SourceError,
    producer_of, require, text_of)

SOURCE = "inspect"


class InspectAdapter:
    source = SOURCE
    read_options = ("scorer", "judge_per_scorer")  # the import options this source takes (Adapter.read_options)

    def __init__(self) -> None:
        self.log = require("inspect_ai.log")

    def read(self, uri: str, *, scorer: str | None = None, judge_per_scorer: bool = False,
             **_options: Any) -> Iterator[SourceRecord]:
        """The log's records; ``scorer`` keeps one scorer's scores, ``judge_per_scorer`` keeps all of them (each
        scorer its own judge); with neither, a log of two or more scorers is refused before anything is read."""
        try:
            header = self.log.read_eval_log(uri, header_only=True)
        except FileNotFoundError:
            raise SourceError(SOURCE, None, f"there is no log at {uri}", fix="give the path of an .eval or .json log")
        except Exception as e:  # noqa: BLE001 - inspect raises many kinds for a file that is not a log
            raise SourceError(SOURCE, None, f"{uri} is not an Inspect eval log ({type(e).__name__}: {e})",
                              fix="give an .eval or .json file written by 'inspect eval'") from None
        spec = header.eval
        producer = producer_of(spec.model)
        graders = _graders(spec)
        log_name = Path(uri).name
        scorers = [s.name for s in spec.scorers or []]
        _check_scorers(log_name, scorers, scorer, judge_per_scorer)
        run = spec.eval_id or spec.task_id or None  # one eval of the task: the judgments' run
        seen: set[str] = set()  # a sample's epochs are one item (samples are written as they finish, in any order)
        for n, sample in self._samples(uri, log_name):
            item_id = str(sample.id)
            if item_id not in seen:
                seen.add(item_id)
                yield SourceItem(n, _item(sample, spec, producer),
                                 run_metadata={"inspect": {"task_id": spec.task_id}} if spec.task_id else None)
            scores = sample.scores or {}
            if not scorers and scorer is None:  # a log whose header lists no scorers: its samples name them
                _check_scorers(log_name, list(scores), None, judge_per_scorer, record=n)
            for name, score in scores.items():
                if scorer is not None and name != scorer:
                    continue
                yield from _judgments(n, item_id, sample.epoch - 1, name, score, graders.get(name, graders[None]),
                                      run)
                yield from _labels(n, item_id, name, score)


    def _samples(self, uri: str, log_name: str) -> Iterator[tuple[int, Any]]:
        """The log's samples, numbered; where Inspect cannot read on, the import is refused at the first sample not
        read (a .json log is read whole: its record 1, with Inspect's words saying which sample is wrong)."""
        samples = iter(self.log.read_eval_log_samples(uri, all_samples_required=False))
        for n in itertools.count(1):
            try:
                sample = next(samples)
            except StopIteration:
                return
            except Exception as e:  # noqa: BLE001 - inspect raises many kinds (pydantic's, its own) for a bad sample
                problem = " ".join(str(e).split())
                raise SourceError(f"{SOURCE} {log_name}", n, "Inspect cannot read the log from this sample on ("
                                  f"{type(e).__name__}: {problem[:200]})",
                                  fix="give the log as 'inspect eval' wrote it") from None
            yield n, sample


def _check_scorers(log_name: str, scorers: list[str], scorer: str | None, judge_per_scorer: bool, *,
                   record: int | None = None) -> None:
    """Refuse a scorer the log lacks, and two or more scorers when neither option says what to do with them."""
    listed = ", ".join(f"'{s}'" for s in scorers)
    if scorer is not None:
        if scorers and scorer not in scorers:
            raise SourceError(f"{SOURCE} {log_name}", record, f"the log has no scorer '{scorer}' (its scorers: "
                              f"{listed})", fix="give one of them to --scorer")
    elif not judge_per_scorer and len(scorers) >= 2:
        raise SourceError(f"{SOURCE} {log_name}", record, f"the log has {len(scorers)} scorers ({listed})",
                          fix="import one with --scorer NAME (e.g. --scorer " + scorers[0] + "), or each as its own "
                              "judge with --judge-per-scorer")


def _graders(spec: Any) -> dict[str | None, str | None]:
    """scorer name -> the grader model: the scorer's own model option, else the grader role, else the eval's model."""
    roles = spec.model_roles or {}
    role = roles.get("grader")
    if isinstance(role, list):
        default = "+".join(r.model for r in role)
    else:
        default = role.model if role is not None else spec.model
    out: dict[str | None, str | None] = {None: default}
    for scorer in spec.scorers or []:
        out[scorer.name] = _model_name((scorer.options or {}).get("model")) or default
    return out


def _model_name(option: Any) -> str | None:
    """A scorer's ``model`` option as the log records it: a name, a serialised Model ({"model": name, ...}), or a
    list of them (a panel of graders)."""
    if isinstance(option, str):
        return option
    if isinstance(option, dict) and isinstance(model := option.get("model"), str):
        return model
    if isinstance(option, list):
        names = [n for n in map(_model_name, option) if n]
        return "+".join(names) or None
    return None


def _item(sample: Any, spec: Any, producer: dict | None) -> dict:
    target = sample.target
    reference = "\n".join(target) if isinstance(target, list) else (target or None)
    steps = [_step(m) for m in sample.messages or []]
    item: dict[str, Any] = {
        "id": str(sample.id), "task_id": str(sample.id), "category": spec.task,
        "input": sample.input if isinstance(sample.input, str) else "\n".join(text_of(m.content) for m in sample.input),
        "output": sample.output.completion if sample.output is not None else None,
        "trajectory": steps or None, "reference": reference,
        # the eval's own ids (task_id, eval_id) belong to the run, not the item: a second eval of the task grades
        # the same items
        "metadata": {"inspect": {"task": spec.task, "sample_id": sample.id}},
    }
    if producer:
        item["producer"] = producer
    return {k: v for k, v in item.items() if v is not None}


def _step(message: Any) -> dict:
    step: dict[str, Any] = {"role": message.role, "content": text_of(message.content)}
    calls = getattr(message, "tool_calls", None)
    if calls:
        step["tool_calls"] = [{"name": c.function, "arguments": c.arguments} for c in calls]
    if getattr(message, "function", None):  # a tool result names the tool it answers
        step["name"] = message.function
    return step


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _judgments(n: int, item_id: str, repeat: int, name: str, score: Any, model: str | None,
               run: str | None) -> Iterator[SourceRecord]:
    history = score.history or []
    if history and history[0].provenance is not None:
        return  # the score was created by a human edit: there is no scorer verdict
    original = history[0] if history else score
    value = original.value
    explanation = original.explanation
    reason = original.reason
    values = value.items() if isinstance(value, dict) else [(None, value)]
    for key, v in values:
        judge = name if key is None else f"{name}.{key}"
        field = f"scores.{name}.value" + (f".{key}" if key is not None else "")
        unscored = v is None or _is_nan(v)
        yield SourceJudgment(n, item_id, judge=judge, name=judge, value=None if unscored else v, model=model,
                             field=field, repeat=repeat, rationale=explanation, source_run=run,
                             unscored_reason=(str(reason) if reason else "the scorer gave no value") if unscored
                             else None, carried_map=_carried_map(original) if key is None else None)


def _carried_map(score: Any) -> dict | None:
    """The scale a scorer exported by the workbench declares in its Score metadata (``workbench_scale``)."""
    scale = (getattr(score, "metadata", None) or {}).get("workbench_scale")
    return scale.get("import_map") if isinstance(scale, dict) and isinstance(scale.get("import_map"), dict) else None


def _labels(n: int, item_id: str, name: str, score: Any) -> Iterator[SourceRecord]:
    latest: dict[str, tuple[int, Any]] = {}
    for i, edit in enumerate(score.history or []):
        if edit.provenance is not None and edit.value != "UNCHANGED":
            latest[edit.provenance.author] = (i, edit)
    for author, (i, edit) in latest.items():
        values = edit.value.items() if isinstance(edit.value, dict) else [(None, edit.value)]
        for key, v in values:
            label_name = name if key is None else f"{name}.{key}"
            yield SourceLabel(n, item_id, rater=author, name=label_name, value=v, field=f"scores.{name}.history[{i}]",
                              rationale=edit.provenance.reason,
                              created_at=edit.provenance.timestamp.isoformat() if edit.provenance.timestamp else None)

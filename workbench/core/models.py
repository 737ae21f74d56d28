"""Data classes of the domain (stdlib only): items, labels, rubrics, judges, judgments.

Everything above the store speaks these types; the store maps them to rows.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from workbench.core.errors import ModelNameError, NotFound
from workbench.core.hashing import sha256_hex
from workbench.core.scale import DEFAULT_SCALE, Scale

class Role(StrEnum):
    """What a rater may do: label (reviewer), also adjudicate, run, calibrate and export (lead), also manage (admin).

    The one list of roles: the CLI's choices, the UI's page access, the services' checks and the schema's CHECK.
    """

    REVIEWER = "reviewer"
    LEAD = "lead"
    ADMIN = "admin"


ITEM_CONTENT_FIELDS = ("task_id", "category", "input", "output", "trajectory", "producer", "reference", "metadata")
#: Providers whose models are named `<provider>/<service>/<model>` (DESIGN 4: OpenAI-compatible servers; and
#: `imported/<tool>/<model>`, a judge whose verdicts were imported from another eval tool).
SERVICE_PROVIDERS = ("openai-api", "imported")


@dataclass(frozen=True)
class ModelName:
    """A judge's model name split once: its provider prefix, the service (openai-api only) and the bare model."""

    provider: str
    model: str  # the bare model, as a producer's model is named: may itself contain '/'
    service: str | None = None

    @property
    def target(self) -> str:
        """What follows the provider prefix (the service included): what the provider is created with."""
        return self.model if self.service is None else f"{self.service}/{self.model}"

    def __str__(self) -> str:
        return f"{self.provider}/{self.target}"


def parse_model(model: str) -> ModelName:
    """The one reading of a judge's model name: `<provider>/<model>` or `openai-api/<service>/<model>`.

    Which providers exist is the judge registry's business (`workbench.judges.registry`); this
    only splits the name (an empty model is left for the provider to refuse). Raises
    ModelNameError for a name without a provider prefix, or an `openai-api/` name without a service.

    >>> parse_model("openai/gpt-4o")
    ModelName(provider='openai', model='gpt-4o', service=None)
    >>> parse_model("openai-api/vllm/meta-llama/Llama-3-8B")
    ModelName(provider='openai-api', model='meta-llama/Llama-3-8B', service='vllm')
    >>> parse_model("python/workbench.features.demo.graders:test_results").model
    'workbench.features.demo.graders:test_results'
    """
    provider, sep, rest = model.partition("/") if isinstance(model, str) else ("", "", "")
    if not sep or not provider.strip():
        raise ModelNameError(f"model {model!r} has no provider prefix",
                             "write '<provider>/<model>' (e.g. anthropic/claude-sonnet-4-5)", missing="provider")
    if provider in SERVICE_PROVIDERS:
        service, sep, bare = rest.partition("/")
        if not sep or not service:
            raise ModelNameError(f"model {model!r} does not name a service", f"write '{provider}/<service>/<model>'",
                                 missing="service")
        return ModelName(provider, bare, service)
    return ModelName(provider, rest)


@dataclass(frozen=True)
class Producer:
    model: str
    family: str


@dataclass(frozen=True)
class GoldenSetRecord:
    """A golden set as the store holds it: ``id`` is what every other row of it points to."""

    id: int
    name: str
    overlap: int
    is_demo: int
    created_at: str


@dataclass(frozen=True)
class Item:
    """One thing to grade: an answer, or an agent trajectory with its final output."""

    id: str
    input: str
    task_id: str | None = None
    category: str = "default"
    output: str | None = None
    trajectory: list[dict] | None = None
    producer: Producer | None = None
    reference: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def cluster(self) -> str:
        """The bootstrap resampling unit: items of one task move together."""
        return self.task_id or self.id

    def content(self) -> dict[str, Any]:
        """The fields whose change makes a different item (and a new judgment)."""
        d = self.to_dict()
        d.pop("id")
        return d

    @property
    def content_hash(self) -> str:
        return sha256_hex(self.content())

    def to_dict(self) -> dict[str, Any]:
        """The file form of DESIGN section 2; optional fields left out when empty."""
        d: dict[str, Any] = {"id": self.id, "task_id": self.task_id or self.id, "category": self.category,
                             "input": self.input}
        if self.output is not None:
            d["output"] = self.output
        if self.trajectory is not None:
            d["trajectory"] = self.trajectory
        if self.producer is not None:
            d["producer"] = asdict(self.producer)
        if self.reference is not None:
            d["reference"] = self.reference
        if self.metadata:
            d["metadata"] = self.metadata
        return d


def derived_item_id(content: dict[str, Any]) -> str:
    """DESIGN 2: first 16 hex of sha256 of the canonical JSON of the content fields."""
    return sha256_hex({k: content[k] for k in ITEM_CONTENT_FIELDS if k in content and content[k] is not None})[:16]


@dataclass(frozen=True)
class Label:
    item_id: str
    rater: str
    score: int
    rationale: str | None = None
    created_at: str | None = None
    inclusion_probability: float | None = None  # recorded by the active queue when the item was served
    step: int | None = None  # the decisive error step of a failing trajectory, 0-based (features/steps)
    agent: str | None = None  # who took that step


@dataclass(frozen=True)
class Criterion:
    id: str
    description: str


@dataclass(frozen=True)
class JudgeSpec:
    """A candidate judge declared in a rubric: a model, a mode and its call settings."""

    id: str
    model: str  # "<provider>/<model>", read by parse_model
    family: str | None = None
    mode: str = "single"  # single | agentic
    temperature: float | None = None
    max_tokens: int | None = None
    max_turns: int | None = None
    repeats: int = 1
    see_reference: bool = False

    @property
    def provider(self) -> str:
        return parse_model(self.model).provider

    @property
    def model_name(self) -> str:
        """The bare model: 'openai/gpt-4o' -> 'gpt-4o'; 'openai-api/vllm/llama-3' -> 'llama-3'."""
        return parse_model(self.model).model

    def config(self) -> dict[str, Any]:
        """What changes the judge's answers (repeats does not: it is how often we ask)."""
        d = asdict(self)
        d.pop("repeats")
        return d

    def config_hash(self, rubric_hash: str) -> str:
        return sha256_hex({"rubric": rubric_hash, "judge": self.config()})


@dataclass(frozen=True)
class Rubric:
    name: str
    title: str = ""
    description: str = ""
    scale: Scale = DEFAULT_SCALE
    pass_threshold: int = 0
    criteria: tuple[Criterion, ...] = ()
    instructions: str = ""
    examples: tuple[dict, ...] = ()
    gate: dict[str, Any] = field(default_factory=dict)
    judges: tuple[JudgeSpec, ...] = ()
    import_maps: dict[str, Any] = field(default_factory=dict)  # workbench import --from: source values -> scale

    def content(self) -> dict[str, Any]:
        content = {
            "name": self.name, "title": self.title, "description": self.description,
            "scale": self.scale.to_dict(), "pass_threshold": self.pass_threshold,
            "criteria": [asdict(c) for c in self.criteria], "instructions": self.instructions,
            "examples": list(self.examples), "gate": self.gate,
            "judges": [{k: v for k, v in asdict(j).items() if v is not None} for j in self.judges],
        }
        if self.import_maps:  # only when given: a rubric without them keeps its hash (its version)
            content["import_maps"] = self.import_maps
        return content

    @property
    def content_hash(self) -> str:
        return sha256_hex(self.content())

    def judge(self, judge_id: str) -> JudgeSpec:
        for j in self.judges:
            if j.id == judge_id:
                return j
        from workbench.core.inputs import did_you_mean

        known = ", ".join(j.id for j in self.judges) or "none"
        raise NotFound(f"rubric '{self.name}' declares no judge '{judge_id}' (declared: {known}); "
                       + did_you_mean(judge_id, [j.id for j in self.judges], "add it under judges: in the rubric YAML"))

    def is_pass(self, score: int) -> bool:
        return score >= self.pass_threshold


@dataclass(frozen=True)
class Judgment:
    """One verdict of a judge on an item (score None means unscored, with a reason)."""

    item_id: str
    score: int | None
    repeat: int = 0
    unscored_reason: str | None = None
    rationale: str | None = None
    evidence_steps: tuple[int, ...] = ()
    trace: list[dict] | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_cached: int | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    model_version: str | None = None
    created_at: str | None = None
    confidence: float | None = None  # 0..1, the judge's confidence in this verdict (selective judging); None: none
    step: int | None = None  # the step the judge blames for a failure, 0-based (features/steps); None: none named
    agent: str | None = None  # the agent the judge blames

"""YAML for rubrics and bundles: the JSON subset of YAML, refused with the file and line otherwise.

Rubrics and bundles are hashed as canonical JSON, so what they may contain is
what JSON can say. The loader refuses, at the node where it appears: anchors
and aliases (a few hundred bytes of nested aliases expand to gigabytes),
duplicate keys (YAML keeps the last silently), nesting deeper than
``MAX_DEPTH``, numbers that are not finite (``.nan``, ``.inf``), strings with
lone surrogates, and tags outside JSON's types (``!!binary``, ``!!set``, ...).
Unquoted dates stay the text they are.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml

from workbench.core.errors import InputError
from workbench.core.inputs import check_size

MAX_DEPTH = 64
_SURROGATE = re.compile("[\ud800-\udfff]")


class Refused(yaml.MarkedYAMLError):
    """A construct the workbench does not accept, with its position and the fix."""

    def __init__(self, problem: str, mark: yaml.Mark, fix: str):
        super().__init__(problem=problem, problem_mark=mark)
        self.fix = fix


class StrictLoader(yaml.SafeLoader):
    """SafeLoader that checks each node as it is composed, before anything is expanded or hashed."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            name = event.anchor
            raise Refused(f"anchors and aliases ('&{name}', '*{name}') are not allowed", event.start_mark,
                          "write the repeated value out in full")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise Refused(f"the document nests deeper than {MAX_DEPTH} levels", event.start_mark,
                              "flatten the structure")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:  # an unhashable key: SafeConstructor says so with its position
                    continue
                if first is not None:
                    raise Refused(f"the key '{key}' appears twice (first on line {first})", key_node.start_mark,
                                  "keep one of them")
                seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        value = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise Refused(f"'{node.value}' is not a finite number", node.start_mark, "write a finite number")
        return value

    def construct_yaml_str(self, node: yaml.ScalarNode) -> str:
        value = super().construct_yaml_str(node)
        if _SURROGATE.search(value):
            raise Refused("the text holds a lone surrogate escape ('\\ud800' to '\\udfff')", node.start_mark,
                          "write the character itself, or a valid pair of surrogate escapes")
        return value

    def construct_plain_text(self, node: yaml.ScalarNode) -> str:
        return self.construct_scalar(node)

    def refuse_tag(self, node: yaml.Node) -> None:
        tag = node.tag.replace("tag:yaml.org,2002:", "!!")
        tag = tag if len(tag) <= 60 else tag[:57] + "..."
        raise Refused(f"the tag '{tag}' is not allowed", node.start_mark,
                      "write plain text, numbers, lists and mappings only")


StrictLoader.add_constructor("tag:yaml.org,2002:float", StrictLoader.construct_yaml_float)
StrictLoader.add_constructor("tag:yaml.org,2002:str", StrictLoader.construct_yaml_str)
StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", StrictLoader.construct_plain_text)
for _tag in ("binary", "set", "omap", "pairs"):
    StrictLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", StrictLoader.refuse_tag)
StrictLoader.add_constructor(None, StrictLoader.refuse_tag)  # any other tag: !!python/..., !custom, ...


def load_yaml(text: str, *, file: str) -> tuple[Any, yaml.Node | None]:
    """The document and its root node (for line numbers); an InputError naming file, line and fix otherwise."""
    loader = StrictLoader(text)
    try:
        root = loader.get_single_node()
        return (loader.construct_document(root) if root is not None else None), root
    except Refused as e:
        raise InputError(e.problem, file=file, line=e.problem_mark.line + 1, fix=e.fix) from None
    except yaml.reader.ReaderError as e:  # a character YAML does not allow, by its position in the text
        line = text[:e.position].count("\n") + 1 if isinstance(e.position, int) else None
        raise InputError(f"the character {ascii(chr(e.character)) if isinstance(e.character, int) else ''} is not "
                         "allowed in YAML", file=file, line=line, fix="remove it or write it as an escape in a "
                         "double-quoted string") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        raise InputError(f"malformed YAML ({getattr(e, 'problem', None) or e})", file=file,
                         line=mark.line + 1 if mark else None, fix="fix the indentation or quoting there") from None
    finally:
        loader.dispose()


def read_utf8(path: str | Path, *, kind: str = "YAML") -> str:
    """The file's text; an InputError when it is over its kind's size limit (``workbench.core.inputs.LIMITS``, checked
    before reading), is binary, or at the line of the first byte that is not UTF-8."""
    path = Path(path)
    check_size(path, kind)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError("file not found", file=str(path), fix="check the path") from None
    except IsADirectoryError:
        raise InputError("is a folder, not a file", file=str(path), fix="give the path of the file") from None
    if b"\x00" in raw[:8192]:  # a NUL byte is never in YAML text: an image, an archive, a database
        raise InputError("the file holds NUL bytes: it is binary (or UTF-16), not UTF-8 YAML text", file=path.name,
                         fix="give the YAML file itself, saved as UTF-8")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise InputError(f"not valid UTF-8 (byte 0x{raw[e.start]:02x})", file=path.name, line=line,
                         fix="save the file as UTF-8") from None

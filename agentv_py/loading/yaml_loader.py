"""The bounded YAML loader: PyYAML's C loader made safe for data from anywhere. It refuses a file
too deep (MAX_DEPTH), with aliases expanding too far (MAX_ALIAS_VALUES) or recursive, with
duplicate keys, with integers past Python's digit limit or tags that are not JSON, each refusal
located by line and data path (`LoadRefused`)."""

from __future__ import annotations

import functools
import sys
from typing import Any

import yaml

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"

# Bounds on what a YAML file may make the loader build. A dataset is data from anywhere: a small
# file of nested aliases (a "billion laughs") must not expand into billions of values downstream,
# and deep nesting must not overflow a stack (C or Python) anywhere later.
MAX_ALIAS_VALUES = 1_000_000  # values reached through aliases, each counted by what it expands to
MAX_DEPTH = 100  # levels of nested lists and mappings


class LoadRefused(yaml.YAMLError):
    """A YAML file the loader will not build: too deep, aliases expanding too far, a recursive
    alias, a duplicate key, a number Python cannot hold. Located by line and data path."""

    def __init__(self, message: str, line: int | None, parts: list[str | int]) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.parts = parts


class NodeRefused(Exception):
    """Raised while constructing: the node is located (path search) by `get_single_data`."""

    def __init__(self, message: str, node: yaml.Node) -> None:
        super().__init__(message)
        self.message = message
        self.node = node


class _Frame:
    """A list or mapping being composed."""

    __slots__ = ("anchor", "first_lines", "height", "key", "node", "weight")

    def __init__(self, node: yaml.Node, anchor: str | None) -> None:
        self.node = node
        self.anchor = anchor
        self.weight = 1  # values in this node, aliases counted by what they expand to
        self.height = 0  # levels of lists and mappings below this one, aliases counted expanded
        self.key: yaml.Node | None = None  # a mapping's key whose value is being composed
        self.first_lines: dict[tuple[str, str], int] | None = {} if isinstance(node, yaml.MappingNode) else None


def _key_part(node: yaml.Node | None) -> str | int:
    if isinstance(node, yaml.ScalarNode):
        return str(node.value)
    return "?"


def _frames_path(stack: list[_Frame]) -> list[str | int]:
    """The data path of the node being composed under the innermost frame."""
    parts: list[str | int] = []
    for frame in stack:
        if isinstance(frame.node, yaml.SequenceNode):
            parts.append(len(frame.node.value))
        elif frame.key is not None:
            parts.append(_key_part(frame.key))
    return parts


def _node_path(root: yaml.Node, target: yaml.Node) -> list[str | int]:
    """The data path from `root` to `target` (found by identity; each node visited once)."""
    stack: list[tuple[yaml.Node, list[str | int]]] = [(root, [])]
    seen: set[int] = set()
    while stack:
        node, parts = stack.pop()
        if node is target:
            return parts
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, [*parts, i]) for i, child in enumerate(node.value))
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append((key, parts))
                stack.append((value, [*parts, _key_part(key)]))
    return []


def nesting_depth(value: Any) -> int:
    """How many levels of lists and mappings `value` nests (a scalar: 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in node.values())
        elif isinstance(node, list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in node)
    return deepest


def int_digit_limit() -> int:
    """Python's limit on the digits of an integer read from text (0: no limit)."""
    return sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0


def too_many_digits_message(where: str = "") -> str:
    """`where`: " in ..." when the integer is inside something (JSON text)."""
    limit = int_digit_limit()
    return f"integer with more than {limit} digits{where}: Python reads at most {limit} (quote it to keep it as text)"


@functools.lru_cache(maxsize=4)
def _power_of_ten(digits: int) -> int:
    return int(10**digits)


def too_many_digits(value: int) -> bool:
    """Whether `value` has more digits than Python reads from text."""
    limit = int_digit_limit()
    return bool(limit) and abs(value) >= _power_of_ten(limit)


class Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe YAML, except that dates stay strings: ground truth `2025-01-15` must compare as the
    text the extractor emits, not as a Python date.

    Nodes are composed here, without recursion, from the (C) parser's events, so that a file is
    refused as soon as it nests too deep, its aliases expand too far or refer to themselves, or a
    mapping repeats a key; the tree is then constructed as usual.
    """

    def get_single_node(self) -> yaml.Node | None:
        self.get_event()  # stream start
        document = None
        if not self.check_event(yaml.StreamEndEvent):
            document = self._compose_document()
        if not self.check_event(yaml.StreamEndEvent):
            event = self.get_event()
            raise yaml.composer.ComposerError(
                "expected a single document in the stream",
                document.start_mark if document is not None else None,
                "but found another document",
                event.start_mark,
            )
        self.get_event()  # stream end
        return document

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        try:
            return self.construct_document(node)
        except NodeRefused as exc:
            raise LoadRefused(exc.message, exc.node.start_mark.line + 1, _node_path(node, exc.node)) from None

    def _compose_document(self) -> yaml.Node:
        """Compose one document: the events of its nodes, iteratively, every bound checked."""
        get_event = self.get_event
        # Tag resolution inlined (no path resolvers here): a plain scalar's first character picks
        # the patterns to try; anything else is a string, a list or a mapping.
        implicit = self.yaml_implicit_resolvers
        assert not self.yaml_path_resolvers and None not in implicit
        str_tag, seq_tag, map_tag = self.DEFAULT_SCALAR_TAG, self.DEFAULT_SEQUENCE_TAG, self.DEFAULT_MAPPING_TAG
        scalar_event, alias_event = yaml.ScalarEvent, yaml.AliasEvent
        sequence_start, mapping_start = yaml.SequenceStartEvent, yaml.MappingStartEvent
        scalar_node, sequence_node, mapping_node = yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode
        # anchor -> (node, weight, height); weight None: still being composed
        anchors: dict[str, tuple[yaml.Node, int | None, int]] = {}
        stack: list[_Frame] = []
        expanded = 0
        get_event()  # document start
        while True:
            event = get_event()
            kind = event.__class__
            node: yaml.Node
            if kind is scalar_event:
                tag, value = event.tag, event.value
                if tag is None or tag == "!":
                    tag = str_tag
                    if event.implicit[0]:
                        for candidate, pattern in implicit.get(value[:1], ()):
                            if pattern.match(value):
                                tag = candidate
                                break
                node = scalar_node(tag, value, event.start_mark, event.end_mark, style=event.style)
                weight, height = 1, 0
                if event.anchor is not None:
                    self._check_anchor(anchors, event, stack)
                    anchors[event.anchor] = (node, 1, 0)
            elif kind is alias_event:
                anchor = event.anchor
                if anchor not in anchors:
                    raise yaml.composer.ComposerError(None, None, f"found undefined alias {anchor!r}", event.start_mark)
                node, known, height = anchors[anchor]
                if known is None:
                    raise LoadRefused(
                        f"alias *{anchor} refers to a node that contains it (a recursive structure); "
                        "datasets cannot hold recursive data",
                        event.start_mark.line + 1,
                        _frames_path(stack),
                    )
                if len(stack) + height > MAX_DEPTH:
                    # Each anchored node is within the limit, but one holding aliases of others
                    # would build a far deeper value than any written out.
                    raise LoadRefused(
                        f"YAML nests deeper than {MAX_DEPTH} levels: alias *{anchor} ({height} levels deep) "
                        f"used at level {len(stack)}",
                        event.start_mark.line + 1,
                        _frames_path(stack),
                    )
                weight = known
                expanded += weight
                if expanded > MAX_ALIAS_VALUES:
                    raise LoadRefused(
                        f'YAML aliases expand to more than {MAX_ALIAS_VALUES:,} values (a "billion laughs" file?); '
                        "write the data out, or use fewer nested aliases",
                        event.start_mark.line + 1,
                        _frames_path(stack),
                    )
            elif kind is sequence_start or kind is mapping_start:
                if len(stack) >= MAX_DEPTH:
                    raise LoadRefused(
                        f"YAML nests deeper than {MAX_DEPTH} levels", event.start_mark.line + 1, _frames_path(stack)
                    )
                node_kind = sequence_node if kind is sequence_start else mapping_node
                tag = event.tag
                if tag is None or tag == "!":
                    tag = seq_tag if kind is sequence_start else map_tag
                container = node_kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
                if event.anchor is not None:
                    self._check_anchor(anchors, event, stack)
                    anchors[event.anchor] = (container, None, 0)
                stack.append(_Frame(container, event.anchor))
                continue
            else:  # the end of a list or a mapping
                frame = stack.pop()
                node = frame.node
                node.end_mark = event.end_mark
                weight, height = frame.weight, frame.height + 1
                if frame.anchor is not None:
                    anchors[frame.anchor] = (node, weight, height)
            if not stack:
                get_event()  # document end
                return node
            parent = stack[-1]
            parent.weight += weight
            if height > parent.height:
                parent.height = height
            if parent.first_lines is None:
                parent.node.value.append(node)
            elif parent.key is None:
                if isinstance(node, scalar_node) and node.tag != _MERGE:
                    self._check_duplicate(parent, node, stack)
                parent.key = node
            else:
                parent.node.value.append((parent.key, node))
                parent.key = None

    @staticmethod
    def _check_anchor(anchors: dict[str, tuple[yaml.Node, int | None, int]], event: Any, stack: list[_Frame]) -> None:
        if event.anchor in anchors:
            first = anchors[event.anchor][0].start_mark.line + 1
            raise LoadRefused(
                f"anchor &{event.anchor} is defined twice (first at line {first}); give each anchor its own name",
                event.start_mark.line + 1,
                _frames_path(stack),
            )

    @staticmethod
    def _check_duplicate(frame: _Frame, key: yaml.ScalarNode, stack: list[_Frame]) -> None:
        assert frame.first_lines is not None
        identity = (key.tag, key.value)
        first = frame.first_lines.get(identity)
        line = key.start_mark.line + 1
        if first is not None:
            raise LoadRefused(
                f"duplicate key '{key.value}' (first at line {first})", line, [*_frames_path(stack), str(key.value)]
            )
        frame.first_lines[identity] = line


def _construct_int(loader: Any, node: yaml.ScalarNode) -> int:
    """An integer, refused (located) when it has more digits than Python reads: over the limit
    a decimal raises ValueError, and a hex or binary one would fail later, when written out."""
    try:
        value = int(yaml.constructor.SafeConstructor.construct_yaml_int(loader, node))
    except ValueError:
        raise NodeRefused(too_many_digits_message(), node) from None
    if len(node.value) > 20 and too_many_digits(value):
        raise NodeRefused(too_many_digits_message(), node)
    return value


Loader.yaml_implicit_resolvers = {
    first: [(tag, regex) for tag, regex in resolvers if tag != _TIMESTAMP]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}
Loader.add_constructor(_TIMESTAMP, lambda loader, node: loader.construct_scalar(node))
Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)

# Tags safe YAML builds into values that are not JSON (a set, bytes, a list of pairs): a dataset
# holds only JSON values (and dates as text), so these are refused where they are written.
_NOT_JSON_TAGS = ("set", "binary", "omap", "pairs")


def _refuse_tag(loader: Any, node: yaml.Node) -> Any:
    short = node.tag.replace("tag:yaml.org,2002:", "!!", 1)
    raise NodeRefused(f"YAML tag {short} is not allowed: datasets hold only JSON values", node)


for _name in _NOT_JSON_TAGS:
    Loader.add_constructor(f"tag:yaml.org,2002:{_name}", _refuse_tag)

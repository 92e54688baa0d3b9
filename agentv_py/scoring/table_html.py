"""An HTML table read into elements, leniently and safely (`match: table`; docs/metrics.md#tables).

The standard library's `html.parser` tokenises the text (no network, no entities beyond HTML's
own, nothing run); this module builds the element tree a browser would for the common omissions
of table markup: a `<td>` or `<th>` closes the open cell, a `<tr>` the open row, a section
(`<thead>`, `<tbody>`, `<tfoot>`) the open section; a row directly in a `<table>` sits in an
implied `<tbody>`, a cell directly in a section in an implied `<tr>` (HTML's parsing rules; the
reference TEDS code's lxml adds neither); an end tag with no open element is ignored;
void elements (`<br>`, `<img>`, ...) have no children; comments are dropped. Nesting deeper than
MAX_DEPTH and documents with more than MAX_ELEMENTS elements are refused (`TableMarkupError`), so
hostile markup cannot exhaust the stack or memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

MAX_DEPTH = 200
MAX_ELEMENTS = 200_000
VOID = frozenset(
    ("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr")
)
CELL_TAGS = ("td", "th")
SECTIONS = ("thead", "tbody", "tfoot")
# what a start tag closes, up to (not past) the nearest of the stoppers
_CLOSES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "td": (CELL_TAGS, ("tr", "table")),
    "th": (CELL_TAGS, ("tr", "table")),
    "tr": (("tr", *CELL_TAGS), (*SECTIONS, "table")),
    "thead": ((*SECTIONS, "tr", *CELL_TAGS), ("table",)),
    "tbody": ((*SECTIONS, "tr", *CELL_TAGS), ("table",)),
    "tfoot": ((*SECTIONS, "tr", *CELL_TAGS), ("table",)),
}


class TableMarkupError(ValueError):
    """Markup this reader refuses (too deep, too many elements)."""


@dataclass(slots=True)
class Element:
    """An element: its tag (lower case), attributes and children, each an Element or a text."""

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Element | str] = field(default_factory=list)

    def elements(self) -> list[Element]:
        return [child for child in self.children if isinstance(child, Element)]

    def texts(self) -> list[str]:
        """Every text under the element, in document order (lxml's `itertext`)."""
        out: list[str] = []
        stack: list[Element | str] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                out.append(node)
            else:
                stack.extend(reversed(node.children))
        return out


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document")
        self.open: list[Element] = [self.root]
        self.count = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        closes = _CLOSES.get(tag)
        if closes is not None:
            self._close_any(*closes)
        if tag in ("tr", *CELL_TAGS) and self.open[-1].tag == "table":
            self._implied("tbody")  # as a browser's parser does: rows sit in a section
        if tag in CELL_TAGS and self.open[-1].tag in SECTIONS:
            self._implied("tr")
        self.count += 1
        if self.count > MAX_ELEMENTS:
            raise TableMarkupError(f"more than {MAX_ELEMENTS:,} elements")
        element = Element(tag, {name: value or "" for name, value in attrs})
        self.open[-1].children.append(element)
        if tag not in VOID:
            if len(self.open) > MAX_DEPTH:
                raise TableMarkupError(f"elements nested more than {MAX_DEPTH} deep")
            self.open.append(element)

    def _implied(self, tag: str) -> None:
        element = Element(tag)
        self.open[-1].children.append(element)
        self.open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID and self.open[-1].tag == tag:
            self.open.pop()

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.open) - 1, 0, -1):
            if self.open[depth].tag == tag:
                del self.open[depth:]
                return
            if self.open[depth].tag == "table" and tag != "table":
                return  # an end tag never closes past the table it sits in

    def handle_data(self, data: str) -> None:
        children = self.open[-1].children
        if children and isinstance(children[-1], str):
            children[-1] += data
        else:
            children.append(data)

    def _close_any(self, closed: tuple[str, ...], stoppers: tuple[str, ...]) -> None:
        """Close the outermost open element of `closed` above the nearest stopper (and all it holds)."""
        outermost = None
        for depth in range(len(self.open) - 1, 0, -1):
            tag = self.open[depth].tag
            if tag in stoppers:
                break
            if tag in closed:
                outermost = depth
        if outermost is not None:
            del self.open[outermost:]


def first_table(markup: str) -> Element | None:
    """The first `<table>` of the markup (document order), or None. Raises TableMarkupError."""
    builder = _Builder()
    builder.feed(markup)
    builder.close()
    stack: list[Element] = [builder.root]
    while stack:
        element = stack.pop()
        if element.tag == "table":
            return element
        stack.extend(reversed(element.elements()))
    return None


def cell_tokens(cell: Element) -> tuple[str, ...]:
    """A cell's content as TEDS compares it (PubTabNet's `tokenize`): each character of its text,
    and `<tag>` ... `</tag>` for each element inside it."""
    tokens: list[str] = []
    stack: list[Element | str | tuple[str]] = list(reversed(cell.children))
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            tokens.extend(node)
        elif isinstance(node, tuple):
            tokens.append(node[0])
        else:
            tokens.append(f"<{node.tag}>")
            stack.append((f"</{node.tag}>",))
            stack.extend(reversed(node.children))
    return tuple(tokens)


def rows_of(table: Element) -> list[list[Element]]:
    """The table's rows, each its cells (`td`, `th`) in order; a nested table's rows are its own.
    Cells outside a `<tr>` form one implied row per run of siblings (as a browser shows them)."""
    rows: list[list[Element]] = []
    implied: Element | None = None  # the parent of the loose cells of the last implied row
    stack: list[tuple[Element, Element]] = [(child, table) for child in reversed(table.elements())]
    while stack:
        element, parent = stack.pop()
        if element.tag == "tr":
            rows.append([child for child in element.elements() if child.tag in CELL_TAGS])
            implied = None
        elif element.tag in CELL_TAGS:
            if parent is not implied:
                rows.append([])
                implied = parent
            rows[-1].append(element)
        elif element.tag != "table":
            stack.extend((child, element) for child in reversed(element.elements()))
    return rows


def in_header(table: Element) -> set[int]:
    """Ids of the cells in a `<thead>` or that are `<th>` (column headers, as GriTS reads them)."""
    heads: set[int] = set()
    stack: list[tuple[Element, bool]] = [(child, False) for child in table.elements()]
    while stack:
        element, head = stack.pop()
        head = head or element.tag == "thead"
        if element.tag in CELL_TAGS:
            if head or element.tag == "th":
                heads.add(id(element))
        elif element.tag != "table":
            stack.extend((child, head) for child in element.elements())
    return heads


def count_elements(table: Element) -> int:
    """Elements under the table, itself not counted (PubTabNet's `len(table.xpath(".//*"))`, the
    TEDS denominator)."""
    count = 0
    stack = table.elements()
    while stack:
        element = stack.pop()
        count += 1
        stack.extend(element.elements())
    return count

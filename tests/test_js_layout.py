"""The browser components' JavaScript (``components/*.js``) is split by concern, in functions a reader takes in at once.

* No function is over ``MAX_LINES`` lines, from the line that names it to the line of its closing brace (nested
  functions count in their parent too): function declarations and expressions, methods, and arrow functions with
  a block body.
* No file but ``components/plotly_adapter.js`` reads a plotly.js private field (a property whose name starts with
  ``_``): plotly.js has no public API for where a drawn figure's axes sit, and the adapter is the one place that
  says why and is checked against the plotly wheel's plotly.js (tests/test_browser_plotly_adapter.py).

``functions`` is a small scanner, not a parser: it reads JavaScript as tokens, skipping comments, strings,
template literals (with their ``${...}`` expressions scanned as code) and regular expression literals, and
matches braces. Its own tests below run it on samples written to trip it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "components").glob("*.js")) + sorted((ROOT / "scripts" / "bench").glob("*.js"))
MAX_LINES = 80
ADAPTER = ROOT / "components" / "plotly_adapter.js"
KEYWORDS = {"if", "for", "while", "switch", "catch", "with", "return", "typeof", "function", "new", "else", "do"}
REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^") | {"return", "typeof", "case", "do", "else", "in", "of", "new", "=>"}
PUNCTUATION = ("=>", "...", "?.", "??", "${")


class Token(NamedTuple):
    text: str
    line: int


class Function(NamedTuple):
    name: str
    first: int  # the line that names it (1-based)
    last: int  # the line of its closing brace

    @property
    def lines(self) -> int:
        return self.last - self.first + 1


def tokens(source: str) -> list[Token]:
    """The code tokens of ``source``: identifiers, numbers and punctuation; a string, template literal or regular
    expression becomes one token ``"str"`` (a template's ``${...}`` expressions are scanned as code). Comments
    are dropped. Raises ValueError on an unterminated string, template, regex or comment."""
    out: list[Token] = []
    _scan(source, 0, 1, out, stop_at_brace=False)
    return out


def _scan(src: str, i: int, line: int, out: list[Token], stop_at_brace: bool) -> tuple[int, int]:
    depth = 0
    while i < len(src):
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif src.startswith("//", i):
            i = src.find("\n", i) if "\n" in src[i:] else len(src)
        elif src.startswith("/*", i):
            end = src.find("*/", i + 2)
            if end < 0:
                raise ValueError(f"line {line}: unterminated comment")
            line += src.count("\n", i, end)
            i = end + 2
        elif c in "'\"":
            i, line = _string(src, i, line, c)
            out.append(Token("str", line))
        elif c == "`":
            start_line = line
            i, line = _template(src, i + 1, line, out)
            out.append(Token("str", start_line))
        elif c == "/" and (not out or out[-1].text in REGEX_AFTER):
            i, line = _regex(src, i, line)
            out.append(Token("str", line))
        elif c.isalnum() or c in "_$":
            m = re.compile(r"[\w$.]+" if c.isdigit() else r"[\w$]+").match(src, i)
            out.append(Token(m.group(), line))
            i = m.end()
        else:
            text = next((p for p in PUNCTUATION if src.startswith(p, i)), c)
            if stop_at_brace and text == "}" and depth == 0:
                return i + 1, line
            depth += {"{": 1, "}": -1}.get(text, 0)
            out.append(Token(text, line))
            i += len(text)
    if stop_at_brace:
        raise ValueError(f"line {line}: unterminated ${{...}} in a template literal")
    return i, line


def _string(src: str, i: int, line: int, quote: str) -> tuple[int, int]:
    j = i + 1
    while j < len(src) and src[j] != quote:
        if src[j] == "\n":
            raise ValueError(f"line {line}: unterminated string")
        j += 2 if src[j] == "\\" else 1
    if j >= len(src):
        raise ValueError(f"line {line}: unterminated string")
    return j + 1, line


def _template(src: str, i: int, line: int, out: list[Token]) -> tuple[int, int]:
    while i < len(src):
        if src[i] == "\\":
            i += 2
        elif src[i] == "`":
            return i + 1, line
        elif src.startswith("${", i):
            i, line = _scan(src, i + 2, line, out, stop_at_brace=True)
        else:
            line += src[i] == "\n"
            i += 1
    raise ValueError(f"line {line}: unterminated template literal")


def _regex(src: str, i: int, line: int) -> tuple[int, int]:
    j, in_class = i + 1, False
    while j < len(src) and (in_class or src[j] != "/"):
        if src[j] == "\n":
            raise ValueError(f"line {line}: unterminated regular expression")
        in_class = (in_class or src[j] == "[") and src[j] != "]"
        j += 2 if src[j] == "\\" else 1
    if j >= len(src):
        raise ValueError(f"line {line}: unterminated regular expression")
    j += 1
    while j < len(src) and src[j].isalpha():  # flags
        j += 1
    return j, line


def _closing(toks: list[Token], k: int) -> int:
    """The index of the bracket that closes the one at ``k``."""
    pair = {"(": ")", "{": "}", "[": "]"}[toks[k].text]
    depth = 0
    for j in range(k, len(toks)):
        depth += (toks[j].text == toks[k].text) - (toks[j].text == pair)
        if depth == 0:
            return j
    raise ValueError(f"line {toks[k].line}: {toks[k].text} is never closed")


def functions(source: str) -> list[Function]:
    """Every function of ``source`` with a block body, in source order: declarations and expressions
    (``function name(...) {``), methods (``name(...) {``) and arrow functions (``=> {``)."""
    toks = tokens(source)
    found = []
    for k, tok in enumerate(toks):
        body = name = None
        if tok.text == "function":
            j = k + 1 + (toks[k + 1].text == "*")
            name = toks[j].text if toks[j].text != "(" else _assigned_name(toks, k - 1, "(anonymous)")
            j += toks[j].text != "("
            body = _closing(toks, j) + 1
        elif tok.text == "=>" and toks[k + 1].text == "{":
            body = k + 1
            name = _assigned_name(toks, _parameters_start(toks, k) - 1, "(arrow)")
        elif _is_name(tok.text) and toks[k - 1].text != "function":
            if k + 1 < len(toks) and toks[k + 1].text == "(":
                after = _closing(toks, k + 1) + 1
                if after < len(toks) and toks[after].text == "{":
                    body, name = after, tok.text
        if body is not None and body < len(toks) and toks[body].text == "{":
            found.append(Function(name, tok.line, toks[_closing(toks, body)].line))
    return found


def _is_name(text: str) -> bool:
    return re.fullmatch(r"[A-Za-z_$][\w$]*", text) is not None and text not in KEYWORDS


def _parameters_start(toks: list[Token], k: int) -> int:
    """The index of the first token of the parameters of the arrow at ``k`` (``(a, b)`` or ``a``)."""
    j = k - 1
    if toks[j].text != ")":
        return j
    depth = 0
    while j > 0:
        depth += (toks[j].text == ")") - (toks[j].text == "(")
        if depth == 0:
            return j
        j -= 1
    return j


def _assigned_name(toks: list[Token], j: int, default: str) -> str:
    """The name a function expression ending before ``j + 1`` is given: ``name = ...`` or ``name: ...``."""
    j -= toks[j].text == "async"
    if j > 0 and toks[j].text in ("=", ":"):
        return toks[j - 1].text
    return default


def plotly_private_reads(source: str) -> list[str]:
    """The ``._name`` or ``["_name"]`` reads of ``source``'s code (comments dropped)."""
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", source, flags=re.S)
    return re.findall(r"\.\s*_[A-Za-z]\w*|\[\s*[\"'`]_[A-Za-z]\w*", code)


# ---- the scanner on samples ------------------------------------------------------------------------------------


def test_functions_finds_each_kind_with_its_lines():
    source = """function one(a) {
  return a;
}
const two = async (x) => {
  const y = { a: 1 };
  return y;
};
const obj = {
  three(b) {
    return b;
  },
  four: function () { return 4; },
};
class Five { six() {
} }
if (x) { y(); }
for (const k of ks) { go(k); }
"""
    found = {f.name: (f.first, f.last) for f in functions(source)}
    assert found == {"one": (1, 3), "two": (4, 7), "three": (9, 11), "four": (12, 12), "six": (14, 15)}


def test_functions_skips_braces_in_strings_comments_templates_and_regexes():
    source = """function outer() {
  const s = "}}}";  // a comment with } and {
  const t = '{';
  /* a block comment }
     over two lines */
  const u = `text } ${ ({ a: "}" }).a } more ${`nested ${1}`} {`;
  const r = /[}/]\\}/g.test(s) ? 1 / 2 : 3;
  return s + t + u + r;
}
function after() {
}
"""
    found = {f.name: (f.first, f.last) for f in functions(source)}
    assert found == {"outer": (1, 9), "after": (10, 11)}


def test_functions_counts_a_nested_function_in_its_parent():
    inner = "\n".join(["  const f = () => {"] + ["    step();"] * 90 + ["  };"])
    found = functions(f"function parent() {{\n{inner}\n}}\n")
    assert [(f.name, f.lines) for f in found] == [("parent", 94), ("f", 92)]
    assert [f.name for f in found if f.lines > MAX_LINES] == ["parent", "f"]  # the check below would fail


def test_the_scanner_refuses_what_it_cannot_read():
    for broken in ('const s = "open;\n', "const t = `open ${x;\n", "/* never closed", "function f() {\n"):
        with pytest.raises(ValueError):
            functions(broken)


def test_plotly_private_reads_finds_fields_not_comments():
    source = 'const a = gd._fullLayout; // gd._length\nconst b = x["_offset"];\nconst c = y.offset;\n'
    assert plotly_private_reads(source) == ["._fullLayout", '["_offset']


# ---- the components --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_function_is_over_the_limit(path: Path):
    found = functions(path.read_text())
    long = [f"{f.name} (lines {f.first}-{f.last}: {f.lines})" for f in found if f.lines > MAX_LINES]
    assert not long, f"{path.name}: functions over {MAX_LINES} lines: {', '.join(long)}"


def test_only_the_adapter_reads_plotly_private_fields():
    assert plotly_private_reads(ADAPTER.read_text()), "the adapter reads plotly.js's internals: the check sees them"
    reads = {p.name: plotly_private_reads(p.read_text()) for p in SOURCES if p != ADAPTER}
    assert {name: r for name, r in reads.items() if r} == {}

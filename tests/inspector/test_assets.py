"""The inspector's shipped files: what is served, what is not, and the page's safety rules."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from baton.inspector import (
    CONTENT_SECURITY_POLICY,
    ENTRY_PAGE,
    SECURITY_HEADERS,
    asset_names,
    load_asset,
    missing_references,
)
from baton.inspector.assets import MAX_ASSET_NAME_CHARS, InspectorAsset, references

STATIC = Path(__file__).resolve().parents[2] / "src" / "baton" / "inspector" / "static"


def test_every_shipped_file_is_served_with_its_type() -> None:
    on_disk = sorted(str(p.relative_to(STATIC)) for p in STATIC.rglob("*") if p.is_file())
    assert list(asset_names()) == on_disk
    page = load_asset(ENTRY_PAGE)
    assert page is not None and page.content_type == "text/html; charset=utf-8"
    main = load_asset("js/main.js")
    assert main is not None and main.content_type == "text/javascript; charset=utf-8"
    assert main.body == (STATIC / "js" / "main.js").read_bytes()


@pytest.mark.parametrize(
    "name",
    [
        "",
        "../__init__.py",
        "js/../index.html",
        "/index.html",
        "js//main.js",
        "JS/main.js",
        "js/main.js?x",
        "js%2fmain.js",
        "js/missing.js",
        "assets.py",
        "../assets.py",
        "index.html\x00.js",
    ],
)
def test_names_that_are_not_shipped_files_are_not_served(name: str) -> None:
    assert load_asset(name) is None


def test_name_length_bound() -> None:
    # cap - 1 and cap are looked up (and simply absent); cap + 1 is refused before the lookup.
    stem = "a" * (MAX_ASSET_NAME_CHARS - len(".js"))
    assert load_asset(stem[:-1] + ".js") is None
    assert load_asset(stem + ".js") is None
    assert load_asset(stem + "a.js") is None


def test_the_page_is_whole() -> None:
    assert missing_references() == []


def test_a_missing_module_is_reported() -> None:
    broken = InspectorAsset("js/x.js", b'import { a } from "./gone.js";\nimport "../y.js";', "")
    assert references(broken) == ["js/gone.js", "y.js"]


def test_the_policy_allows_only_the_page_itself() -> None:
    directives = dict(d.split(" ", 1) for d in CONTENT_SECURITY_POLICY.split("; "))
    assert directives["default-src"] == "'none'"
    for name in ("script-src", "style-src", "connect-src", "img-src"):
        assert directives[name] == "'self'"
    assert directives["require-trusted-types-for"] == "'script'"
    assert "unsafe" not in CONTENT_SECURITY_POLICY
    assert SECURITY_HEADERS["X-Content-Type-Options"] == "nosniff"
    assert SECURITY_HEADERS["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


#: Ways a script turns a string into markup or code. None may appear in the page's scripts:
#: agent text reaches the DOM as Text nodes only (js/dom.js).
HTML_OR_CODE_SINKS = re.compile(
    r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|"
    r"setTimeout\(\s*[\"'`]|srcdoc|createContextualFragment|DOMParser"
)


def test_no_script_turns_text_into_markup_or_code() -> None:
    for path in STATIC.rglob("*.js"):
        found = HTML_OR_CODE_SINKS.findall(path.read_text(encoding="utf-8"))
        assert not found, f"{path.name}: {found}"


def test_the_page_has_no_inline_script_style_or_foreign_origin() -> None:
    for path in STATIC.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert re.search(r"<script(?![^>]*\bsrc=)", text) is None
        assert "<style" not in text and " style=" not in text
        assert re.search(r" on[a-z]+=", text) is None
    for path in STATIC.rglob("*"):
        if path.is_file() and path.suffix in {".html", ".js", ".css"}:
            text = path.read_text(encoding="utf-8")
            assert re.search(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text) is None, path.name


def test_every_module_parses() -> None:
    # A syntax error in one module stops the whole page; the browser tests would say so too,
    # this says which file at once. Node parses each as an ES module (as the page loads it).
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the browser tests still load every module)")
    for path in sorted(STATIC.rglob("*.js")):
        done = subprocess.run(
            [node, "--input-type=module", "--check"],
            input=path.read_bytes(),
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0, f"{path.name}: {done.stderr.decode(errors='replace')}"

"""Sphinx extension: drop repeated <script> tags from the written pages.

With Jupyter Book 1.0.4 and Sphinx 7.4, sphinx-thebe's configuration script
(``const THEBE_JS_URL = ...``) ends up twice in every page, and the second
copy fails in the browser with "Identifier 'THEBE_JS_URL' has already been
declared". The copies are added by different page-context handlers, so the
clean place to fix them is the written HTML: keep the first of each identical
``<script>`` line.
"""

from pathlib import Path


def dedupe_html(text: str) -> str:
    seen, kept = set(), []
    for line in text.splitlines(keepends=True):
        tag = line.strip()
        if tag.startswith("<script") and tag.endswith("</script>"):
            if tag in seen:
                continue
            seen.add(tag)
        kept.append(line)
    return "".join(kept)


def _dedupe_pages(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = dedupe_html(text)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def setup(app):
    app.connect("build-finished", _dedupe_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

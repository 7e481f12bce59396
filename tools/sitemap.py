"""Sphinx extension: ``sitemap.xml`` of the published book, from ``html_baseurl``.

Search engines find every chapter from it. The addresses are the book's
address (``html_baseurl``, written by ``make sync`` from the repository URL in
``_config.yml``) followed by each page's file name, so a fork that publishes
its own copy gets its own sitemap. No sitemap is written when the address is
not set. (The ``sphinx-sitemap`` package needs ``sphinx-last-updated-by-git``,
which warns on the shallow clones of CI, and the book builds with warnings as
errors.)
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape


def _write_sitemap(app, exception) -> None:
    base = app.config.html_baseurl
    if exception is not None or not base or app.builder.format != "html":
        return
    base = base.rstrip("/") + "/"
    pages = sorted(app.env.found_docs)
    urls = "".join(f"  <url><loc>{escape(base + app.builder.get_target_uri(page))}</loc></url>\n"
                   for page in pages)
    Path(app.outdir, "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{urls}</urlset>\n", encoding="utf-8")


def setup(app):
    app.connect("build-finished", _write_sitemap)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

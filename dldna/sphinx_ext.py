"""Sphinx extension: the book serves the explorers' static front end once per page.

An explorer's ``text/html`` output carries only its data and a one-line mount
call (see :mod:`dldna.widgets.core`). This extension writes the renderer and
its stylesheet (:func:`dldna.widgets.core.front_end`: ``static/explorer.js``,
``static/explorer.css`` and the colours of :mod:`dldna.viz.style`) into the
book's ``_static`` folder and adds them to every page, so that a change to the
renderer, its style or the colours reaches the book with ``make book``,
without re-executing a notebook. Registered in ``_config.yml`` under
``sphinx: extra_extensions``.
"""

from __future__ import annotations

from pathlib import Path


def _write_front_end(app) -> None:
    from dldna.widgets.core import front_end

    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    for name, text in front_end().items():
        (static / name).write_text(text, encoding="utf-8")


def setup(app):
    # Written when the builder starts, so that Sphinx finds the files when it
    # fingerprints the links (?v=...) of every page.
    app.connect("builder-inited", _write_front_end)
    app.add_js_file("dldna-explorer.js")
    app.add_css_file("dldna-explorer.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}

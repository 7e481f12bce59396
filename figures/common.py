"""What every diagram script shares: where its SVG goes and how it is written.

    python figures/NAME.py      # writes dldna/diagrams/NAME.svg

The SVGs live inside the package so that notebooks can show them with
``dldna.viz.diagram("NAME")`` in Colab as well (a relative image path does
not resolve there). They are written without a date and with a fixed id
salt, so running a script again gives the same bytes.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parents[1]
DIAGRAMS = ROOT / "dldna" / "diagrams"


def save(fig: Figure, script: str) -> Path:
    """Write ``fig`` as ``dldna/diagrams/<name of script>.svg``."""
    out = DIAGRAMS / f"{Path(script).stem}.svg"
    # Text stays text: searchable, accessible and smaller than drawn glyphs.
    with matplotlib.rc_context({"svg.hashsalt": "dldna", "svg.fonttype": "none"}):
        fig.savefig(out, format="svg", metadata={"Date": None})
    print(f"escrito {out.relative_to(ROOT)}")
    return out

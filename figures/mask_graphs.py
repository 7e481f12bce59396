"""Draw figures/mask_graphs.svg: attention as message passing on three graphs.

    python figures/mask_graphs.py

Left, self-attention: a complete graph (every token may send a message to
every other). Centre, cross-attention: a bipartite graph (decoder queries on
top, encoder keys/values below; no edge inside either set). Right, a 3×3
convolution: each pixel receives from its grid neighbourhood only. The drawing
functions live in :mod:`dldna.viz.masking`, so the chapter can redraw them.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

from dldna.viz.masking import plot_attention_graphs

OUT = Path(__file__).with_suffix(".svg")


def main() -> None:
    matplotlib.rcParams["svg.hashsalt"] = "dldna-mask-graphs"  # stable ids between runs
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text (searchable, smaller)
    fig = plot_attention_graphs(("el", "gato", "negro", "salta"), ("the", "black", "cat"))
    fig.savefig(OUT, format="svg", metadata={"Date": None})
    print(f"escrito {OUT.name}")


if __name__ == "__main__":
    main()

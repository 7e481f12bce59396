"""Draw dldna/diagrams/mask_graphs.svg: attention as message passing on three graphs.

    python figures/mask_graphs.py

Left, self-attention: a complete graph (every token may send a message to
every other). Centre, cross-attention: a bipartite graph (decoder queries on
top, encoder keys/values below; no edge inside either set). Right, a 3×3
convolution: each pixel receives from its grid neighbourhood only. The drawing
functions live in :mod:`dldna.viz.masking`, so the chapter can redraw them.
"""

from __future__ import annotations

from common import save

from dldna.viz.masking import plot_attention_graphs

if __name__ == "__main__":
    save(plot_attention_graphs(("el", "gato", "negro", "salta"), ("the", "black", "cat")), __file__)

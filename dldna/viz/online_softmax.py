"""Figures of the online softmax (:mod:`dldna.online_softmax`): one query read tile by tile."""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.figure import Figure

from dldna import checks
from dldna.online_softmax import online_attention
from dldna.viz import style

__all__ = ["online_softmax_steps", "online_softmax_panel"]


def online_softmax_steps(n_keys: int = 12, d_v: int = 3, tile: int = 4, seed: int = 10) -> dict:
    """The states of :func:`~dldna.online_softmax.online_attention` for one random query.

    The scores of one query over ``n_keys`` keys and the values ``(n_keys, d_v)``
    are drawn with ``seed``; returns NumPy arrays: ``scores`` ``(n_keys,)``,
    ``values``, the per-tile ``starts``/``stops``, the running ``m`` and ``l``
    after each tile ``(n_tiles,)``, ``output`` after each tile
    ``(n_tiles, d_v)``, and ``final`` (the full softmax's output, computed
    directly with ``torch.softmax``).
    """
    n_keys = checks.positive_int(n_keys, "n_keys", minimum=2)
    d_v = checks.positive_int(d_v, "d_v")
    tile = checks.positive_int(tile, "tile")
    seed = checks.non_negative_int(seed, "seed")
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(1, n_keys, generator=g, dtype=torch.float64) * 1.5
    values = torch.randn(n_keys, d_v, generator=g, dtype=torch.float64)
    # A query (1, 1) of ones and keys equal to the scores give exactly these scores (scale 1).
    result = online_attention(torch.ones(1, 1, dtype=torch.float64), scores.T, values, tile,
                              scale=1.0, trace=True)
    final = torch.softmax(scores[0], -1) @ values
    return {
        "scores": scores[0].numpy(), "values": values.numpy(), "tile": tile,
        "starts": np.array([s["start"] for s in result.trace]),
        "stops": np.array([s["stop"] for s in result.trace]),
        "m": np.array([float(s["m"]) for s in result.trace]),
        "l": np.array([float(s["l"]) for s in result.trace]),
        "output": np.stack([s["output"][0].numpy() for s in result.trace]),
        "final": final.numpy(),
    }


def online_softmax_panel(steps: dict, step: int, title: str | None = None) -> Figure:
    """Scores read so far (current tile highlighted, pending ones hatched), the
    running max ``m`` and sum ``l``, and the output so far against the final one.

    ``step``: how many tiles have been read (1 … number of tiles).
    """
    n_tiles = len(steps["m"])
    step = checks.positive_int(step, "step")
    if step > n_tiles:
        raise ValueError(f"step debe estar entre 1 y {n_tiles} (número de teselas); se recibió {step}.")
    k = step - 1
    start, stop = int(steps["starts"][k]), int(steps["stops"][k])
    scores = steps["scores"]
    fig = Figure(figsize=(10, 6.2), layout="constrained")
    grid = fig.add_gridspec(2, 3)
    ax = fig.add_subplot(grid[0, :])
    for i, s in enumerate(scores):
        if i >= stop:
            ax.bar(i, s, color=style.MASKED_COLOR, hatch=style.MASKED_HATCH, edgecolor=style.MASKED_EDGE)
        else:
            ax.bar(i, s, color=style.HIGHLIGHT if i >= start else style.color(4))
    ax.axhline(steps["m"][k], color=style.INK, linestyle="--", linewidth=1.2,
               label=f"máximo acumulado m = {steps['m'][k]:.2f}")
    ax.axhline(0, color=style.AXIS, linewidth=0.8)
    ax.set_xticks(range(len(scores)))
    ax.set_xlabel("clave (key)")
    ax.set_ylabel("puntuación")
    ax.legend(loc="upper right", fontsize=9)
    ax.set_title(f"Puntuaciones: leídas (azul), tesela actual {start}–{stop - 1} (naranja), "
                 "pendientes (rayadas)", fontsize=10)
    x = np.arange(n_tiles)
    for col, (key, label) in enumerate((("m", "máximo acumulado m"), ("l", "suma reescalada l"))):
        a = fig.add_subplot(grid[1, col])
        a.plot(x, steps[key], marker="o", color=style.color(col + 1))
        a.axvline(k, color=style.INK, linewidth=1, alpha=0.7)
        a.set_xticks(x)
        a.set_xlabel("tesela (desde 0)")
        a.set_title(f"{label} = {steps[key][k]:.3f}", fontsize=10)
    a = fig.add_subplot(grid[1, 2])
    for j in range(steps["output"].shape[1]):
        colour = style.LINE_COLORS[j % len(style.LINE_COLORS)]
        line = a.plot(x, steps["output"][:, j], marker="o", color=colour, label=f"dim {j}")[0]
        a.axhline(steps["final"][j], color=line.get_color(), linestyle=":", linewidth=1)
    a.axvline(k, color=style.INK, linewidth=1, alpha=0.7)
    a.set_xticks(x)
    a.set_xlabel("tesela (desde 0)")
    a.set_title("salida acc / l (punteada: final)", fontsize=10)
    a.legend(fontsize=8)
    fig.suptitle(title or f"Softmax en línea, teselas de {steps['tile']} claves: paso {step} de {n_tiles}",
                 fontsize=12)
    return fig

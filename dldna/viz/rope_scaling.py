"""Pictures of RoPE's scaling (:func:`dldna.positional.rope_frequencies`): how far each pair turns.

RoPE turns the pair ``i`` of a query and a key by ``p·θ_i``, so their product
sees the angle ``d·θ_i`` of their distance ``d``. A model trained on
sequences of ``length`` positions only met distances ``d < length``; read
``factor`` times longer, the slow pairs reach angles they never turned in
training. Position interpolation divides every ``θ_i`` by ``factor`` (the
angles stay in the trained range, but neighbours get closer); NTK-aware
scaling keeps the fastest pair and divides the slowest by ``factor``.

* :func:`rope_scaling_data`: the angles ``d·θ_i`` for ``d = 0 … factor·length − 1``
  and two angles in degrees compared with training (the fastest pair at a
  short distance, the slowest at the longest one);
* :func:`rope_scaling_panel`: their cosines as a heatmap (pairs × distances)
  with the training range marked, and the two angles as bars.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from dldna import checks
from dldna.positional import rope_frequencies
from dldna.viz import style
from dldna.viz.heatmap import heatmap

__all__ = ["rope_scaling_data", "rope_scaling_panel"]

#: The reader's name of each scaling of :func:`~dldna.positional.rope_frequencies`.
SCALING_LABELS: dict[str | None, str] = {None: "ninguno", "linear": "lineal (PI)", "ntk": "NTK"}
#: The short distance at which the fastest pair is compared with training.
NEAR = 3
#: Limits that keep a picture readable (and an explorer's payload small).
MAX_D_K = 128
MAX_DISTANCES = 512


def tick_distances(factor: int, length: int) -> list[int]:
    """Distances labelled under the heatmap: every ``length/4`` (``factor`` 1), ``length/2`` (2)
    or ``length``, and the last one, ``factor·length − 1``."""
    n = factor * length
    step = max(1, length // 4) if factor == 1 else max(1, length // 2) if factor == 2 else length
    ticks = list(range(0, n, step))
    if n - 1 - ticks[-1] < step / 2:
        ticks.pop()
    return [*ticks, n - 1] if ticks else [n - 1]


def rope_scaling_data(d_k: int = 16, scaling: str | None = None, factor: int = 4, length: int = 24,
                      base: float = 10000.0) -> dict:
    """RoPE's angles at every distance of a context ``factor`` times the training ``length``.

    ``scaling``: ``None`` (RoPE as trained, read farther), ``"linear"``
    (position interpolation) or ``"ntk"``; the frequencies are
    :func:`~dldna.positional.rope_frequencies` ``(d_k, base, scaling=, factor=)``
    (``factor`` 1 without scaling). Returns NumPy arrays: ``theta`` ``(d_k/2,)``
    and ``trained_theta`` (without scaling), ``distances`` ``(factor·length,)``,
    ``angles`` ``(d_k/2, factor·length)`` = ``θ_i·d`` and ``cos``; ``near``:
    pair 0 (the fastest) at distance :data:`NEAR`, and ``far``: the last pair
    (the slowest) at the longest distance ``factor·length − 1``, each with its
    angle in degrees now (``scaled_deg``) and in training (``trained_deg``: at
    the same distance for ``near``, at the longest trained distance
    ``length − 1`` for ``far``).
    """
    d_k = checks.positive_int(d_k, "d_k")
    if d_k % 2:
        raise ValueError(f"d_k debe ser un entero par (RoPE gira pares de dimensiones); se recibió {d_k}.")
    if d_k > MAX_D_K:
        raise ValueError(f"d_k debe ser como mucho {MAX_D_K} para que el dibujo se lea; se recibió {d_k}.")
    factor = checks.positive_int(factor, "factor")
    length = checks.positive_int(length, "length (longitud de entrenamiento)", minimum=NEAR + 1)
    if factor * length > MAX_DISTANCES:
        raise ValueError(f"factor · length = {factor * length} distancias: debe ser como mucho "
                         f"{MAX_DISTANCES} para que el dibujo se lea.")
    if scaling is not None and (not isinstance(scaling, str) or scaling not in SCALING_LABELS):
        raise ValueError(f"scaling debe ser None (ninguno), 'linear' (interpolación de posiciones) o "
                         f"'ntk'; se recibió {scaling!r}.")
    trained = rope_frequencies(d_k, base).numpy()
    theta = rope_frequencies(d_k, base, scaling=scaling, factor=factor if scaling else 1.0).numpy()
    distances = np.arange(factor * length)
    angles = theta[:, None] * distances[None, :]
    far = factor * length - 1
    return {
        "d_k": d_k, "scaling": scaling, "label": SCALING_LABELS[scaling], "factor": factor,
        "length": length, "base": float(base), "theta": theta, "trained_theta": trained,
        "distances": distances, "angles": angles, "cos": np.cos(angles),
        "ticks": tick_distances(factor, length),
        "near": {"pair": 0, "distance": NEAR, "trained_distance": NEAR,
                 "trained_deg": float(np.degrees(NEAR * trained[0])),
                 "scaled_deg": float(np.degrees(NEAR * theta[0]))},
        "far": {"pair": len(theta) - 1, "distance": far, "trained_distance": length - 1,
                "trained_deg": float(np.degrees((length - 1) * trained[-1])),
                "scaled_deg": float(np.degrees(far * theta[-1]))},
    }


def _check_data(data) -> dict:
    keys = ("cos", "near", "far", "length", "factor", "label", "d_k", "ticks")
    if not isinstance(data, dict) or any(k not in data for k in keys):
        raise TypeError("data debe ser el diccionario que devuelve rope_scaling_data(...).")
    return data


def rope_scaling_panel(data: dict, title: str | None = None) -> Figure:
    """The cosine of ``d·θ_i`` (pairs × distances, training range ``[0, length)``
    marked) and the two angles of ``data`` (:func:`rope_scaling_data`) against
    their training values, as horizontal bars in degrees.

    The heatmap's values are ``fig.axes[0].collections[0].get_array()``; the
    bars, ``fig.axes[2]`` (fastest pair) and ``fig.axes[3]`` (slowest), each
    ``[training, now]``.
    """
    data = _check_data(data)
    cos, length, factor = data["cos"], data["length"], data["factor"]
    pairs, n = cos.shape
    fig = Figure(figsize=(10.5, 4.3), layout="constrained")
    grid = fig.add_gridspec(2, 2, width_ratios=(3.3, 1))
    ax = fig.add_subplot(grid[:, 0])
    heatmap(cos, ax=ax, row_labels=[str(i) for i in range(pairs)], col_labels=False, signed=True,
            vmin=-1.0, vmax=1.0, annotate=False, colorbar_label="cos(d·θ_i)",
            xlabel="distancia d entre consulta y clave", ylabel="par i (0: el más rápido)")
    ax.set_xticks([d + 0.5 for d in data["ticks"]], labels=[str(d) for d in data["ticks"]], rotation=0)
    top = ax.get_xaxis_transform()  # x in data, y in axes coordinates
    ax.plot([0, min(length, n)], [1.03, 1.03], color=style.INK, linewidth=1.5, transform=top,
            clip_on=False)
    ax.text(min(length, n) / 2, 1.05, f"entrenamiento (d < {length})", transform=top, ha="center",
            va="bottom", fontsize=9)
    if length < n:
        ax.axvline(length, color=style.INK, linewidth=2)
    now = f"{data['label']}, ×{factor}"
    for row, (key, what) in enumerate((("near", "el más rápido"), ("far", "el más lento"))):
        info = data[key]
        a = fig.add_subplot(grid[row, 1])
        values = [info["trained_deg"], info["scaled_deg"]]
        a.barh([1, 0], values, color=[style.color(4), style.HIGHLIGHT], height=0.6)
        a.set_yticks([1, 0], labels=[f"al entrenar\n(d = {info['trained_distance']})",
                                     f"{now}\n(d = {info['distance']})"], fontsize=8)
        digits = 1 if key == "near" else 2
        for y, v in zip((1, 0), values, strict=True):
            a.text(v, y, f" {v:.{digits}f}°", va="center", ha="left", fontsize=8)
        a.set_xlim(0, 1.35 * max(values) if max(values) > 0 else 1.0)
        a.set_xlabel("ángulo girado (grados)", fontsize=8)
        a.tick_params(axis="x", labelsize=7)
        a.set_title(f"par {info['pair']} ({what})", fontsize=9)
    fig.suptitle(title or f"RoPE, escalado: {data['label']}, factor {factor}: {factor * length} "
                 f"posiciones (entrenado con {length}), d_k = {data['d_k']}", fontsize=11)
    return fig

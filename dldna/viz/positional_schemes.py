"""Pictures of the position schemes of :mod:`dldna.positional`.

* :func:`plot_pair_circles`: each sinusoidal pair ``(sin pω_i, cos pω_i)`` runs
  round a circle; moving ``k`` positions turns it by ``k·ω_i``;
* :func:`plot_dot_by_distance`: ``PE[p]·PE[p + δ]`` against ``δ`` for several
  ``p`` (the curves coincide: the dot product depends only on the distance);
* :func:`plot_relative_schemes`: the query × key matrix of every relative
  scheme (Shaw's clipped distance, T5's buckets, ALiBi's bias, RoPE's scores
  for one repeated token), each constant along its diagonals;
* :func:`plot_extrapolation`: accuracy against test length, one line per scheme.

Every function returns a :class:`matplotlib.figure.Figure` (no ``pyplot``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch
from matplotlib.figure import Figure

from dldna import checks
from dldna import positional as P
from dldna.viz import style
from dldna.viz.heatmap import heatmap

__all__ = ["plot_pair_circles", "plot_dot_by_distance", "plot_relative_schemes", "plot_extrapolation"]


def plot_pair_circles(d_model: int = 16, pairs: Sequence[int] = (0, 1, 2), positions: int = 12,
                      start: int = 2, shift: int = 3, base: float = 10000.0,
                      title: str | None = None) -> Figure:
    """One panel per pair: the points ``(sin pω_i, cos pω_i)`` for ``p < positions``.

    The positions ``start`` and ``start + shift`` are joined by an arc: the
    same turn ``shift·ω_i`` for any ``start``.
    """
    d_model = checks.positive_int(d_model, "d_model", minimum=2)
    pairs = checks.sequence(pairs, "pairs", checks.non_negative_int)
    positions = checks.positive_int(positions, "positions")
    start = checks.non_negative_int(start, "start")
    shift = checks.non_negative_int(shift, "shift")
    n_pairs = d_model // 2
    if any(not 0 <= i < n_pairs for i in pairs):
        raise ValueError(f"Los pares deben estar entre 0 y {n_pairs - 1}; se recibió {pairs}.")
    table = P.sinusoidal(max(positions, start + shift + 1), d_model, base).double().numpy()
    omega = P.frequencies(d_model, base).numpy()
    fig, axes = style.new_figure(3.2 * len(pairs), 3.4, 1, len(pairs))
    axes = np.atleast_1d(axes)
    t = np.linspace(0, 2 * np.pi, 200)
    for ax, i in zip(axes, pairs, strict=True):
        ax.plot(np.cos(t), np.sin(t), color="#bbbbbb", linewidth=1)
        xs, ys = table[:positions, 2 * i], table[:positions, 2 * i + 1]
        ax.plot(xs, ys, "o", color=style.color(4), markersize=4)
        for p in range(min(positions, 6)):
            ax.annotate(str(p), (xs[p], ys[p]), textcoords="offset points", xytext=(4, 3), fontsize=7)
        a, b = table[start, 2 * i: 2 * i + 2], table[start + shift, 2 * i: 2 * i + 2]
        ax.plot(*a, "o", color=style.HIGHLIGHT, markersize=7, label=f"p = {start}")
        ax.plot(*b, "s", color=style.color(2), markersize=7, label=f"p = {start + shift}")
        phi0 = np.arctan2(a[1], a[0])
        arc = np.linspace(phi0, phi0 - shift * omega[i], 50)
        ax.plot(0.8 * np.cos(arc), 0.8 * np.sin(arc), color=style.HIGHLIGHT, linewidth=1.5)
        ax.set_title(f"par {i}: giro de {np.degrees(shift * omega[i]):.1f}° por {shift} posiciones",
                     fontsize=9)
        ax.set_aspect("equal")
        ax.set_xlim(-1.25, 1.25)
        ax.set_ylim(-1.25, 1.25)
        ax.set_xlabel(f"dim {2 * i} (sen)")
        ax.set_ylabel(f"dim {2 * i + 1} (cos)")
        ax.legend(loc="lower right", fontsize=7)
    fig.suptitle(title or f"Cada par recorre una circunferencia (d_model = {d_model})")
    return fig


def plot_dot_by_distance(d_model: int = 32, starts: Sequence[int] = (0, 40, 200), span: int = 60,
                         base: float = 10000.0, title: str | None = None) -> Figure:
    """``PE[p]·PE[p + δ]`` for ``δ = -span … span`` and each ``p`` in ``starts``.

    One line per ``p`` (``ax.lines`` in the order of ``starts``); they lie on
    top of each other because the product is ``Σ_i cos(δ·ω_i)``.
    """
    if isinstance(starts, (str, bytes)) or not isinstance(starts, (list, tuple, range)):
        raise ValueError(f"Las posiciones de partida deben ser enteros ≥ 0; se recibió {starts!r}.")
    starts = list(starts)
    if not starts or any(isinstance(p, bool) or not isinstance(p, int) or p < 0 for p in starts):
        raise ValueError(f"Las posiciones de partida deben ser enteros ≥ 0; se recibió {starts}.")
    span = checks.positive_int(span, "span")
    table = P.sinusoidal(max(starts) + span + 1, d_model, base).double()
    fig, ax = style.new_figure(7.0, 3.4)
    styles = ["-", "--", ":", "-."]
    for k, p in enumerate(starts):
        deltas = np.arange(-min(span, p), span + 1)
        dots = (table[p + deltas] @ table[p]).numpy()
        ax.plot(deltas, dots, linestyle=styles[k % 4], color=style.color(k if k < 3 else k + 1),
                linewidth=2.2 - 0.4 * k, label=f"p = {p}")
    ax.axhline(0, color="#999999", linewidth=0.8)
    ax.set_xlabel("distancia δ")
    ax.set_ylabel("PE[p] · PE[p + δ]")
    ax.set_title(title or f"El producto de dos codificaciones solo depende de su distancia "
                          f"(d_model = {d_model})")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return fig


def relative_scheme_matrices(n: int = 12, max_distance: int = 3, num_heads: int = 4,
                             d_k: int = 16, seed: int = 0) -> dict[str, np.ndarray]:
    """The ``(n, n)`` matrices drawn by :func:`plot_relative_schemes` (query i, key j).

    ``'shaw'``: ``clip(j - i, -K, K)``; ``'t5'``: T5 bucket (causal, 16
    buckets, max distance 32); ``'alibi'``: head 0's bias; ``'rope'``: the
    score ``(R_i q)·(R_j k)`` of one fixed random query/key pair.
    """
    n = checks.positive_int(n, "n")
    max_distance = checks.positive_int(max_distance, "max_distance")
    num_heads = checks.positive_int(num_heads, "num_heads")
    gen = torch.Generator().manual_seed(checks.non_negative_int(seed, "seed (semilla)"))
    rope = P.RotaryEmbedding(d_k)
    q, k = torch.randn(2, d_k, generator=gen)
    rq, rk = rope.rotate(q.expand(n, d_k)), rope.rotate(k.expand(n, d_k))
    return {
        "shaw": P.clipped_distances(n, max_distance=max_distance).numpy(),
        "t5": P.t5_buckets(P.relative_distances(n), 16, 32, bidirectional=False).numpy(),
        "alibi": P.ALiBi(num_heads)(n)[0, 0].numpy(),
        "rope": (rq @ rk.T).numpy(),
    }


def plot_relative_schemes(n: int = 12, max_distance: int = 3, num_heads: int = 4, d_k: int = 16,
                          seed: int = 0, title: str | None = None) -> Figure:
    """Four query × key heatmaps, one per relative scheme (see :func:`relative_scheme_matrices`)."""
    mats = relative_scheme_matrices(n, max_distance, num_heads, d_k, seed)
    titles = {
        "shaw": f"Shaw: clip(j − i, ±{max_distance})",
        "t5": "T5: cubeta causal de j − i",
        "alibi": f"ALiBi: −m·|j − i| (m = {P.alibi_slopes(num_heads)[0].item():g})",
        "rope": "RoPE: (R_i q)·(R_j k)",
    }
    fig, axes = style.new_figure(13.0, 3.6, 1, 4)
    for ax, (name, m) in zip(axes, mats.items(), strict=True):
        # Shaw's and RoPE's values have both signs; T5's buckets and ALiBi's bias one.
        heatmap(m, ax=ax, signed=name in ("shaw", "rope"), annotate=False, title=titles[name],
                xlabel="clave j", ylabel="consulta i")
        ax.title.set_fontsize(10)
    fig.suptitle(title or "Esquemas relativos: cada matriz es constante a lo largo de sus diagonales")
    return fig


def plot_extrapolation(results: Mapping[str, Mapping[int, float]], train_length: int,
                       chance: float | None = None, title: str | None = None) -> Figure:
    """Accuracy against test length, one line per scheme.

    ``results[scheme][length]`` is an accuracy in ``[0, 1]``; a vertical line
    marks ``train_length`` and a dotted one the chance level ``chance``.
    """
    if not isinstance(results, Mapping) or not results:
        raise ValueError("No hay resultados que dibujar: results debe ser un diccionario "
                         "{esquema: {longitud: exactitud}}.")
    for name, accs in results.items():
        if not isinstance(accs, Mapping) or not accs:
            raise ValueError(f"results[{name!r}] debe ser un diccionario {{longitud: exactitud}}.")
        for n, acc in accs.items():
            checks.positive_int(n, f"Cada longitud de results[{name!r}]")
            checks.probability(acc, f"La exactitud de results[{name!r}][{n}]")
    train_length = checks.positive_int(train_length, "train_length")
    if chance is not None:
        chance = checks.probability(chance, "chance")
    fig, ax = style.new_figure(7.0, 3.8)
    markers = "osD^v<>p"
    for k, (name, accs) in enumerate(results.items()):
        lengths = sorted(accs)
        ax.plot(lengths, [accs[n] for n in lengths], marker=markers[k % len(markers)],
                color=style.color(k if k < 3 else k + 1), linewidth=1.8, label=name)
    ax.axvline(train_length, color="black", linewidth=1, linestyle="--")
    ax.text(train_length, 1.04, " longitud de entrenamiento", fontsize=8, va="bottom")
    if chance is not None:
        ax.axhline(chance, color="#777777", linewidth=1, linestyle=":", label="azar")
    ax.set_xscale("log", base=2)
    lengths = sorted({n for accs in results.values() for n in accs})
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.set_ylim(0, 1.1)
    ax.set_xlabel("longitud de las secuencias de prueba")
    ax.set_ylabel("exactitud")
    ax.set_title(title or "Extrapolación a secuencias más largas")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize="small")
    ax.grid(alpha=0.3)
    return fig

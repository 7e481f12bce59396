"""Figures of chapter 6: gradients per layer, Noam schedules, loss curves, normalisation.

Every function returns a :class:`matplotlib.figure.Figure` built without
``pyplot`` (see :mod:`dldna.viz.style`), labelled in Spanish with the
colour-blind-safe palette. The numbers come from :mod:`dldna.training` and
:mod:`dldna.transformer`; the functions only draw them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from dldna import checks, training
from dldna.viz import style
from dldna.viz.attention import as_matrix
from dldna.viz.heatmap import heatmap, outline_cells

__all__ = [
    "gradient_norms_plot",
    "noam_curves",
    "noam_plot",
    "loss_plot",
    "normalization_plot",
    "activations_plot",
]

_MARKERS = ("o", "s", "^", "D", "v", "P")


def _series(values, name: str) -> dict[str, list[float]]:
    def numbers(vs) -> list[float]:
        if isinstance(vs, (str, bytes)) or vs is None:
            raise TypeError(f"{name}: cada serie debe ser una lista de números; se recibió {vs!r:.40}.")
        return [] if np.ndim(vs) == 1 and len(vs) == 0 else as_matrix(vs, name, ndim=1).tolist()

    if isinstance(values, Mapping):
        out = {str(k): numbers(vs) for k, vs in values.items()}
    else:
        out = {"": numbers(values)}
    if not out or any(len(v) == 0 for v in out.values()):
        raise ValueError(f"{name}: hace falta al menos una serie con algún valor.")
    return out


def gradient_norms_plot(norms: Mapping[str, Sequence[float]] | Sequence[float], *,
                        title: str = "Norma del gradiente por capa",
                        xlabel: str = "capa (0 = la más cercana a la entrada)",
                        log: bool = True, ax: Axes | None = None) -> Figure:
    """One line per series (name → norm of each layer), layers on the x axis."""
    data = _series(norms, "gradient_norms_plot")
    log = checks.boolean(log, "log")
    fig, ax = style.figure_or_new(ax, 6.4, 3.8)
    for i, (name, values) in enumerate(data.items()):
        ax.plot(range(len(values)), values, marker=_MARKERS[i % len(_MARKERS)], markersize=4,
                color=style.color(i), label=name or None)
    if log:
        ax.set_yscale("log")
    ax.set(title=title, xlabel=xlabel, ylabel="norma del gradiente" + (" (escala log)" if log else ""))
    ax.grid(True, which="major", alpha=0.3)
    if any(data):
        ax.legend(frameon=False)
    return fig


def noam_curves(d_model: int, warmups: Sequence[int], steps: int,
                factor: float = 1.0) -> dict[int, np.ndarray]:
    """Learning rate of steps ``1 … steps`` for each warm-up (see :func:`dldna.training.noam_rate`)."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps debe ser un entero positivo; se recibió {steps!r}.")
    t = np.arange(1, steps + 1, dtype=np.float64)
    curves = {}
    for w in checks.sequence(warmups, "warmups (pasos de calentamiento)", checks.positive_int):
        training.noam_rate(1, d_model, w, factor)  # validation, Spanish messages
        curves[int(w)] = factor * d_model ** -0.5 * np.minimum(t ** -0.5, t * w ** -1.5)
    return curves


def noam_plot(d_model: int = 512, warmups: Sequence[int] = (1000, 4000, 8000),
              steps: int = 20000, factor: float = 1.0, ax: Axes | None = None) -> Figure:
    """The Noam learning rate against the step, one curve per warm-up, peaks marked."""
    curves = noam_curves(d_model, warmups, steps, factor)
    fig, ax = style.figure_or_new(ax, 6.4, 3.8)
    t = np.arange(1, steps + 1)
    for i, (w, lr) in enumerate(curves.items()):
        ax.plot(t, lr, color=style.color(i), label=f"warmup = {w}")
        if w <= steps:
            ax.plot([w], [lr[w - 1]], marker=_MARKERS[i % len(_MARKERS)], color=style.color(i))
    ax.set(title=f"Regla de Noam (d_model = {d_model})", xlabel="paso de entrenamiento",
           ylabel="tasa de aprendizaje")
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, -3))
    ax.grid(True, alpha=0.3)
    ax.legend(frameon=False, title="calentamiento")
    return fig


def loss_plot(losses: Mapping[str, Sequence[float]] | Sequence[float], *,
              title: str = "Curva de pérdida", log: bool = True, ax: Axes | None = None) -> Figure:
    """Loss against the step (one or several named curves), log scale by default."""
    data = _series(losses, "loss_plot")
    log = checks.boolean(log, "log")
    fig, ax = style.figure_or_new(ax, 6.4, 3.6)
    for i, (name, values) in enumerate(data.items()):
        ax.plot(range(1, len(values) + 1), values, color=style.color(i + 4), label=name or None)
    if log:
        ax.set_yscale("log")
    ax.set(title=title, xlabel="paso", ylabel="pérdida" + (" (escala log)" if log else ""))
    ax.grid(True, which="both", alpha=0.3)
    if any(data):
        ax.legend(frameon=False)
    return fig


def _heat(ax: Axes, values: np.ndarray, title: str, row_labels: list[str], vmax: float) -> None:
    heatmap(values, ax=ax, row_labels=row_labels, col_labels=[f"d{c}" for c in range(values.shape[1])],
            signed=True, vmin=-vmax, vmax=vmax, annotate=True, fmt=".1f", colorbar=False,
            title=title, xlabel="rasgo")
    ax.title.set_fontsize(10)


def normalization_plot(x: torch.Tensor, eps: float = 1e-5) -> Figure:
    """A tensor ``(batch, seq, d)`` before and after BatchNorm and LayerNorm.

    Rows are the ``batch·seq`` tokens, columns the ``d`` features.
    BatchNorm averages each **column** (over batch and positions); LayerNorm
    each **row** (over the features of one token). A frame marks one group of
    each kind.
    """
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError("x debe ser un tensor (batch, seq, d) para comparar las normalizaciones.")
    x = checks.features(x, "x", finite=True)
    eps = checks.positive_number(eps, "eps")
    b, n, d = x.shape
    flat = x.detach().double().reshape(b * n, d)
    bn = (flat - flat.mean(0)) / torch.sqrt(flat.var(0, unbiased=False) + eps)
    ln = (flat - flat.mean(1, keepdim=True)) / torch.sqrt(flat.var(1, unbiased=False, keepdim=True)
                                                           + eps)
    labels = [f"frase {i} · pos {j}" for i in range(b) for j in range(n)]
    vmax = float(max(flat.abs().max(), bn.abs().max(), ln.abs().max()))
    fig, axes = style.new_figure(11, 0.45 * b * n + 1.8, 1, 3, sharey=True)
    _heat(axes[0], flat.numpy(), "entrada x", labels, vmax)
    _heat(axes[1], bn.numpy(), "BatchNorm: cada columna\n(lote y posiciones) → media 0", labels,
          vmax)
    _heat(axes[2], ln.numpy(), "LayerNorm: cada fila\n(rasgos de un tóken) → media 0", labels,
          vmax)
    axes[1].add_patch(Rectangle((0, 0), 1, b * n, fill=False, edgecolor=style.HIGHLIGHT,
                                linewidth=2.5, zorder=4))
    outline_cells(axes[2], [(0, 0)], width=d)
    for ax in axes:
        for k in range(1, b):
            ax.axhline(k * n, color="black", linewidth=1, zorder=3)
    fig.suptitle("Qué promedia cada normalización (recuadro: un grupo que se normaliza junto)")
    return fig


def activations_plot(ax: Axes | None = None) -> Figure:
    """ReLU and GELU (``x·Φ(x)``) on ``[-4, 4]``."""
    fig, ax = style.figure_or_new(ax, 6.0, 3.6)
    x = torch.linspace(-4, 4, 401, dtype=torch.float64)
    ax.plot(x, torch.relu(x), color=style.color(4), label="ReLU: max(0, x)")
    ax.plot(x, x * 0.5 * (1 + torch.erf(x / math.sqrt(2))), color=style.color(0), linestyle="--",
            label="GELU: x·Φ(x)")
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set(title="Activaciones de la red feed-forward", xlabel="x", ylabel="activación")
    ax.grid(True, alpha=0.3)
    ax.legend(frameon=False)
    return fig

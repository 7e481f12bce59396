"""Pictures of the Vision Transformer: patches, attention of ``[CLS]``, rollout, positions.

Every function returns a :class:`matplotlib.figure.Figure` built without
``pyplot``, with a title and Spanish labels, in colour-blind-safe colour maps
(``viridis`` for weights and similarities, grey levels for the digits):

* :func:`plot_patches`: a digit cut into patches, and the token sequence
  (``[CLS]`` + one token per patch, with its flattened values);
* :func:`plot_cls_attention`: what ``[CLS]`` looks at, one panel per head;
* :func:`plot_rollout`: attention rollout over several digits;
* :func:`plot_position_similarity`: cosine similarity of each patch's
  position embedding with all the others (figure 7 of the ViT paper);
* :func:`plot_patch_size`: the picture of the patch-size explorer;
* :func:`plot_windows`: Swin's window partition of a grid of tokens.

The numbers come from :mod:`dldna.vit`; these functions only draw them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from dldna.viz import style
from dldna.viz.attention import as_matrix
from dldna.viz.heatmap import heatmap, outline_cells
from dldna.viz.style import IMAGE_CMAP, PALETTE, SEQUENTIAL_CMAP, new_figure

__all__ = [
    "as_image",
    "plot_patches",
    "plot_cls_attention",
    "plot_rollout",
    "plot_position_similarity",
    "plot_patch_size",
    "plot_windows",
]

DIGIT_CMAP = IMAGE_CMAP  # ink dark on white paper, as a digit is written
CLS_COLOR = PALETTE[0]  # orange
GRID_COLOR = style.GRID_COLOR  # vermillion, visible on grey and on viridis


def _numbers(values, name: str) -> np.ndarray:
    """``values`` as a finite float64 array of any shape (text, booleans and NaN refused)."""
    ndim = np.ndim(values) if not isinstance(values, (str, bytes)) else 0
    return as_matrix(values, name, ndim=max(ndim, 1))


def as_image(image) -> np.ndarray:
    """A 2-D float array from an image given as ``(H, W)``, ``(1, H, W)`` or ``(1, 1, H, W)``."""
    a = _numbers(image, "La imagen")
    while a.ndim > 2 and a.shape[0] == 1:
        a = a[0]
    if a.ndim != 2:
        raise ValueError(
            f"La imagen debe tener forma (alto, ancho) o (1, alto, ancho); se recibió {a.shape}."
        )
    return a


def _check_patch(image: np.ndarray, patch_size: int) -> int:
    if isinstance(patch_size, bool) or not isinstance(patch_size, (int, np.integer)) or patch_size < 1:
        raise ValueError(f"El tamaño del parche debe ser un entero positivo; se recibió {patch_size!r}.")
    h, w = image.shape
    if h % patch_size or w % patch_size:
        raise ValueError(f"El tamaño de parche {patch_size} no divide a la imagen de {h}×{w}.")
    return int(patch_size)


def _draw_grid(ax, h: int, w: int, p: int, numbers: bool = True, color: str = GRID_COLOR) -> None:
    for k in range(0, w + 1, p):
        ax.axvline(k - 0.5, color=color, linewidth=1.6)
    for k in range(0, h + 1, p):
        ax.axhline(k - 0.5, color=color, linewidth=1.6)
    if numbers and p > 1:
        g = w // p
        for r in range(h // p):
            for c in range(g):
                ax.text(c * p - 0.5 + 0.12, r * p - 0.5 + 0.12, str(r * g + c + 1), ha="left",
                        va="top", fontsize=8, color="white",
                        bbox={"boxstyle": "round,pad=0.1", "facecolor": color, "edgecolor": "none"})


def _image_axes(ax, image: np.ndarray, title: str | None = None) -> None:
    ax.imshow(image, cmap=DIGIT_CMAP, vmin=0.0, vmax=1.0, interpolation="nearest")
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title, fontsize=10)


def plot_patches(image, patch_size: int = 2, *, title: str | None = None) -> Figure:
    """A digit cut into ``p × p`` patches (numbered row by row) and the sequence it becomes.

    Left: the image with the patch grid. Right: the tokens in order, ``[CLS]``
    first, each patch drawn as a tile above a strip with its ``p²`` values
    flattened (the vector that the linear projection receives).
    """
    img = as_image(image)
    p = _check_patch(img, patch_size)
    h, w = img.shape
    g_h, g_w = h // p, w // p
    n = g_h * g_w
    per_row = min(n + 1, 17)
    rows = int(np.ceil((n + 1) / per_row))
    fig, (ax, seq) = new_figure(3.4 + 0.55 * per_row, max(3.0, 1.25 * rows + 1.3), 1, 2,
                                gridspec_kw={"width_ratios": [3.0, 0.55 * per_row]})
    _image_axes(ax, img)
    _draw_grid(ax, h, w, p)
    ax.set_title(f"Imagen {h}×{w} en parches de {p}×{p}", fontsize=10)
    step, row_h = 1.3, 2.2
    for k in range(n + 1):
        x0, y0 = (k % per_row) * step, (k // per_row) * row_h
        if k == 0:
            seq.add_patch(Rectangle((x0, y0), 1, 1, facecolor=CLS_COLOR, edgecolor="black"))
            seq.text(x0 + 0.5, y0 + 0.5, "CLS", ha="center", va="center", fontsize=7,
                     fontweight="bold")
            seq.text(x0 + 0.5, y0 - 0.1, "0", ha="center", va="bottom", fontsize=7)
            continue
        r, c = divmod(k - 1, g_w)
        patch = img[r * p:(r + 1) * p, c * p:(c + 1) * p]
        seq.imshow(patch, cmap=DIGIT_CMAP, vmin=0.0, vmax=1.0, interpolation="nearest",
                   extent=(x0, x0 + 1, y0 + 1, y0))
        seq.add_patch(Rectangle((x0, y0), 1, 1, fill=False, edgecolor=GRID_COLOR))
        seq.text(x0 + 0.5, y0 - 0.1, str(k), ha="center", va="bottom", fontsize=7)
        seq.imshow(patch.reshape(1, -1), cmap=DIGIT_CMAP, vmin=0.0, vmax=1.0,
                   interpolation="nearest", extent=(x0, x0 + 1, y0 + 1.55, y0 + 1.25))
        seq.add_patch(Rectangle((x0, y0 + 1.25), 1, 0.3, fill=False, edgecolor="#555555",
                                linewidth=0.6))
    seq.set_xlim(-0.2, per_row * step)
    seq.set_ylim(rows * row_h - 0.4, -0.5)
    seq.set_aspect("equal")
    seq.axis("off")
    seq.set_title(f"La secuencia: [CLS] + {n} tókenes; debajo de cada parche, sus {p * p} "
                  "valores aplanados", fontsize=10)
    fig.suptitle(title or "De la imagen a la secuencia de parches")
    return fig


def _maps(values, name: str) -> np.ndarray:
    a = _numbers(values, name)
    if a.ndim != 3 or a.shape[1] != a.shape[2]:
        raise ValueError(f"{name} debe tener forma (paneles, g, g); se recibió {a.shape}.")
    return a


def _overlay(ax, image: np.ndarray, grid_map: np.ndarray, vmax: float | None = None):
    """A g×g map stretched over the image, with the digit's outline on top."""
    h, w = image.shape
    im = ax.imshow(grid_map, cmap=SEQUENTIAL_CMAP, vmin=0.0, vmax=vmax,
                   extent=(-0.5, w - 0.5, h - 0.5, -0.5), interpolation="nearest")
    ax.contour(np.arange(w), np.arange(h), image, levels=[0.4], colors="white", linewidths=1.4)
    ax.set_xlim(-0.5, w - 0.5)
    ax.set_ylim(h - 0.5, -0.5)
    ax.set_xticks([])
    ax.set_yticks([])
    return im


def plot_cls_attention(weights, image, *, layer: int | None = None, title: str | None = None) -> Figure:
    """What ``[CLS]`` attends to, one panel per head, over the digit.

    ``weights``: ``(heads, g, g)`` from :func:`dldna.vit.cls_attention` for one
    image. Each panel shares the colour scale; the white line is the outline
    of the digit. The number above a panel is the weight ``[CLS]`` puts on
    the patches (the rest goes to itself).
    """
    maps = _maps(weights, "Los pesos de [CLS]")
    img = as_image(image)
    heads = maps.shape[0]
    fig, axes = new_figure(2.0 * (heads + 1) + 0.6, 2.7, 1, heads + 1)
    axes = np.atleast_1d(axes)
    _image_axes(axes[0], img, "imagen")
    vmax = float(maps.max()) or 1.0
    im = None
    for k in range(heads):
        im = _overlay(axes[k + 1], img, maps[k], vmax)
        axes[k + 1].set_title(f"cabeza {k + 1}\n(en parches: {maps[k].sum():.2f})", fontsize=9)
    fig.colorbar(im, ax=axes[1:].tolist(), shrink=0.8, label="peso de atención de [CLS]")
    where = f" en la capa {layer}" if layer is not None else ""
    fig.suptitle(title or f"Atención de [CLS] sobre los parches{where}")
    return fig


def plot_rollout(images, maps, *, labels: Sequence[str] | None = None,
                 title: str | None = None) -> Figure:
    """Digits (top row) and the attention rollout of ``[CLS]`` over each (bottom row).

    ``maps``: ``(n, g, g)``, the ``[CLS]`` row of the rollout without its first
    column, one per image; each is normalised to its own maximum.
    """
    rollout = _maps(maps, "El rollout")
    if isinstance(images, (str, bytes)) or np.ndim(images) == 0:
        raise TypeError("images debe ser una lista (o un tensor) de imágenes; "
                        f"se recibió {type(images).__name__}.")
    imgs = [as_image(im) for im in images]
    if len(imgs) != rollout.shape[0]:
        raise ValueError(f"Hay {len(imgs)} imágenes y {rollout.shape[0]} mapas: deben coincidir.")
    n = len(imgs)
    if labels is not None:
        labels = style.labels(labels, n, "imágenes")
    fig, axes = new_figure(1.7 * n + 0.8, 3.9, 2, n)
    axes = np.asarray(axes).reshape(2, n)
    im = None
    for k in range(n):
        _image_axes(axes[0, k], imgs[k], labels[k] if labels is not None else None)
        m = rollout[k] / (rollout[k].max() or 1.0)
        im = _overlay(axes[1, k], imgs[k], m, 1.0)
    axes[0, 0].set_ylabel("imagen")
    axes[1, 0].set_ylabel("rollout")
    fig.colorbar(im, ax=axes[1].tolist(), shrink=0.85, label="relativo al máximo")
    fig.suptitle(title or "Rollout de la atención: de qué parches sale el vector final de [CLS]")
    return fig


def plot_position_similarity(similarity, *, title: str | None = None) -> Figure:
    """Figure 7 of the ViT paper: for each patch (a small panel placed at its spot
    in the grid), the cosine similarity of its position embedding with every patch.

    ``similarity``: ``(g, g, g, g)`` from :func:`dldna.vit.position_similarity`.
    """
    s = _numbers(similarity, "La similitud")
    if s.ndim != 4 or len(set(s.shape)) != 1:
        raise ValueError(f"La similitud debe tener forma (g, g, g, g); se recibió {s.shape}.")
    g = s.shape[0]
    size = min(1.3, 7.0 / g)
    fig, axes = new_figure(size * g + 1.3, size * g + 0.9, g, g)
    axes = np.asarray(axes).reshape(g, g)
    im = None
    for r in range(g):
        for c in range(g):
            ax = axes[r, c]
            heatmap(s[r, c], ax=ax, signed=True, vmin=-1.0, vmax=1.0, annotate=False,
                    colorbar=False, row_labels=False, col_labels=False)
            im = ax.collections[0]
            outline_cells(ax, [(r, c)], linewidth=1.5)
            if c == 0:
                ax.set_ylabel(f"fila {r + 1}", fontsize=8)
            if r == g - 1:
                ax.set_xlabel(f"col. {c + 1}", fontsize=8)
    fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.8, label="similitud coseno")
    fig.suptitle(title or "Similitud de las incrustaciones de posición (recuadro: el propio parche)")
    return fig


def plot_patch_size(image, patch_size: int, table: Mapping[int, Mapping[str, float | None]], *,
                    title: str | None = None) -> Figure:
    """The patch-size explorer: the digit cut with ``patch_size`` and three bar charts.

    ``table``: ``{p: {"tokens", "total_macs", "accuracy" (or None if not
    trained)}}``. The bars of the chosen size are orange; a size without an
    accuracy shows «sin entrenar».
    """
    img = as_image(image)
    p = _check_patch(img, patch_size)
    if not isinstance(table, Mapping) or not all(isinstance(row, Mapping) for row in table.values()):
        raise TypeError("table debe ser la tabla de dldna.widgets.vit.patch_table "
                        "({tamaño: {tokens, total_macs, accuracy...}}).")
    sizes = sorted(table)
    if p not in table:
        raise ValueError(f"El tamaño de parche {p} no está en la tabla ({sizes}).")
    fig, axes = new_figure(12.0, 3.6, 1, 4)
    h, w = img.shape
    _image_axes(axes[0], img)
    _draw_grid(axes[0], h, w, p, numbers=(h // p) * (w // p) <= 16)
    axes[0].set_title(f"parches de {p}×{p}: {(h // p) * (w // p)} + [CLS]", fontsize=10)
    labels = [str(s) for s in sizes]
    colors = [PALETTE[0] if s == p else PALETTE[4] for s in sizes]
    specs = [("tokens", "tókenes (con [CLS])", "{:.0f}", 1.0),
             ("total_macs", "coste (miles de MAC por imagen)", "{:.0f}", 1e-3),
             ("accuracy", "exactitud en prueba (%)", "{:.1f}", 100.0)]
    for ax, (key, label, fmt, scale) in zip(axes[1:], specs, strict=True):
        values = [table[s].get(key) for s in sizes]
        shown = [0.0 if v is None else float(v) * scale for v in values]
        bars = ax.bar(labels, shown, color=colors)
        top = max(shown) or 1.0
        bottom = 0.0
        if key == "accuracy":
            trained = [v for v in shown if v > 0]
            bottom = max(0.0, min(trained) - 10.0) if trained else 0.0
            top = 100.0
            ax.set_ylim(bottom, top + 0.5)
        else:
            ax.set_ylim(0.0, top * 1.15)
        for bar, v, raw in zip(bars, shown, values, strict=True):
            if raw is None:
                ax.text(bar.get_x() + bar.get_width() / 2, bottom + 0.02 * (top - bottom),
                        "sin\nentrenar", ha="center", va="bottom", fontsize=8)
            else:
                ax.text(bar.get_x() + bar.get_width() / 2, v, fmt.format(v), ha="center",
                        va="bottom", fontsize=8)
        ax.set_xlabel("tamaño del parche p")
        ax.set_title(label, fontsize=10)
    fig.suptitle(title or "El tamaño del parche: tókenes, coste y exactitud")
    return fig


def plot_windows(height: int, width: int, window: int, shift: int = 0, *, ax=None,
                 title: str | None = None) -> Figure:
    """Swin's windows on a ``height × width`` grid of tokens: one colour per window.

    Each cell is a token (numbered row by row); tokens of the same colour
    attend to each other, as :func:`dldna.vit.window_mask` allows.
    """
    from dldna.vit import window_mask

    mask = window_mask(height, width, window, shift).numpy()
    ids = np.full(height * width, -1)
    next_id = 0
    for k in range(height * width):
        if ids[k] < 0:
            ids[mask[k]] = next_id
            next_id += 1
    style.figure_or_new(ax) if ax is not None else None  # a Spanish refusal of what is not an axes
    own = ax is None
    if own:
        fig, ax = new_figure(0.45 * width + 1.0, 0.45 * height + 1.0)
    else:
        fig = ax.figure
    colours = [PALETTE[i] for i in (1, 0, 2, 6, 4, 3, 5)] + ["#999999", "#dddddd"]
    for k, i in enumerate(ids):
        r, c = divmod(k, width)
        ax.add_patch(Rectangle((c, r), 1, 1, facecolor=colours[i % len(colours)], edgecolor="white"))
        ax.text(c + 0.5, r + 0.5, str(k), ha="center", va="center", fontsize=7)
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title or f"ventanas de {window}×{window}, desplazamiento {shift}: {next_id} ventanas",
                 fontsize=10)
    return fig

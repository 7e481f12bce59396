"""Pictures of positional encodings: waves per dimension pair, heatmap, similarity.

The explorer shows *kinds* of positional information. A kind is a
:class:`PositionalKind`: a Spanish label and a function
``compute(n_positions, d_model, base) -> PositionalData``. Registered here:
``"sinusoidal"``, ``"rope"`` (each pair of a unit vector turned by ``p·θ_i``;
the similarity is RoPE's normalised score) and ``"alibi"`` (columns are heads,
``-m_h·p``; the base plays no part). Other kinds can be added with
:func:`register_kind`, and every view (matplotlib and the
static browser view of :mod:`dldna.widgets.positional`) draws them without
changes, because both only read :class:`PositionalData`:

* ``table`` ``(n_positions, d_model)``: what the heatmap shows and whose
  columns ``2i`` and ``2i+1`` are the two waves of pair ``i``;
* ``similarity`` ``(n_positions, n_positions)``: row ``p`` is the similarity
  of position ``p`` with every position;
* ``wavelengths`` ``(d_model/2,)``: the wavelength of each pair, in positions
  (``2π·base^(2i/d)`` for the sinusoidal encoding), or ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dldna import checks
from dldna import positional as _positional
from dldna.viz import style
from dldna.viz.attention import as_matrix
from dldna.viz.heatmap import heatmap, outline_cells

__all__ = [
    "PositionalData",
    "PositionalKind",
    "KINDS",
    "register_kind",
    "positional_data",
    "cosine_similarity_matrix",
    "check_pairs",
    "positional_waves",
    "positional_heatmap",
    "positional_similarity",
    "positional_panel",
]


@dataclass(frozen=True)
class PositionalData:
    """Everything the positional views draw, for one kind, ``d_model`` and base."""

    kind: str
    label: str
    d_model: int
    base: float
    table: np.ndarray
    similarity: np.ndarray
    wavelengths: np.ndarray | None
    value_label: str = "valor de la codificación"
    column_label: str = "dimensión"
    similarity_label: str = "similitud coseno"
    wave_labels: tuple[str, str] = ("sen", "cos")
    value_range: tuple[float, float] = (-1.0, 1.0)
    similarity_range: tuple[float, float] = (-1.0, 1.0)
    extra: dict = field(default_factory=dict)

    @property
    def n_positions(self) -> int:
        return int(self.table.shape[0])


@dataclass(frozen=True)
class PositionalKind:
    """A kind of positional information the explorer can show."""

    name: str
    label: str
    compute: Callable[[int, int, float], PositionalData]
    description: str = ""


KINDS: dict[str, PositionalKind] = {}


def register_kind(kind: PositionalKind, replace: bool = False) -> PositionalKind:
    """Add a kind to :data:`KINDS` (``replace=True`` to overwrite one)."""
    if not isinstance(kind, PositionalKind):
        raise TypeError(f"kind debe ser un PositionalKind; se recibió {type(kind).__name__}.")
    replace = checks.boolean(replace, "replace")
    if kind.name in KINDS and not replace:
        raise ValueError(f"Ya existe un tipo de codificación posicional llamado {kind.name!r}.")
    KINDS[kind.name] = kind
    return kind


def cosine_similarity_matrix(table) -> np.ndarray:
    """Cosine similarity between every pair of rows of ``table`` ``(n, d)`` → ``(n, n)``."""
    t = torch.from_numpy(as_matrix(table, "table"))
    unit = torch.nn.functional.normalize(t, dim=-1)
    return (unit @ unit.T).numpy()


def _sinusoidal(n_positions: int, d_model: int, base: float) -> PositionalData:
    table = _positional.sinusoidal(n_positions, d_model, base).double().numpy()
    return PositionalData(
        kind="sinusoidal",
        label=KINDS["sinusoidal"].label,
        d_model=d_model,
        base=float(base),
        table=table,
        similarity=cosine_similarity_matrix(table),
        wavelengths=_positional.wavelengths(d_model, base).double().numpy(),
    )


register_kind(
    PositionalKind(
        name="sinusoidal",
        label="sinusoidal (Vaswani et al., 2017)",
        compute=_sinusoidal,
        description="PE[p, 2i] = sen(p / base^(2i/d)), PE[p, 2i+1] = cos(p / base^(2i/d)).",
    )
)


def _rope(n_positions: int, d_model: int, base: float) -> PositionalData:
    # Pair i of the unit vector (1, 0, 1, 0, …) turned by p·θ_i: (cos pθ_i, sin pθ_i).
    theta = _positional.frequencies(d_model, base)
    angles = torch.arange(n_positions, dtype=torch.float64)[:, None] * theta[None, :]
    table = np.empty((n_positions, d_model))
    table[:, 0::2] = torch.cos(angles).numpy()
    table[:, 1::2] = torch.sin(angles).numpy()
    return PositionalData(
        kind="rope",
        label=KINDS["rope"].label,
        d_model=d_model,
        base=float(base),
        table=table,
        similarity=cosine_similarity_matrix(table),  # = mean of cos((j - p)·θ_i): RoPE's score
        wavelengths=_positional.wavelengths(d_model, base).double().numpy(),
        value_label="componente del par girado",
        similarity_label="puntuación RoPE (normalizada)",
        wave_labels=("x = cos", "y = sen"),
    )


def _alibi(n_positions: int, d_model: int, base: float) -> PositionalData:
    # Columns are heads (d_model of them; ALiBi has no base): the bias -m_h·δ of a key δ places away.
    _positional._check_sinusoidal_args(d_model, base)
    slopes = _positional.alibi_slopes(d_model).double().numpy()
    dist = np.arange(n_positions, dtype=np.float64)
    table = -dist[:, None] * slopes[None, :]
    similarity = -np.abs(dist[None, :] - dist[:, None]) * slopes.mean()
    low = -float(n_positions - 1)  # every slope is ≤ 1
    return PositionalData(
        kind="alibi",
        label=KINDS["alibi"].label,
        d_model=d_model,
        base=float(base),
        table=table,
        similarity=similarity,
        wavelengths=None,
        value_label="sesgo −m_h·distancia",
        column_label="cabeza (d_model = número de cabezas)",
        similarity_label="sesgo medio de las cabezas",
        wave_labels=("cabeza par", "cabeza impar"),
        value_range=(low, 0.0),
        similarity_range=(low, 0.0),
        extra={"slopes": slopes},
    )


register_kind(
    PositionalKind(
        name="rope",
        label="RoPE, pares girados (Su et al., 2024)",
        compute=_rope,
        description="El par i gira p·θ_i, θ_i = base^(-2i/d); la similitud solo depende de la distancia.",
    )
)
register_kind(
    PositionalKind(
        name="alibi",
        label="ALiBi, sesgo por distancia (Press et al., 2022)",
        compute=_alibi,
        description="Columna h: sesgo −m_h·δ de una clave a δ posiciones; m_h = 2^(-8h/H). "
                    "La base no interviene.",
    )
)


def positional_data(
    kind: str = "sinusoidal",
    n_positions: int = 48,
    d_model: int = 16,
    base: float = 10000.0,
) -> PositionalData:
    """Compute :class:`PositionalData` for a registered kind (errors in Spanish)."""
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(
            f"Tipo de codificación posicional desconocido: {kind!r}. "
            f"Tipos disponibles: {', '.join(sorted(KINDS))}."
        )
    if isinstance(n_positions, bool) or not isinstance(n_positions, (int, np.integer)) or (
        n_positions < 2
    ):
        raise ValueError(
            f"El número de posiciones debe ser un entero mayor o igual que 2; "
            f"se recibió {n_positions!r}."
        )
    # dldna.positional checks d_model (even, ≥ 2) and base (> 1) with Spanish messages.
    if isinstance(d_model, np.integer):
        d_model = int(d_model)
    return KINDS[kind].compute(int(n_positions), d_model, base)


def check_pairs(pairs: Sequence[int] | int, d_model: int) -> list[int]:
    """Validated, sorted, de-duplicated dimension-pair indices ``0 <= i < d_model/2``."""
    if isinstance(pairs, (int, np.integer)) and not isinstance(pairs, bool):
        pairs = [int(pairs)]
    # Each index must be an integer: 1.5 or "1" would silently become pair 1, "01" pairs 0 and 1.
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, (list, tuple, range, np.ndarray)) \
            or not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in pairs):
        raise ValueError(
            f"Los pares de dimensiones deben ser enteros; se recibió {pairs!r}."
        )
    chosen = sorted({int(i) for i in pairs})
    n_pairs = checks.positive_int(d_model, "d_model") // 2
    if not chosen:
        raise ValueError("Hace falta elegir al menos un par de dimensiones para ver sus ondas.")
    bad = [i for i in chosen if not 0 <= i < n_pairs]
    if bad:
        raise ValueError(
            f"El par de dimensiones {bad[0]} no existe: con d_model = {d_model} hay {n_pairs} "
            f"pares (0 a {n_pairs - 1})."
        )
    return chosen


def _check_data(data) -> None:
    if not isinstance(data, PositionalData):
        raise TypeError(f"data debe ser el resultado de positional_data (PositionalData); "
                        f"se recibió {type(data).__name__}.")


def _check_cursor(cursor: int | None, n: int) -> None:
    if cursor is None:
        return
    if isinstance(cursor, bool) or not isinstance(cursor, (int, np.integer)) or not 0 <= cursor < n:
        raise ValueError(
            f"La posición del cursor ({cursor!r}) no existe: hay {n} posiciones (0 a {n - 1})."
        )


def format_wavelength(value: float) -> str:
    """A wavelength for a legend: ``6.28``, ``62.8``, ``6283``, ``6.3e+04``."""
    if value < 100:
        return f"{value:.3g}" if value < 10 else f"{value:.1f}"
    if value < 1e5:
        return f"{value:.0f}"
    return f"{value:.2g}"


def positional_waves(
    data: PositionalData,
    pairs: Sequence[int] | int = (0,),
    *,
    cursor: int | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure:
    """The two waves (columns ``2i``, ``2i+1``) of each chosen pair over the positions.

    Each pair has one colour; the first wave is solid, the second dashed. The
    legend gives the pair's wavelength in positions. ``cursor`` draws a
    vertical line at that position. One line per wave: ``ax.lines`` (in pair
    order, first wave then second), their y-data are the table's columns.
    """
    _check_data(data)
    chosen = check_pairs(pairs, data.d_model)
    _check_cursor(cursor, data.n_positions)
    fig, ax = style.figure_or_new(ax, 8.0, 3.2)
    x = np.arange(data.n_positions)
    for k, i in enumerate(chosen):
        lam = ""
        if data.wavelengths is not None:
            lam = f", λ = {format_wavelength(float(data.wavelengths[i]))}"
        col = style.color(k if k < 3 else k + 1)  # skip the yellow, poor on white
        ax.plot(x, data.table[:, 2 * i], color=col, marker="o", markersize=2.5, linewidth=1.6,
                label=f"par {i}: dim {2 * i} ({data.wave_labels[0]}){lam}")
        ax.plot(x, data.table[:, 2 * i + 1], color=col, linestyle="--", linewidth=1.3,
                label=f"par {i}: dim {2 * i + 1} ({data.wave_labels[1]})")
    if cursor is not None:
        ax.axvline(cursor, color="black", linewidth=1, alpha=0.7)
    ax.set_xlim(0, data.n_positions - 1)
    lo, hi = data.value_range
    ax.set_ylim(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo))
    ax.set_xlabel("posición")
    ax.set_ylabel(data.value_label)
    ax.set_title(title or f"Ondas por par de dimensiones (d_model = {data.d_model}, "
                          f"base = {data.base:g})")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize="small")
    ax.grid(alpha=0.3)
    return fig


def positional_heatmap(
    data: PositionalData,
    *,
    cursor: int | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    colorbar: bool = True,
) -> Figure:
    """Heatmap of ``data.table``: positions down, dimensions across (diverging colours
    centred at 0 for signed tables), the ``cursor`` row outlined."""
    _check_data(data)
    _check_cursor(cursor, data.n_positions)
    lo, hi = data.value_range
    fig = heatmap(data.table, ax=ax, signed=lo < 0, vmin=lo, vmax=hi, annotate=False,
                  title=title or "Posición × dimensión", xlabel=data.column_label,
                  ylabel="posición", colorbar=colorbar, colorbar_label=data.value_label,
                  width=6.0, height=4.5)
    if cursor is not None:
        outline_cells(fig.axes[0] if ax is None else ax, [(cursor, 0)],
                      width=data.table.shape[1], color="black", linewidth=2)
    return fig


def positional_similarity(
    data: PositionalData,
    cursor: int = 0,
    *,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure:
    """Similarity of the cursor's position with every position (``data.similarity[cursor]``)."""
    _check_data(data)
    _check_cursor(checks.non_negative_int(cursor, "cursor (la posición elegida)"), data.n_positions)
    fig, ax = style.figure_or_new(ax, 5.0, 3.2)
    x = np.arange(data.n_positions)
    row = data.similarity[cursor]
    ax.plot(x, row, color=style.PALETTE[4], marker="o", markersize=2.5, linewidth=1.6)
    ax.plot([cursor], [row[cursor]], marker="o", markersize=8, color=style.HIGHLIGHT,
            linestyle="none", label=f"posición {cursor}")
    ax.axvline(cursor, color="black", linewidth=1, alpha=0.7)
    lo, hi = data.similarity_range
    ax.set_ylim(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
    ax.set_xlim(0, data.n_positions - 1)
    ax.set_xlabel("posición")
    ax.set_ylabel(data.similarity_label)
    ax.set_title(title or f"Similitud de la posición {cursor} con las demás")
    ax.legend(loc="lower right", fontsize="small")
    ax.grid(alpha=0.3)
    return fig


def positional_panel(
    data: PositionalData,
    pairs: Sequence[int] | int = (0,),
    cursor: int = 0,
    *,
    title: str | None = None,
) -> Figure:
    """Waves (top), heatmap and similarity (bottom) in one figure.

    Axes have gids ``"waves"``, ``"heatmap"`` and ``"similarity"``.
    """
    _check_data(data)
    fig = Figure(figsize=(11.0, 7.2), layout="constrained")
    axd = fig.subplot_mosaic([["waves", "waves"], ["heatmap", "similarity"]],
                             height_ratios=[1, 1.25])
    positional_waves(data, pairs, cursor=cursor, ax=axd["waves"])
    positional_heatmap(data, cursor=cursor, ax=axd["heatmap"])
    positional_similarity(data, cursor, ax=axd["similarity"])
    for name, axis in axd.items():
        axis.set_gid(name)
    fig.suptitle(title or f"Codificación posicional {data.label}")
    return fig

"""Figures of decoding and of translation: the beam-search tree, the effect of
temperature / top-k / top-p on a next-token distribution, the trade-off of
temperature, and cross-attention against a reference alignment.

Every function returns a :class:`matplotlib.figure.Figure` built without
``pyplot`` (see :mod:`dldna.viz.style`), with a title and Spanish labels.
Colours come from the Okabe–Ito palette and every category also has its own
marker or hatch, so nothing relies on colour alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from dldna import checks
from dldna.viz import style
from dldna.viz.attention import as_matrix, attention_heatmap
from dldna.viz.heatmap import outline_cells

__all__ = [
    "beam_tree_layout",
    "beam_tree",
    "sampling_filters",
    "temperature_tradeoff",
    "alignment_heatmap",
]

#: Look of each node status of :class:`dldna.decoding.BeamNode`: colour, marker, Spanish label.
NODE_STYLE: dict[str, tuple[str, str, str]] = {
    "root": ("#000000", "o", "inicio (BOS)"),
    "kept": (style.PALETTE[4], "o", "se queda en el haz"),
    "finished": (style.PALETTE[2], "s", "termina (EOS): candidata"),
    "pruned": ("#9e9e9e", "X", "descartada (fuera del haz)"),
}


def _check_tree(tree):
    """``tree`` if it is a recorded :class:`dldna.decoding.BeamTree` with nodes."""
    from dldna.decoding import BeamTree

    if not isinstance(tree, BeamTree):
        raise TypeError(
            "tree debe ser el árbol que registra beam_search (un BeamTree: p. ej. "
            f"beam_search(..., trace=0).tree); se recibió {type(tree).__name__}."
        )
    if not tree.nodes:
        raise ValueError("El árbol está vacío: no registra ningún paso de la búsqueda. "
                         "Pasa trace=0 (el índice de una entrada) a beam_search.")
    ids = {n.id for n in tree.nodes}
    if any(n.parent is not None and n.parent not in ids for n in tree.nodes) or \
            any(i not in ids for i in tree.best_path):
        raise ValueError("El árbol no es coherente: un nodo o el mejor camino nombra un nodo que no existe.")
    return tree


def _check_figures(values, name: str, *, n: int | None = None, positive: bool = False) -> np.ndarray:
    """A 1-d sequence of finite numbers (of length ``n``) as an array."""
    if isinstance(values, (str, bytes)) or values is None or not hasattr(values, "__len__"):
        raise TypeError(f"{name} debe ser una lista de números; se recibió {type(values).__name__}.")
    try:
        array = np.asarray(values.detach().cpu() if hasattr(values, "detach") else values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} debe ser una lista de números; se recibió {values!r}.") from None
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} debe ser una lista no vacía de números; tiene forma {array.shape}.")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contiene NaN o infinitos; se esperaban números finitos.")
    if positive and (array <= 0).any():
        raise ValueError(f"{name} debe contener números positivos (el eje es logarítmico).")
    if n is not None and array.size != n:
        raise ValueError(f"{name} tiene {array.size} valores y hacen falta {n}, uno por temperatura.")
    return array


def beam_tree_layout(tree) -> dict[int, tuple[float, float]]:
    """``node id -> (x, y)``: x is the step, y the rank within the step, children
    ordered by their parent's position and then by score (few crossing edges)."""
    _check_tree(tree)
    pos: dict[int, tuple[float, float]] = {}
    by_step: dict[int, list] = {}
    for node in tree.nodes:
        by_step.setdefault(node.step, []).append(node)
    for step in sorted(by_step):
        nodes = by_step[step]
        if step == 0:
            order = nodes
        else:
            order = sorted(nodes, key=lambda n: (pos[n.parent][1], -n.log_prob))
        for i, node in enumerate(order):
            pos[node.id] = (float(step), float(i))
    # Centre every column on the widest one.
    widest = max(len(v) for v in by_step.values())
    for node_id, (x, y) in pos.items():
        pos[node_id] = (x, y + (widest - len(by_step[int(x)])) / 2)
    return pos


def beam_tree(
    tree,
    token_label: Callable[[int], str] | Sequence[str],
    *,
    title: str | None = None,
    show_prob: bool = True,
) -> Figure:
    """Draw the search recorded by :func:`dldna.decoding.beam_search` (``trace=``).

    Columns are steps; each node is a candidate extension, labelled with its
    token and the cumulative probability of the prefix it ends. Blue circles
    stayed in the beam, green squares ended with EOS and became candidates,
    grey crosses were discarded; the thick vermillion path is the answer.

    Args:
        tree: a :class:`dldna.decoding.BeamTree`.
        token_label: ``id -> text`` (a function, or a list indexed by id).
    """
    _check_tree(tree)
    if not callable(token_label) and (isinstance(token_label, str)
                                      or not isinstance(token_label, (list, tuple))):
        raise TypeError("token_label debe ser una función id → texto o una lista de textos indexada "
                        f"por id; se recibió {type(token_label).__name__}.")
    if not callable(token_label):
        missing = sorted({n.token for n in tree.nodes if not 0 <= n.token < len(token_label)})
        if missing:
            raise ValueError(f"token_label tiene {len(token_label)} textos y el árbol usa los ids "
                             f"{missing[:5]}: falta un texto para cada id.")
    show_prob = checks.boolean(show_prob, "show_prob")
    label = token_label if callable(token_label) else (lambda i: token_label[i])
    texts = {}
    for node in tree.nodes:  # every label before anything is drawn
        texts[node.id] = label(node.token)
        if not isinstance(texts[node.id], str):
            raise TypeError(f"token_label debe dar un texto (str) por id; para el id {node.token} dio "
                            f"{type(texts[node.id]).__name__}: {texts[node.id]!r:.40}. Con números usa, "
                            "p. ej., lambda i: str(i).")
    pos = beam_tree_layout(tree)
    n_steps = max(n.step for n in tree.nodes) + 1
    widest = max(y for _, y in pos.values()) + 1
    fig, ax = style.new_figure(1.0 + 1.9 * n_steps, 1.2 + 0.55 * widest)
    best = set(tree.best_path)
    best_edges = {(tree.nodes[i].parent, i) for i in tree.best_path if tree.nodes[i].parent is not None}
    for node in tree.nodes:
        if node.parent is None:
            continue
        (x0, y0), (x1, y1) = pos[node.parent], pos[node.id]
        on_best = (node.parent, node.id) in best_edges
        ax.plot([x0, x1], [y0, y1], color=style.HIGHLIGHT if on_best else "#bdbdbd",
                linewidth=3.0 if on_best else 1.0, zorder=1 if not on_best else 2)
    for status, (colour, marker, _) in NODE_STYLE.items():
        nodes = [n for n in tree.nodes if n.status == status]
        if not nodes:
            continue
        ax.scatter([pos[n.id][0] for n in nodes], [pos[n.id][1] for n in nodes], s=70,
                   color=colour, marker=marker, zorder=3,
                   edgecolors=[style.HIGHLIGHT if n.id in best else colour for n in nodes],
                   linewidths=2.0)
    for node in tree.nodes:
        x, y = pos[node.id]
        text = texts[node.id]
        if show_prob and node.parent is not None:
            text += f"  {np.exp(node.log_prob):.3f}"
        ax.annotate(text, (x, y), xytext=(7, 0), textcoords="offset points", va="center",
                    fontsize="small", fontweight="bold" if node.id in best else "normal",
                    color="#616161" if node.status == "pruned" else "black", zorder=4)
    handles = [Line2D([], [], color=c, marker=m, linestyle="", markersize=8, label=lab)
               for c, m, lab in NODE_STYLE.values()]
    handles.append(Line2D([], [], color=style.HIGHLIGHT, linewidth=3, label="respuesta elegida"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small",
              frameon=False)
    ax.set_xticks(range(n_steps), ["inicio"] + [f"paso {t}" for t in range(1, n_steps)])
    ax.set_xlim(-0.3, n_steps - 0.2)
    ax.set_ylim(widest - 0.4, -0.6)
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel("paso de decodificación (número y probabilidad acumulada del prefijo)")
    ax.set_title(title or f"Búsqueda en haz (beam search) con ancho {tree.beam_width}")
    return fig


def _probabilities(values, name: str) -> np.ndarray:
    p = as_matrix(values, name, ndim=1)
    if (p < 0).any() or (p > 1).any():
        raise ValueError(f"{name} debe contener probabilidades entre 0 y 1.")
    # A selection of tokens (the chapter's top 8) sums to less than 1, never to more.
    if float(p.sum()) > 1.0 + 1e-3:
        raise ValueError(f"{name} suma {float(p.sum()):.3f}: una distribución, o una selección de sus "
                         "tókenes, suma como mucho 1.")
    return p


def sampling_filters(
    probs,
    tokens: Sequence[str],
    panels: Sequence[tuple[str, object]],
    *,
    title: str = "Qué tókenes puede elegir el muestreo",
) -> Figure:
    """One bar chart per setting: the next-token distribution after a filter.

    Args:
        probs: ``(V,)`` the model's distribution (or a selection of tokens:
            the sum may be below 1, never above it, beyond a tolerance of 1e-3).
        tokens: a label per entry of ``probs``.
        panels: ``(panel title, probabilities after the filter)`` pairs, e.g.
            from :func:`dldna.decoding.next_token_probs`; tokens with
            probability 0 are drawn as hatched outlines ("excluido").
    """
    p = _probabilities(probs, "probs")
    tokens = style.labels(tokens, p.shape[0], "tókenes")
    if isinstance(panels, (str, bytes)) or not isinstance(panels, (list, tuple)) or not panels or not all(
            isinstance(panel, (list, tuple)) and len(panel) == 2 for panel in panels):
        raise ValueError("panels debe ser una lista no vacía de pares (título, probabilidades tras el "
                         f"filtro); se recibió {panels!r:.60}.")
    panels = [(checks.text(name, "El título de un panel"),
               _probabilities(q, f"las probabilidades de {name!r}")) for name, q in panels]
    if any(q.shape != p.shape for _, q in panels):
        raise ValueError(f"Cada panel debe tener una probabilidad por tóken ({p.shape[0]}).")
    fig, axes = style.new_figure(3.0 + 2.7 * len(panels), 3.4, 1, len(panels) + 1, sharey=True)
    axes = np.atleast_1d(axes)
    x = np.arange(p.shape[0])
    axes[0].bar(x, p, color=style.PALETTE[1], edgecolor="black", linewidth=0.5)
    axes[0].set_title("distribución del modelo", fontsize="medium")
    for ax, (name, q) in zip(axes[1:], panels, strict=True):
        kept = q > 0
        ax.bar(x[kept], q[kept], color=style.PALETTE[0], edgecolor="black", linewidth=0.5)
        ax.bar(x[~kept], p[~kept], facecolor="none", edgecolor="#9e9e9e", hatch="///",
               linewidth=0.5)
        ax.set_title(name, fontsize="medium")
    for ax in axes:
        ax.set_xticks(x, tokens, rotation=45, ha="right")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("probabilidad del siguiente tóken")
    axes[-1].legend(handles=[Rectangle((0, 0), 1, 1, facecolor=style.PALETTE[0], edgecolor="black",
                                       label="puede salir"),
                             Rectangle((0, 0), 1, 1, facecolor="none", edgecolor="#9e9e9e", hatch="///",
                                       label="excluido (prob. 0)")],
                    loc="upper right", fontsize="small")
    fig.suptitle(title)
    return fig


def temperature_tradeoff(
    temperatures: Sequence[float],
    accuracy: Sequence[float],
    diversity: Sequence[float],
    *,
    greedy_accuracy: float | None = None,
    title: str = "La temperatura cambia diversidad por exactitud",
    diversity_label: str = "traducciones distintas por frase",
) -> Figure:
    """Two panels against the temperature (log axis): accuracy of the samples
    and their diversity; a dashed line marks greedy decoding's accuracy."""
    t = _check_figures(temperatures, "temperatures (las temperaturas)", positive=True)
    accuracy = _check_figures(accuracy, "accuracy (las exactitudes)", n=t.size)
    diversity = _check_figures(diversity, "diversity (la diversidad)", n=t.size)
    if greedy_accuracy is not None:
        greedy_accuracy = checks.probability(greedy_accuracy, "greedy_accuracy (exactitud voraz)")
    title = checks.text(title, "title (el título)", allow_empty=True)
    diversity_label = checks.text(diversity_label, "diversity_label", allow_empty=True)
    fig, (left, right) = style.new_figure(9.0, 3.4, 1, 2)
    left.plot(t, 100 * np.asarray(accuracy), marker="o", color=style.PALETTE[4], label="muestreo")
    if greedy_accuracy is not None:
        left.axhline(100 * greedy_accuracy, color=style.PALETTE[5], linestyle="--",
                     label="voraz (greedy)")
    left.set_ylabel("muestras correctas (%)")
    left.set_ylim(0, 105)
    left.legend(loc="lower left", fontsize="small")
    right.plot(t, diversity, marker="s", color=style.PALETTE[2])
    right.set_ylabel(diversity_label)
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xticks(t, [f"{v:g}" for v in t])
        ax.minorticks_off()
        ax.set_xlabel("temperatura T")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    return fig


def alignment_heatmap(
    weights,
    src_tokens: Sequence[str],
    out_tokens: Sequence[str],
    *,
    gold: Sequence[Sequence[int]] | None = None,
    ax=None,
    title: str = "Atención cruzada frente al alineamiento",
) -> Figure:
    """Cross-attention ``(len(out_tokens), len(src_tokens))`` with the grammar's
    alignment outlined.

    Row ``i`` is the decoder query that *produced* ``out_tokens[i]``; column
    ``j`` the Spanish word ``src_tokens[j]``. ``gold[i]`` lists the Spanish
    positions that the English word ``i`` translates (outlined in vermillion):
    one list per row, an empty one for ``<eos>``.
    """
    w = as_matrix(weights, "weights")
    out_labels = style.labels(out_tokens, w.shape[0], "palabras producidas (filas)")
    src_labels = style.labels(src_tokens, w.shape[1], "palabras de entrada (columnas)")
    if gold is not None:
        # One list per produced word, <eos> included (its list is empty: it aligns with no word).
        if isinstance(gold, (str, bytes)) or not isinstance(gold, (list, tuple)) or len(gold) != w.shape[0]:
            got = f"{len(gold)} listas" if isinstance(gold, (list, tuple)) else f"{gold!r:.60}"
            raise ValueError(f"gold debe tener una lista de posiciones por palabra producida ({w.shape[0]}, "
                             f"una por fila; la de <eos> vacía, []); se recibió {got}.")
        for cols in gold:
            if isinstance(cols, (str, bytes)) or not isinstance(cols, (list, tuple)) or not all(
                    isinstance(j, (int, np.integer)) and not isinstance(j, bool) and 0 <= j < w.shape[1]
                    for j in cols):
                raise ValueError(f"Cada entrada de gold debe ser una lista de posiciones de la entrada "
                                 f"(0 a {w.shape[1] - 1}); se recibió {cols!r:.60}.")
    if ax is None:
        _, ax = style.new_figure(3.2 + 0.8 * w.shape[1], 2.4 + 0.5 * w.shape[0])
    fig = attention_heatmap(w, out_labels, src_labels, ax=ax, title=title,
                            xlabel="palabra del español (clave)",
                            ylabel="palabra inglesa producida (consulta)")
    axis = ax
    if gold is not None:
        outline_cells(axis, [(i, j) for i, cols in enumerate(gold) for j in cols])
        axis.legend(handles=[Rectangle((0, 0), 1, 1, fill=False, edgecolor=style.HIGHLIGHT,
                                       linewidth=2.5, label="alineamiento de la gramática")],
                    loc="upper left", bbox_to_anchor=(0.0, -0.22), fontsize="small", frameon=False)
    return fig

"""Attention masks: padding, causal, combined, local window and sparse patterns.

Conventions (the same as the rest of ``dldna`` and ``torch.nn``'s ``batch_first``):

* every mask is a **boolean** tensor and ``True`` means "this query may attend
  to this key";
* every mask broadcasts, with PyTorch's ordinary broadcasting rules, against
  the score tensor of multi-head attention, of shape
  ``(batch, heads, q_len, k_len)``:

  - :func:`padding_mask`: ``(batch, 1, 1, k_len)`` (per sentence and key);
    with ``queries=True``: ``(batch, 1, q_len, k_len)``;
  - :func:`causal_mask`: ``(q_len, k_len)`` (the same for every sentence);
  - :func:`local_window_mask`, :func:`strided_mask`, :func:`fixed_mask`:
    ``(size, size)``; :func:`grid_mask`: ``(height·width, height·width)``.

  A mask meant for one sentence should have shape ``(batch, 1, q_len, k_len)``:
  a 3-D mask ``(x, q_len, k_len)`` broadcasts as ``(1, x, q_len, k_len)``,
  that is, one mask per *head*, as broadcasting dictates.

* :func:`combine` intersects masks (logical AND): a position may be attended
  only if every mask allows it. :func:`to_additive` turns a boolean mask into
  the additive form ``0 / -inf`` that is added to the scores, and
  :func:`from_additive` goes back.
* :func:`masked_scores` blocks positions in a score tensor with a value that
  exists in the scores' own dtype: ``-inf``, or ``torch.finfo(dtype).min``.
  A literal such as ``-1e9`` does not fit in float16 (whose range ends at
  ``-65504``): ``scores.half().masked_fill(~mask, -1e9)`` raises an overflow
  error.

The sparse patterns follow Child et al. (2019), "Generating Long Sequences with
Sparse Transformers": with stride ``l``, the *strided* pattern lets query ``i``
see the previous ``l`` positions and every ``l``-th position before it; the
*fixed* pattern lets it see its own block of ``l`` positions and the last ``c``
positions ("summary" cells) of every block.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from dldna import checks, fmt

__all__ = [
    "sequence_mask",
    "padding_mask",
    "causal_mask",
    "combine",
    "local_window_mask",
    "receptive_field",
    "strided_mask",
    "fixed_mask",
    "grid_mask",
    "to_additive",
    "from_additive",
    "masked_scores",
    "fully_masked_rows",
    "describe",
]


# ---------------------------------------------------------------------------
# Argument checks (messages in Spanish: a reader may call these directly)
# ---------------------------------------------------------------------------


def _lengths_tensor(lengths) -> Tensor:
    try:
        tensor = checks.as_tensor(lengths, "lengths")
    except (TypeError, ValueError):
        raise TypeError(
            "Las longitudes deben ser una lista de enteros o un tensor 1-D de enteros, "
            f"una por frase del lote; se recibió {lengths!r}."
        ) from None
    if tensor.dtype.is_floating_point or tensor.dtype == torch.bool or tensor.is_complex():
        raise TypeError(
            f"Las longitudes deben ser números enteros; se recibió {tensor.tolist()!r}."
        )
    tensor = tensor.detach().to("cpu", torch.long)
    if tensor.dim() != 1 or tensor.numel() == 0:
        raise ValueError(
            "Las longitudes deben formar un vector 1-D no vacío (una por frase del lote); "
            f"se recibió forma {tuple(tensor.shape)}."
        )
    if (tensor < 0).any():
        raise ValueError(
            f"Las longitudes no pueden ser negativas; se recibió {tensor.tolist()}."
        )
    return tensor


def _check_bool_mask(mask, name: str = "La máscara") -> Tensor:
    mask = checks.as_tensor(mask, name)
    if mask.dtype != torch.bool:
        raise TypeError(
            f"{name} debe ser un tensor booleano (True = puede atender); se recibió dtype {mask.dtype}. "
            "Si tienes una máscara aditiva (0 / -inf), conviértela con masking.from_additive."
        )
    return mask


# ---------------------------------------------------------------------------
# Padding
# ---------------------------------------------------------------------------


def sequence_mask(lengths, max_len: int | None = None, *, side: str = "right") -> Tensor:
    """Which positions hold real tokens: shape ``(batch, max_len)``, ``True`` = token.

    Args:
        lengths: one length per sentence (list of ints or 1-D integer tensor).
        max_len: padded length; defaults to ``max(lengths)``. Must be at least
            every length.
        side: ``"right"`` (tokens first, then padding; the usual case) or
            ``"left"`` (padding first, as some decoders batch prompts).
    """
    n = _lengths_tensor(lengths)
    longest = int(n.max())
    max_len = max(longest, 1) if max_len is None else checks.positive_int(max_len, "max_len")
    if longest > max_len:
        raise ValueError(
            f"Una frase mide {longest} tókenes, más que la longitud máxima max_len={max_len}: "
            "max_len debe ser al menos la longitud de la frase más larga."
        )
    checks.one_of(side, "side", ("right", "left"))
    pos = torch.arange(max_len)
    if side == "right":
        return pos[None, :] < n[:, None]
    return pos[None, :] >= (max_len - n)[:, None]


def padding_mask(
    lengths=None,
    max_len: int | None = None,
    *,
    token_ids: Tensor | None = None,
    pad_id: int | None = None,
    queries: bool = False,
    side: str = "right",
) -> Tensor:
    """Padding mask: no query may attend to a padding position.

    Give either ``lengths`` (one per sentence, with ``max_len`` and ``side``)
    or ``token_ids`` of shape ``(batch, seq)`` together with ``pad_id``.

    Returns:
        ``(batch, 1, 1, seq)`` — key ``j`` of sentence ``b`` may be attended
        iff it is a real token. It broadcasts over heads and queries.
        With ``queries=True``: ``(batch, 1, seq, seq)``, which also blanks the
        rows of padding *queries* (those rows are then entirely masked; the
        book's softmax gives them zero weights, see :func:`fully_masked_rows`).
    """
    if (lengths is None) == (token_ids is None):
        raise ValueError(
            "Da las longitudes de las frases (lengths) o los identificadores de tókenes "
            "(token_ids, con pad_id), pero no ambos ni ninguno."
        )
    queries = checks.boolean(queries, "queries")
    if token_ids is not None:
        token_ids = checks.ids(token_ids, "token_ids", ndim=2)
        if pad_id is None:
            raise ValueError("Con token_ids hay que indicar pad_id, el entero que marca el relleno.")
        valid = token_ids != checks.non_negative_int(pad_id, "pad_id")
    else:
        if pad_id is not None:
            raise ValueError("pad_id solo tiene sentido junto con token_ids.")
        valid = sequence_mask(lengths, max_len, side=side)
    keys = valid[:, None, None, :]
    if not queries:
        return keys
    return keys & valid[:, None, :, None]


# ---------------------------------------------------------------------------
# Causal and sparse patterns: (q_len, k_len), the same for every sentence/head
# ---------------------------------------------------------------------------


def causal_mask(q_len: int, k_len: int | None = None, device=None) -> Tensor:
    """Causal (subsequent) mask: query ``i`` may attend key ``j`` iff ``j <= i``.

    Shape ``(q_len, k_len)`` (``k_len`` defaults to ``q_len``): lower
    triangular, diagonal included. When ``k_len > q_len`` the queries are taken
    to be the *last* ``q_len`` positions (as when new tokens are appended to
    ``k_len - q_len`` earlier ones), so row ``i`` sees keys ``0 … i + k_len - q_len``.
    """
    q_len = checks.positive_int(q_len, "q_len (longitud de las consultas)")
    k_len = q_len if k_len is None else checks.positive_int(k_len, "k_len (longitud de las claves)")
    device = checks.device(device, optional=True)
    if k_len < q_len:
        raise ValueError(
            f"En una máscara causal no puede haber más consultas ({q_len}) que claves ({k_len})."
        )
    rows = torch.arange(q_len, device=device)[:, None] + (k_len - q_len)
    return torch.arange(k_len, device=device)[None, :] <= rows


def _offsets(size: int, device=None) -> Tensor:
    """``i - j`` for every query ``i`` (row) and key ``j`` (column)."""
    pos = torch.arange(size, device=device)
    return pos[:, None] - pos[None, :]


def local_window_mask(size: int, window: int, *, causal: bool = False, device=None) -> Tensor:
    """Local (sliding-window) attention, shape ``(size, size)``.

    ``causal=False``: query ``i`` sees keys with ``|i - j| < window``
    (``2·window - 1`` positions centred on itself). ``causal=True``: it sees
    ``0 <= i - j < window`` (itself and the ``window - 1`` previous ones).
    ``window=1`` is the diagonal: each position sees only itself.
    """
    size = checks.positive_int(size, "size (longitud de la secuencia)")
    window = checks.positive_int(window, "window (tamaño de la ventana)")
    causal = checks.boolean(causal, "causal")
    d = _offsets(size, checks.device(device, optional=True))
    if causal:
        return (d >= 0) & (d < window)
    return d.abs() < window


def receptive_field(mask: Tensor, layers: int) -> Tensor:
    """Which positions can reach each query after ``layers`` stacked attentions with ``mask``.

    ``mask`` ``(size, size)``, ``True`` = may attend. One layer mixes what
    ``mask`` allows; the next mixes those mixtures, so position ``j`` reaches
    query ``i`` after two layers when some ``k`` has ``mask[i, k]`` and
    ``mask[k, j]``: the boolean product of the mask with itself. Returns the
    ``(size, size)`` boolean matrix after ``layers`` products. With a causal
    window of ``w`` positions (:func:`local_window_mask`) and every position
    seeing itself, the field reaches ``layers·(w - 1)`` positions back.
    """
    mask = _check_bool_mask(mask)
    if mask.dim() != 2 or mask.shape[0] != mask.shape[1]:
        raise ValueError(f"La máscara debe ser cuadrada (size, size); tiene forma {tuple(mask.shape)}.")
    layers = checks.positive_int(layers, "layers (número de capas)")
    step = mask.to(torch.float64)
    field = mask
    for _ in range(layers - 1):
        field = (field.to(torch.float64) @ step) > 0
    return field


def strided_mask(size: int, stride: int, *, causal: bool = True, device=None) -> Tensor:
    """Strided sparse pattern of Child et al. (2019), shape ``(size, size)``.

    The union of two sets: the previous ``stride`` positions
    (``0 <= i - j <= stride``) and every ``stride``-th position
    (``(i - j) mod stride == 0``). In the paper each set is one head; the union
    is what a query can reach in one layer. ``causal=False`` mirrors both sets
    to the future (``|i - j|``).
    """
    size = checks.positive_int(size, "size (longitud de la secuencia)")
    stride = checks.positive_int(stride, "stride (paso)")
    causal = checks.boolean(causal, "causal")
    d = _offsets(size, checks.device(device, optional=True))
    dist = d if causal else d.abs()
    return (dist >= 0) & ((dist <= stride) | (dist % stride == 0))


def fixed_mask(
    size: int, block: int, summary: int = 1, *, causal: bool = True, device=None
) -> Tensor:
    """Fixed sparse pattern of Child et al. (2019), shape ``(size, size)``.

    Query ``i`` sees the keys of its own block of ``block`` positions
    (``j // block == i // block``) and the last ``summary`` positions of every
    block (``j mod block >= block - summary``), which act as summaries that
    carry information between blocks. ``causal=True`` keeps only ``j <= i``.
    """
    size = checks.positive_int(size, "size (longitud de la secuencia)")
    block = checks.positive_int(block, "block (tamaño del bloque)")
    summary = checks.positive_int(summary, "summary (celdas resumen por bloque)")
    causal = checks.boolean(causal, "causal")
    device = checks.device(device, optional=True)
    if summary > block:
        raise ValueError(
            f"summary ({summary}) no puede ser mayor que el tamaño del bloque ({block})."
        )
    pos = torch.arange(size, device=device)
    same_block = (pos[:, None] // block) == (pos[None, :] // block)
    summary_col = (pos % block >= block - summary)[None, :].expand(size, size)
    allowed = same_block | summary_col
    if causal:
        allowed = allowed & (_offsets(size, device) >= 0)
    return allowed


def grid_mask(height: int, width: int, radius: int = 1, *, device=None) -> Tensor:
    """Neighbourhood mask of an image grid, shape ``(height·width, height·width)``.

    Pixels are numbered row by row (``p = r·width + c``, the order in which a
    Vision Transformer flattens its patches). Pixel ``p`` may attend pixel
    ``p'`` iff both coordinates differ by at most ``radius``: with
    ``radius=1`` each pixel sees the 3×3 window a convolution sees.
    """
    height = checks.positive_int(height, "height (alto de la cuadrícula)")
    width = checks.positive_int(width, "width (ancho de la cuadrícula)")
    radius = checks.non_negative_int(radius, "radius (radio de la vecindad)")
    device = checks.device(device, optional=True)
    pos = torch.arange(height * width, device=device)
    rows, cols = pos // width, pos % width
    close_rows = (rows[:, None] - rows[None, :]).abs() <= radius
    close_cols = (cols[:, None] - cols[None, :]).abs() <= radius
    return close_rows & close_cols


# ---------------------------------------------------------------------------
# Combining and converting
# ---------------------------------------------------------------------------


def combine(*masks: Tensor | None) -> Tensor | None:
    """Intersection (logical AND) of boolean masks, with broadcasting.

    ``None`` entries are skipped (no mask = everything allowed); if all are
    ``None`` the result is ``None``. Example: ``combine(padding_mask(lengths),
    causal_mask(n))`` has shape ``(batch, 1, n, n)``.
    """
    present = [m for m in masks if m is not None]
    if not present:
        return None
    present = [_check_bool_mask(m, f"La máscara número {k + 1}") for k, m in enumerate(present)]
    try:
        shape = torch.broadcast_shapes(*(m.shape for m in present))
    except RuntimeError as err:
        shapes = ", ".join(str(tuple(m.shape)) for m in present)
        raise ValueError(
            f"Las máscaras no se pueden combinar: sus formas {shapes} no son compatibles "
            "por difusión (broadcasting)."
        ) from err
    out = present[0].expand(shape).clone()
    for m in present[1:]:
        out = out & m
    return out


def to_additive(mask: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """Boolean mask → additive mask: ``True`` → ``0``, ``False`` → ``-inf``.

    Adding it to the scores before the softmax has the same effect as
    ``scores.masked_fill(~mask, -inf)``.
    """
    mask = _check_bool_mask(mask)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(
            f"Una máscara aditiva necesita un dtype de coma flotante (torch.float32, "
            f"torch.float16…); se pidió {dtype!r}."
        )
    zeros = torch.zeros(mask.shape, dtype=dtype, device=mask.device)
    return zeros.masked_fill(~mask, float("-inf"))


def from_additive(additive: Tensor) -> Tensor:
    """Additive mask → boolean mask: a finite entry (``0``) may attend, ``-inf`` may not.

    Large negative finite values (such as ``-1e9``, used by some code instead
    of ``-inf``) are treated as masked too: every entry below ``-1e4``.
    """
    if not isinstance(additive, Tensor) or not additive.dtype.is_floating_point:
        raise TypeError("La máscara aditiva debe ser un tensor de coma flotante (0 / -inf).")
    if torch.isnan(additive).any():
        raise ValueError("La máscara aditiva contiene NaN; se esperaban 0 y -inf.")
    return additive > -1e4


def masked_scores(scores: Tensor, mask: Tensor, *, fill: str = "-inf") -> Tensor:
    """``scores`` with every blocked position (``mask`` False) set to a very negative value.

    The value exists in the scores' own dtype, whatever it is:

    * ``fill="-inf"`` (default): the blocked weight is exactly 0. A query with
      every key blocked has a row of ``-inf``, which ``torch.softmax`` turns
      into NaN; :func:`dldna.attention.softmax` gives it zeros.
    * ``fill="min"``: ``torch.finfo(scores.dtype).min`` (``-65504`` in
      float16, ``-3.4e38`` in float32). ``torch.softmax`` then never gives
      NaN, but a fully blocked row gets *uniform* weights over the keys it
      should not see (find such rows with :func:`fully_masked_rows`).

    Never a literal such as ``-1e9``: it does not fit in float16, and
    ``masked_fill(~mask, -1e9)`` on float16 scores raises an overflow error.

    Shapes: ``mask`` boolean (``True`` = may attend) broadcastable to ``scores``.
    """
    if not isinstance(scores, Tensor) or not scores.is_floating_point():
        kind = scores.dtype if isinstance(scores, Tensor) else type(scores).__name__
        raise TypeError(f"Las puntuaciones deben ser un tensor de coma flotante; se recibió {kind}.")
    scores = checks.features(scores, "Las puntuaciones")  # NaN refused (on the CPU)
    mask = checks.mask(mask, scores.shape, device=scores.device)
    fill = checks.one_of(fill, "fill", ("-inf", "min"))
    return scores.masked_fill(~mask, -math.inf if fill == "-inf" else torch.finfo(scores.dtype).min)


def fully_masked_rows(mask: Tensor) -> Tensor:
    """``True`` for every query whose whole row is masked (nothing to attend to).

    Shape: the mask's shape without its last dimension. A naive softmax turns
    such a row into NaN; :func:`dldna.attention.softmax` gives it zeros.
    """
    mask = _check_bool_mask(mask)
    if mask.dim() == 0:
        raise ValueError("La máscara debe tener al menos una dimensión (las claves).")
    return ~mask.any(dim=-1)


def describe(mask: Tensor) -> str:
    """One Spanish line: shape, how many entries are allowed, empty rows.

    An entry of a mask with queries is a (query, key) pair; of a 1-D mask, a key.
    """
    mask = _check_bool_mask(mask)
    if mask.numel() == 0:
        return f"forma {tuple(mask.shape)}: máscara vacía"
    allowed = int(mask.sum())
    total = mask.numel()
    empty = int(fully_masked_rows(mask).sum())
    what = "claves permitidas" if mask.dim() == 1 else "pares (consulta, clave) permitidos"
    return (
        f"forma {tuple(mask.shape)}: {fmt.integer(allowed)} de {fmt.integer(total)} {what} "
        f"({fmt.percent(allowed / total)}); filas sin ninguna clave: {fmt.integer(empty)}"
    )

"""Positional encodings: absolute (added to the embeddings) and relative (inside attention).

Self-attention without positions treats a sentence as a bag of words. This
module holds the ways of telling it where each token is, in the order the
book meets them.

Absolute encodings, added to the token vectors ``x (batch, seq, d_model)``:

* :func:`sinusoidal` (Vaswani et al., 2017): for position ``p`` and dimension
  pair ``i`` (columns ``2i`` and ``2i+1``)::

      PE[p, 2i]   = sin(p · ω_i)
      PE[p, 2i+1] = cos(p · ω_i),      ω_i = base^(-2i/d)

  so pair ``i`` is a wave of wavelength ``2π·base^(2i/d)`` positions
  (:func:`wavelengths`). Moving ``k`` positions rotates every pair by the angle
  ``k·ω_i``: ``PE[p+k] = R_k PE[p]`` with the block rotation
  :func:`shift_rotation` (independent of ``p``), so ``PE[p]·PE[q]`` depends
  only on ``p - q``. :class:`SinusoidalPositionalEncoding` adds it.
* :class:`LearnedPositionalEncoding`: a table ``(max_len, d_model)`` learned
  like any embedding; it has no row for a position past the table.

Relative schemes, which act on the attention scores of positions ``i``
(query) and ``j`` (key) through ``j - i`` only (:func:`relative_distances`):

* :class:`ShawRelativePosition` (Shaw et al., 2018): learned vectors
  ``a^K``, ``a^V`` indexed by the clipped distance ``clip(j - i, -K, K)``,
  added to the keys and to the values (:func:`shaw_attention`);
* :class:`T5RelativeBias` (Raffel et al., 2020): one learned scalar per head
  and bucket of distance (exact for short distances, logarithmic for long
  ones), added to the scores;
* :class:`ALiBi` (Press et al., 2022): a fixed penalty ``-m_h·|j - i|`` with
  one slope ``m_h`` per head (:func:`alibi_slopes`);
* :class:`RotaryEmbedding`, RoPE (Su et al., 2024): queries and keys are
  rotated by their position, pair by pair, with the frequencies of the
  sinusoidal encoding, so ``q_i · k_j`` depends only on ``j - i``.

The T5 bias and ALiBi give a float tensor ``(1, heads, q_len, k_len)`` for
``MultiHeadAttention(..., bias=...)``; a :class:`RotaryEmbedding` is passed as
``MultiHeadAttention(..., rotary=...)`` (see :mod:`dldna.attention`).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from dldna import checks
from dldna.attention import (
    MultiHeadAttention,
    _check_heads,
    merge_heads,
    scaled_dot_product_attention,
    split_heads,
)

# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------


def _check_sinusoidal_args(d_model: int, base: float) -> None:
    try:
        even = checks.positive_int(d_model, "d_model", minimum=2) % 2 == 0
    except ValueError:
        even = False
    if not even:
        raise ValueError(
            f"d_model debe ser un entero par mayor o igual que 2 (cada par de dimensiones es un "
            f"seno y un coseno); se recibió {d_model!r}."
        )
    if not isinstance(base, (int, float)) or not math.isfinite(base) or base <= 1:
        raise ValueError(
            f"La base debe ser un número mayor que 1 (el artículo original usa 10000); "
            f"se recibió {base!r}."
        )


def _check_sequence(x: Tensor, d_model: int, name: str = "x") -> None:
    if not isinstance(x, Tensor) or x.dim() != 3:
        shape = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
        raise ValueError(
            f"{name} debe tener forma (batch, seq, d_model); se recibió {shape}. Para una sola "
            "secuencia añade el lote con x.unsqueeze(0)."
        )
    if x.shape[-1] != d_model:
        raise ValueError(
            f"{name} termina en {x.shape[-1]} rasgos, pero la codificación espera d_model={d_model}."
        )


# ---------------------------------------------------------------------------
# Sinusoidal encoding and its rotations
# ---------------------------------------------------------------------------


def frequencies(d_model: int, base: float = 10000.0) -> Tensor:
    """Angular frequency ``ω_i = base^(-2i/d)`` of each dimension pair, shape ``(d/2,)`` (float64)."""
    _check_sinusoidal_args(d_model, base)
    i = torch.arange(d_model // 2, dtype=torch.float64)
    return base ** (-2 * i / d_model)


def wavelengths(d_model: int, base: float = 10000.0) -> Tensor:
    """Wavelength, in positions, of each dimension pair: ``2π·base^(2i/d)``. Shape ``(d/2,)``."""
    _check_sinusoidal_args(d_model, base)
    i = torch.arange(d_model // 2, dtype=torch.float64)
    return (2 * math.pi * base ** (2 * i / d_model)).float()


def sinusoidal(n_positions: int, d_model: int, base: float = 10000.0) -> Tensor:
    """Sinusoidal encoding table of shape ``(n_positions, d_model)``."""
    _check_sinusoidal_args(d_model, base)
    n_positions = checks.positive_int(n_positions, "El número de posiciones (n_positions)")
    pos = torch.arange(n_positions, dtype=torch.float64)[:, None]
    i = torch.arange(d_model // 2, dtype=torch.float64)[None, :]
    angles = pos / base ** (2 * i / d_model)
    table = torch.empty(n_positions, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.float()


def block_rotation(angles: Tensor) -> Tensor:
    """Block-diagonal rotation ``(2n, 2n)``: block ``i`` turns the plane of columns ``2i, 2i+1``.

    Block ``i`` is ``[[cos a_i, -sin a_i], [sin a_i, cos a_i]]`` (counter-clockwise
    by ``a_i`` radians). ``angles`` has shape ``(n,)``; the result has the same dtype.
    """
    angles = checks.features(angles, "angles (los ángulos)", finite=True) if not (
        isinstance(angles, Tensor) and not angles.is_floating_point() and angles.dtype != torch.bool) \
        else angles
    if angles.dim() != 1 or angles.numel() == 0:
        raise ValueError(f"angles debe ser un vector (n,) no vacío; se recibió forma {tuple(angles.shape)}.")
    n = angles.numel()
    out = torch.zeros(2 * n, 2 * n, dtype=angles.dtype if angles.is_floating_point() else torch.float64)
    c, s = torch.cos(angles), torch.sin(angles)
    idx = torch.arange(n) * 2
    out[idx, idx], out[idx, idx + 1] = c, -s
    out[idx + 1, idx], out[idx + 1, idx + 1] = s, c
    return out


def shift_rotation(shift: int, d_model: int, base: float = 10000.0) -> Tensor:
    """The matrix ``R_k`` with ``PE[p + k] = R_k @ PE[p]`` for every position ``p``.

    Because a pair stores ``(sin pω, cos pω)``, moving ``k`` positions forward
    is a clockwise turn by ``k·ω_i`` of each pair: ``R_k`` is
    :func:`block_rotation` of ``-k·ω``. It depends on ``k`` but not on ``p``.
    Shape ``(d_model, d_model)``, float64. With row vectors (the table),
    ``PE[p + k] = PE[p] @ R_k.T``.
    """
    if isinstance(shift, bool) or not isinstance(shift, int):
        raise ValueError(f"El desplazamiento k debe ser un entero; se recibió {shift!r}.")
    return block_rotation(-shift * frequencies(d_model, base))


class SinusoidalPositionalEncoding(nn.Module):
    """Add the sinusoidal table to token vectors, for any length (no parameters).

    ``scale_input=True`` multiplies the token vectors by ``√d_model`` before
    adding (as in Vaswani et al., 2017), so that the positions, whose entries
    lie in ``[-1, 1]``, do not drown embeddings initialised with small values.

    Shapes: ``x (batch, seq, d_model)`` → ``(batch, seq, d_model)``; the first
    token gets position ``offset``.
    """

    def __init__(self, d_model: int, base: float = 10000.0, *, scale_input: bool = False):
        super().__init__()
        _check_sinusoidal_args(d_model, base)
        self.d_model, self.base = d_model, float(base)
        self.scale_input = checks.boolean(scale_input, "scale_input")

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, base={self.base:g}, scale_input={self.scale_input}"

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        # Integer or NumPy input becomes float first: the table must not be truncated to integers.
        x = checks.features(x, "x")
        _check_sequence(x, self.d_model)
        checks.non_negative_int(offset, "offset")
        table = sinusoidal(offset + x.shape[1], self.d_model, self.base)[offset:]
        scale = math.sqrt(self.d_model) if self.scale_input else 1.0
        return x * scale + table.to(device=x.device, dtype=x.dtype)


class LearnedPositionalEncoding(nn.Module):
    """Add a learned vector per position: a table ``(max_len, d_model)`` (``nn.Embedding``).

    The table has rows for positions ``0 … max_len - 1`` only. A longer input
    raises ``ValueError`` (``overflow='error'``, the default) or, with
    ``overflow='clamp'``, reuses the last row for every later position (a
    common improvisation, shown in the book to fail).

    Shapes: ``x (batch, seq, d_model)`` → ``(batch, seq, d_model)``.
    """

    def __init__(self, d_model: int, max_len: int, *, scale_input: bool = False,
                 overflow: str = "error"):
        super().__init__()
        checks.positive_int(d_model, "d_model")
        checks.positive_int(max_len, "max_len")
        if overflow not in ("error", "clamp"):
            raise ValueError(f"overflow debe ser 'error' o 'clamp'; se recibió {overflow!r}.")
        self.d_model, self.max_len = d_model, max_len
        self.scale_input, self.overflow = checks.boolean(scale_input, "scale_input"), overflow
        self.table = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.table.weight, std=0.02 if scale_input else 1.0)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}, overflow={self.overflow!r}"

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        x = checks.features(x, "x")  # a list or an array, as SinusoidalPositionalEncoding takes
        _check_sequence(x, self.d_model)
        checks.non_negative_int(offset, "offset")
        last = offset + x.shape[1] - 1
        if last >= self.max_len and self.overflow == "error":
            raise ValueError(
                f"La secuencia llega a la posición {last}, pero la tabla de posiciones aprendidas "
                f"solo tiene {self.max_len} filas (posiciones 0 a {self.max_len - 1}): no hay "
                "ningún vector aprendido para las posiciones siguientes. Acorta la secuencia o "
                "usa una codificación que no dependa de una tabla (sinusoidal, relativa, RoPE, ALiBi)."
            )
        positions = torch.arange(offset, last + 1, device=x.device).clamp_max(self.max_len - 1)
        scale = math.sqrt(self.d_model) if self.scale_input else 1.0
        return x * scale + self.table(positions)


# ---------------------------------------------------------------------------
# Relative positions
# ---------------------------------------------------------------------------


def relative_distances(q_len: int, k_len: int | None = None, device=None) -> Tensor:
    """Matrix ``(q_len, k_len)`` of ``j - i``: how far key ``j`` is from query ``i`` (long)."""
    checks.positive_int(q_len, "q_len")
    k_len = q_len if k_len is None else checks.positive_int(k_len, "k_len")
    return torch.arange(k_len, device=device)[None, :] - torch.arange(q_len, device=device)[:, None]


def clipped_distances(q_len: int, k_len: int | None = None, max_distance: int = 4,
                      device=None) -> Tensor:
    """``clip(j - i, -K, K)`` with ``K = max_distance``: shape ``(q_len, k_len)``, values in ``[-K, K]``."""
    checks.non_negative_int(max_distance, "max_distance")
    return relative_distances(q_len, k_len, device).clamp(-max_distance, max_distance)


class ShawRelativePosition(nn.Module):
    """Relative position representations of Shaw, Uszkoreit and Vaswani (2018).

    Two learned tables of ``2K + 1`` vectors of size ``d_k``, one per clipped
    distance ``clip(j - i, -K, K)`` (``K = max_distance``): ``a^K_ij`` is added
    to key ``j`` when query ``i`` looks at it, and ``a^V_ij`` to value ``j``::

        e_ij = q_i · (k_j + a^K_ij) / √d_k,    z_i = Σ_j α_ij (v_j + a^V_ij)

    Distances beyond ``K`` share the vectors of ``±K``, so any length works.
    Use it through :func:`shaw_attention`. Shapes: :meth:`key_vectors` and
    :meth:`value_vectors` give ``(q_len, k_len, d_k)``.
    """

    def __init__(self, d_k: int, max_distance: int = 4):
        super().__init__()
        self.d_k = checks.positive_int(d_k, "d_k")
        self.max_distance = checks.non_negative_int(max_distance, "max_distance")
        self.keys = nn.Embedding(2 * max_distance + 1, d_k)
        self.values = nn.Embedding(2 * max_distance + 1, d_k)
        nn.init.normal_(self.keys.weight, std=d_k ** -0.5)
        nn.init.normal_(self.values.weight, std=d_k ** -0.5)

    def extra_repr(self) -> str:
        return f"d_k={self.d_k}, max_distance={self.max_distance}"

    def _index(self, q_len: int, k_len: int) -> Tensor:
        dist = clipped_distances(q_len, k_len, self.max_distance, device=self.keys.weight.device)
        return dist + self.max_distance

    def key_vectors(self, q_len: int, k_len: int | None = None) -> Tensor:
        """``a^K_ij`` for every query ``i`` and key ``j``: ``(q_len, k_len, d_k)``."""
        return self.keys(self._index(q_len, q_len if k_len is None else k_len))

    def value_vectors(self, q_len: int, k_len: int | None = None) -> Tensor:
        """``a^V_ij`` for every query ``i`` and key ``j``: ``(q_len, k_len, d_k)``."""
        return self.values(self._index(q_len, q_len if k_len is None else k_len))


def _shaw_input(x, name: str, relative: ShawRelativePosition) -> Tensor:
    """``x`` as a ``(..., seq, d_k)`` tensor of ``relative``'s dtype and device, without NaN or inf."""
    x = checks.features(x, name, like=relative, finite=True)
    if x.dim() < 2:
        raise ValueError(f"{name} debe tener forma (..., seq, d_k); tiene forma {tuple(x.shape)}.")
    return x


def shaw_attention(query: Tensor, key: Tensor, value: Tensor, relative: ShawRelativePosition,
                   mask: Tensor | None = None, scale: float | None = None) -> tuple[Tensor, Tensor]:
    """Scaled dot-product attention with Shaw's relative key and value vectors.

    Shapes: query ``(..., q_len, d_k)``, key ``(..., k_len, d_k)``, value
    ``(..., k_len, d_k)`` (``d_v = d_k`` = ``relative.d_k``), mask boolean
    broadcastable to ``(..., q_len, k_len)``. Returns ``(output, weights)``:
    ``(..., q_len, d_k)`` and ``(..., q_len, k_len)``.
    """
    if not isinstance(relative, ShawRelativePosition):
        raise TypeError("relative debe ser una ShawRelativePosition (las tablas de vectores relativos); "
                        f"se recibió {type(relative).__name__}.")
    query, key, value = (_shaw_input(x, name, relative) for x, name in
                         ((query, "query"), (key, "key"), (value, "value")))
    if not query.shape[:-2] == key.shape[:-2] == value.shape[:-2]:
        raise ValueError(
            "query, key y value deben tener las mismas dimensiones de lote y cabezas; se recibieron "
            f"{tuple(query.shape)}, {tuple(key.shape)} y {tuple(value.shape)}."
        )
    q_len, k_len, d_k = query.shape[-2], key.shape[-2], query.shape[-1]
    if d_k != relative.d_k or value.shape[-1] != relative.d_k:
        raise ValueError(
            f"Las consultas, claves y valores deben tener d_k={relative.d_k} componentes, como los "
            f"vectores relativos; se recibieron {d_k} y {value.shape[-1]}."
        )
    scale = 1.0 / math.sqrt(d_k) if scale is None else checks.positive_number(scale, "scale")
    a_k = relative.key_vectors(q_len, k_len)
    lead = query.shape[:-2]
    # q_i · a^K_ij for every (i, j), as one matrix product per query position i:
    # (i, B, d) @ (i, d, k_len) with B = every batch and head index.
    q_by_pos = query.reshape(-1, q_len, d_k).transpose(0, 1)
    bias = torch.bmm(q_by_pos, a_k.transpose(1, 2)).transpose(0, 1).reshape(*lead, q_len, k_len)
    out, weights = scaled_dot_product_attention(query, key, value, mask=mask, scale=scale,
                                                bias=bias * scale)
    # Σ_j α_ij a^V_ij: (i, B, k_len) @ (i, k_len, d).
    w_by_pos = weights.reshape(-1, q_len, k_len).transpose(0, 1)
    rel_values = torch.bmm(w_by_pos, relative.value_vectors(q_len, k_len)).transpose(0, 1)
    return out + rel_values.reshape(*lead, q_len, d_k), weights


def t5_buckets(distances: Tensor, num_buckets: int = 32, max_distance: int = 128,
               bidirectional: bool = True) -> Tensor:
    """T5's bucket of each relative distance ``j - i`` (long tensor of the same shape).

    With ``bidirectional`` half the buckets are for keys before the query and
    half for keys after it. Within each half, the first ``n/2`` buckets hold one
    exact distance each (0, 1, 2, …) and the rest cover distances up to
    ``max_distance`` on a logarithmic scale; every longer distance falls in the
    last bucket. Without ``bidirectional`` (a causal decoder) keys after the
    query share bucket 0.
    """
    bidirectional = checks.boolean(bidirectional, "bidirectional")
    checks.positive_int(num_buckets, "num_buckets", minimum=4 if bidirectional else 2)
    checks.positive_int(max_distance, "max_distance", minimum=2)
    distances = checks.as_tensor(distances, "distances")
    if distances.dtype.is_floating_point or distances.dtype == torch.bool or distances.is_complex():
        raise TypeError(f"distances debe contener distancias enteras (j - i), como las de "
                        f"relative_distances; se recibió dtype {distances.dtype}.")
    n = -distances  # how far back the key is
    bucket = torch.zeros_like(n)
    if bidirectional:
        num_buckets //= 2
        bucket = bucket + (n < 0).long() * num_buckets
        n = n.abs()
    else:
        n = n.clamp_min(0)
    exact = num_buckets // 2
    if max_distance <= exact:
        raise ValueError(
            f"max_distance ({max_distance}) debe ser mayor que las {exact} distancias que tienen "
            f"cubeta propia con num_buckets={num_buckets * (2 if bidirectional else 1)}: las cubetas "
            "logarítmicas van de ahí hasta max_distance."
        )
    log_ratio = torch.log(n.float().clamp_min(1) / exact) / math.log(max_distance / exact)
    large = exact + (log_ratio * (num_buckets - exact)).long()
    large = large.clamp_max(num_buckets - 1)
    return bucket + torch.where(n < exact, n, large)


class T5RelativeBias(nn.Module):
    """T5's learned relative bias (Raffel et al., 2020): one scalar per head and distance bucket.

    ``forward(q_len, k_len)`` returns the float bias ``(1, heads, q_len, k_len)``
    to add to the scores (``MultiHeadAttention(..., bias=...)``); entry
    ``(h, i, j)`` is ``b_h[bucket(j - i)]`` (:func:`t5_buckets`).
    """

    def __init__(self, num_heads: int, num_buckets: int = 32, max_distance: int = 128, *,
                 bidirectional: bool = True):
        super().__init__()
        self.num_heads = checks.positive_int(num_heads, "num_heads")
        self.num_buckets, self.max_distance = num_buckets, max_distance
        self.bidirectional = checks.boolean(bidirectional, "bidirectional")
        t5_buckets(torch.zeros(1, dtype=torch.long), num_buckets, max_distance, self.bidirectional)
        self.bias = nn.Embedding(num_buckets, num_heads)
        nn.init.zeros_(self.bias.weight)

    def extra_repr(self) -> str:
        return (f"num_heads={self.num_heads}, num_buckets={self.num_buckets}, "
                f"max_distance={self.max_distance}, bidirectional={self.bidirectional}")

    def forward(self, q_len: int, k_len: int | None = None) -> Tensor:
        dist = relative_distances(q_len, k_len, device=self.bias.weight.device)
        buckets = t5_buckets(dist, self.num_buckets, self.max_distance, self.bidirectional)
        return self.bias(buckets).permute(2, 0, 1).unsqueeze(0)


def alibi_slopes(num_heads: int) -> Tensor:
    """ALiBi's slope of each head: the geometric sequence ``2^(-8h/n)``, ``h = 1 … n``.

    For ``n`` not a power of two, Press et al. take the slopes of the nearest
    smaller power of two ``p`` and fill up with every other slope of ``2p``.
    Shape ``(num_heads,)``.
    """
    checks.positive_int(num_heads, "num_heads")

    def power_of_two(n: int) -> list[float]:
        return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]

    p = 2 ** int(math.floor(math.log2(num_heads)))
    slopes = power_of_two(p)
    if p < num_heads:
        slopes += power_of_two(2 * p)[0::2][: num_heads - p]
    return torch.tensor(slopes)


class ALiBi(nn.Module):
    """Attention with Linear Biases (Press, Smith and Lewis, 2022): no parameters.

    ``forward(q_len, k_len)`` returns ``-m_h·|j - i|`` with shape
    ``(1, heads, q_len, k_len)``: each head penalises distant keys linearly,
    with its own slope ``m_h`` (:func:`alibi_slopes`, unless ``slopes`` gives one
    per head). In a causal model only ``j ≤ i`` survives the mask, and the bias is ``m_h·(j - i)``.
    """

    def __init__(self, num_heads: int, slopes=None):
        super().__init__()
        self.num_heads = checks.positive_int(num_heads, "num_heads")
        if slopes is None:
            values = alibi_slopes(num_heads)
        else:
            # Other slopes than Press et al.'s, to test whether the scheme or its slopes decide a result.
            values = checks.features(slopes, "slopes (las pendientes)", dtype=torch.float32).flatten()
            wrong = not bool(torch.isfinite(values).all()) or bool((values <= 0).any())
            if values.numel() != self.num_heads or wrong:
                raise ValueError(f"slopes debe tener {self.num_heads} pendientes positivas y finitas "
                                 f"(una por cabeza); recibí {values.tolist()}.")
        self.register_buffer("slopes", values, persistent=False)

    def extra_repr(self) -> str:
        return f"num_heads={self.num_heads}"

    def forward(self, q_len: int, k_len: int | None = None) -> Tensor:
        # Negate the integer distances (not the product) so that the diagonal is +0.0, not -0.0.
        dist = (-relative_distances(q_len, k_len, device=self.slopes.device).abs()).to(self.slopes.dtype)
        return (self.slopes[:, None, None] * dist).unsqueeze(0)


#: How :class:`RotaryEmbedding` stretches to sequences longer than the training ones
#: (see :func:`rope_frequencies`).
ROPE_SCALINGS: tuple[str, ...] = ("linear", "ntk")


def _check_rope_scaling(scaling, factor, d_k: int) -> tuple[str | None, float]:
    if scaling is not None and scaling not in ROPE_SCALINGS:
        raise ValueError(f"scaling debe ser None, 'linear' (interpolación de posiciones) o 'ntk'; "
                         f"se recibió {scaling!r}.")
    factor = checks.positive_number(factor, "factor")
    if scaling is None and factor != 1.0:
        raise ValueError(f"factor={factor:g} solo tiene sentido con scaling='linear' o 'ntk'.")
    if scaling is not None and factor < 1.0:
        raise ValueError("factor es cuántas veces se alarga el contexto: debe ser ≥ 1; "
                         f"se recibió {factor:g}.")
    if scaling == "ntk" and d_k < 4:
        raise ValueError(f"El escalado NTK necesita d_k ≥ 4 (al menos dos frecuencias); d_k={d_k}.")
    return scaling, factor


def rope_frequencies(d_k: int, base: float = 10000.0, *, scaling: str | None = None,
                     factor: float = 1.0) -> Tensor:
    """RoPE's angle per position of each pair, shape ``(d_k/2,)`` (float64).

    * ``scaling=None``: ``θ_i = base^(-2i/d)`` (:func:`frequencies`);
    * ``"linear"``, position interpolation (Chen et al., 2023): every ``θ_i``
      divided by ``factor``, so ``factor·L`` positions turn as far as ``L`` did;
    * ``"ntk"``, NTK-aware scaling (bloc97, 2023): ``base`` multiplied by
      ``factor^(d/(d-2))``. The fastest pair (``i = 0``) keeps its angle and the
      slowest is divided by exactly ``factor``; the ones between, by less.
    """
    scaling, factor = _check_rope_scaling(scaling, factor, checks.positive_int(d_k, "d_k"))
    if scaling == "ntk":
        base = checks.positive_number(base, "base")
        try:
            base *= factor ** (d_k / (d_k - 2))
        except OverflowError:  # Python's float power raises instead of giving inf
            base = math.inf
        if not math.isfinite(base):
            raise ValueError(f"factor={factor:g} es tan grande que la base de NTK, base·factor^(d/(d-2)), "
                             "no cabe en un número de coma flotante; usa un factor menor.")
    theta = frequencies(d_k, base)
    return theta / factor if scaling == "linear" else theta


class RotaryEmbedding(nn.Module):
    """Rotary position embedding, RoPE (Su et al., 2024).

    The vector at position ``p`` has each pair of columns ``(2i, 2i+1)`` turned
    by the angle ``p·θ_i``, ``θ_i = base^(-2i/d)`` (the sinusoidal frequencies):
    ``x ↦ R_p x`` with ``R_p`` = :func:`block_rotation` of ``p·θ``. Since
    ``R_iᵀ R_j = R_{j-i}``, ``(R_i q)·(R_j k) = qᵀ R_{j-i} k`` depends on the
    positions only through ``j - i``. Norms are unchanged.

    ``rotate(x, offset)``: ``x (..., seq, d)`` → same shape, first row at
    position ``offset``. ``forward(q, k)`` rotates the queries and keys of a
    self-attention layer: keys at positions ``0 … k_len - 1`` and queries at
    the last ``q_len`` of those positions (so a decoder with a cache of past
    keys stays right). It is the ``rotary`` argument of
    ``MultiHeadAttention``.

    ``scaling`` and ``factor`` stretch the rotation to ``factor`` times the
    training length (:func:`rope_frequencies`); :meth:`scaled` gives the same
    module with another scaling.
    """

    def __init__(self, d_k: int, base: float = 10000.0, *, scaling: str | None = None,
                 factor: float = 1.0):
        super().__init__()
        _check_sinusoidal_args(d_k, base)
        self.d_k, self.base = d_k, float(base)
        self.scaling, self.factor = _check_rope_scaling(scaling, factor, d_k)
        self.register_buffer("theta", rope_frequencies(d_k, base, scaling=self.scaling,
                                                       factor=self.factor).float(), persistent=False)

    def extra_repr(self) -> str:
        scaled = "" if self.scaling is None else f", scaling={self.scaling!r}, factor={self.factor:g}"
        return f"d_k={self.d_k}, base={self.base:g}{scaled}"

    def scaled(self, scaling: str | None, factor: float = 1.0) -> RotaryEmbedding:
        """The same rotation with another :data:`ROPE_SCALINGS` (for a model already trained):
        it has no weights, so nothing else changes."""
        return RotaryEmbedding(self.d_k, self.base, scaling=scaling, factor=factor).to(self.theta.device)

    def rotate(self, x: Tensor, offset: int = 0) -> Tensor:
        x = checks.features(x, "x")  # an integer tensor would truncate the cosines and sines
        if not isinstance(x, Tensor) or x.dim() < 2 or x.shape[-1] != self.d_k:
            shape = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
            raise ValueError(
                f"Se esperaba un tensor (..., seq, d_k) con d_k={self.d_k}; se recibió {shape}."
            )
        offset = checks.integer(offset, "offset")
        pos = torch.arange(x.shape[-2], device=x.device, dtype=torch.float64) + offset
        angles = pos[:, None] * self.theta.to(device=x.device, dtype=torch.float64)[None, :]
        cos, sin = torch.cos(angles).to(x.dtype), torch.sin(angles).to(x.dtype)
        even, odd = x[..., 0::2], x[..., 1::2]
        out = torch.empty_like(x)
        out[..., 0::2] = even * cos - odd * sin
        out[..., 1::2] = even * sin + odd * cos
        return out

    def forward(self, q: Tensor, k: Tensor) -> tuple[Tensor, Tensor]:
        return self.rotate(q, offset=k.shape[-2] - q.shape[-2]), self.rotate(k)


# ---------------------------------------------------------------------------
# An extrapolation experiment: "repeat the token k places back"
# ---------------------------------------------------------------------------

#: The position schemes that :class:`PositionProbe` accepts.
SCHEMES = ("ninguna", "aprendida", "sinusoidal", "shaw", "t5", "alibi", "rope")


def lookback_batch(batch: int, length: int, lag: int = 3, vocab: int = 16,
                   generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """Random tokens and the target "the token ``lag`` places back".

    Returns ``(x, y)``, both long ``(batch, length)``, with ``y[:, t] = x[:, t - lag]``;
    the first ``lag`` targets have no answer and are ``-100`` (ignored by
    ``cross_entropy``). The answer depends only on the distance to the key,
    never on the absolute position, so the task can be asked at any length.
    """
    batch = checks.positive_int(batch, "batch (tamaño del lote)")
    lag = checks.positive_int(lag, "lag (distancia hacia atrás)")
    vocab = checks.positive_int(vocab, "vocab (tamaño del vocabulario)")
    checks.positive_int(length, "length", minimum=lag + 1)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator debe ser un torch.Generator; se recibió {type(generator).__name__}.")
    x = torch.randint(0, vocab, (batch, length), generator=generator)
    y = x.roll(lag, dims=1)
    y[:, :lag] = -100
    return x, y


class PositionProbe(nn.Module):
    """A small causal Transformer whose only difference between runs is the position scheme.

    Token embedding → (absolute encoding) → ``layers`` × [Pre-LN causal
    :class:`~dldna.attention.MultiHeadAttention` (with the scheme's bias or
    rotation) + feed-forward, each with a residual] → LayerNorm → logits.
    ``scheme`` is one of :data:`SCHEMES`; ``max_len`` is the training length:
    the size of the learned table (``'aprendida'``, which reuses its last row
    past the table) and, unless ``bucket_distance`` says otherwise, T5's
    ``max_distance``, so that every distance longer than the training ones
    falls in a bucket that training reached (the last one). ``alibi_slopes``
    replaces ALiBi's standard slopes (one per head).

    Shapes: tokens ``(batch, seq)`` (long) → logits ``(batch, seq, vocab)``.
    """

    def __init__(self, scheme: str, vocab: int = 16, d_model: int = 32, num_heads: int = 2,
                 layers: int = 2, max_len: int = 24, max_distance: int = 8,
                 bucket_distance: int | None = None, alibi_slopes: list[float] | None = None):
        super().__init__()
        if scheme not in SCHEMES:
            raise ValueError(f"Esquema de posiciones desconocido: {scheme!r}. Los válidos son {SCHEMES}.")
        vocab = checks.positive_int(vocab, "vocab")
        d_k = _check_heads(d_model, num_heads)
        d_model, num_heads = int(d_model), int(num_heads)
        layers = checks.positive_int(layers, "layers")
        max_len = checks.positive_int(max_len, "max_len")
        max_distance = checks.non_negative_int(max_distance, "max_distance")
        # An argument of another scheme would be silently ignored.
        for name, value, owner in (("bucket_distance", bucket_distance, "t5"),
                                   ("alibi_slopes", alibi_slopes, "alibi")):
            if value is not None and scheme != owner:
                raise ValueError(f"{name} solo se usa con scheme={owner!r}; aquí scheme={scheme!r}.")
        if scheme == "rope" and d_k % 2:
            raise ValueError(f"RoPE gira las dimensiones de cada cabeza por pares: d_model / num_heads debe "
                             f"ser par; es {d_model} / {num_heads} = {d_k}.")
        self.scheme, self.num_heads = scheme, num_heads
        self.embed = nn.Embedding(vocab, d_model)
        self.absolute: nn.Module | None = None
        if scheme == "aprendida":
            self.absolute = LearnedPositionalEncoding(d_model, max_len, overflow="clamp")
        elif scheme == "sinusoidal":
            self.absolute = SinusoidalPositionalEncoding(d_model)
        self.relative: nn.Module | None = None
        if scheme == "shaw":
            self.relative = ShawRelativePosition(d_k, max_distance)
        elif scheme == "t5":
            # 16 causal buckets: distances 0-7 exact, so the logarithmic ones need max_distance > 8.
            reach = max(max_len, 9) if bucket_distance is None else bucket_distance
            self.relative = T5RelativeBias(num_heads, num_buckets=16, max_distance=reach, bidirectional=False)
        elif scheme == "alibi":
            self.relative = ALiBi(num_heads, slopes=alibi_slopes)
        elif scheme == "rope":
            self.relative = RotaryEmbedding(d_k)
        self.attn = nn.ModuleList(MultiHeadAttention(d_model, num_heads) for _ in range(layers))
        self.attn_norm = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(layers))
        self.ff = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, 2 * d_model), nn.ReLU(),
                          nn.Linear(2 * d_model, d_model))
            for _ in range(layers)
        )
        self.head = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, vocab))

    def _attend(self, layer, x: Tensor, mask: Tensor, bias: Tensor | None) -> tuple[Tensor, Tensor]:
        if self.scheme != "shaw":
            rotary = self.relative if self.scheme == "rope" else None
            return layer(x, mask=mask, bias=bias, rotary=rotary)
        q, k, v = (split_heads(p(x), self.num_heads) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
        heads, weights = shaw_attention(q, k, v, self.relative, mask=mask)
        return layer.out_proj(merge_heads(heads)), weights

    def forward(self, tokens: Tensor, return_weights: bool = False) -> Tensor | tuple[Tensor, list[Tensor]]:
        """Logits ``(batch, seq, vocab)``; with ``return_weights`` also each layer's
        attention weights ``(batch, heads, seq, seq)``."""
        tokens = checks.ids(tokens, "tokens", vocab_size=self.embed.num_embeddings, like=self, ndim=2)
        return_weights = checks.boolean(return_weights, "return_weights")
        n = tokens.shape[1]
        if not n:
            raise ValueError("tokens no tiene posiciones: tiene forma (batch, 0).")
        x = self.embed(tokens)
        if self.absolute is not None:
            x = self.absolute(x)
        mask = torch.ones(n, n, dtype=torch.bool, device=tokens.device).tril()
        bias = self.relative(n, n) if self.scheme in ("t5", "alibi") else None
        weights = []
        for attn, norm, ff in zip(self.attn, self.attn_norm, self.ff, strict=True):
            out, w = self._attend(attn, norm(x), mask, bias)
            weights.append(w)
            x = x + out
            x = x + ff(x)
        return (self.head(x), weights) if return_weights else self.head(x)


def _probe_args(model, length, lag, start, samples, seed) -> tuple[int, int, int]:
    """The arguments of :func:`lag_attention`, :func:`lag_profile` and :func:`probe_accuracy`,
    checked: ``(length, lag, start)`` with ``start`` (default ``lag``) raised to ``lag``, the
    first position with an answer."""
    if not isinstance(model, PositionProbe):
        raise TypeError(f"model debe ser una PositionProbe; se recibió {type(model).__name__}.")
    checks.positive_int(samples, "samples")
    checks.non_negative_int(seed, "seed")
    lag = checks.positive_int(lag, "lag")
    length = checks.positive_int(length, "length", minimum=lag + 1)
    start = lag if start is None else checks.non_negative_int(start, "start")
    if start >= length:
        raise ValueError(f"start ({start}) debe ser menor que length ({length}): no quedaría ninguna "
                         "posición que evaluar.")
    return length, lag, max(start, lag)


def _lag_weights(model, length, lag, start, samples, seed, far) -> Tensor:
    """Every head's mean weight on the key ``lag`` places back and on the keys
    ``≥ far`` places back: ``(layers · heads, 2)``, layer by layer. Means over
    ``samples`` fresh sequences and over the queries at positions ``≥ start``."""
    model.eval()
    device = next(model.parameters()).device
    gen = torch.Generator().manual_seed(seed)
    x, _ = lookback_batch(samples, length, lag, model.head[-1].out_features, generator=gen)
    _, weights = model(x.to(device), return_weights=True)
    rows = torch.arange(start, length, device=device)
    beyond = (rows[:, None] - torch.arange(length, device=device)) >= far  # (q, k)
    per_layer = []
    for w in weights:  # (batch, heads, q, k)
        on_lag = w[:, :, rows, rows - lag].mean(dim=(0, 2))  # (heads,)
        far_away = (w[:, :, rows] * beyond).sum(-1).mean(dim=(0, 2))
        per_layer.append(torch.stack([on_lag, far_away], dim=-1))
    return torch.cat(per_layer).cpu()


@torch.no_grad()
def lag_attention(model: PositionProbe, length: int, lag: int = 3, start: int | None = None,
                  samples: int = 64, seed: int = 1234) -> float:
    """The largest mean weight that a head gives to the key ``lag`` places back.

    Mean over sequences and over queries at positions ``≥ start`` (default
    ``lag``); maximum over layers and heads. Near 1 when some head looks
    exactly ``lag`` places back; it falls when the weight spreads to other keys.
    """
    length, lag, start = _probe_args(model, length, lag, start, samples, seed)
    return _lag_weights(model, length, lag, start, samples, seed, far=length)[:, 0].max().item()


@torch.no_grad()
def lag_profile(model: PositionProbe, length: int, far: int, lag: int = 3, start: int | None = None,
                samples: int = 64, seed: int = 1234) -> tuple[float, float]:
    """Where the head that looks most ``lag`` places back puts its weight.

    Returns ``(on_lag, beyond)`` for the head of :func:`lag_attention`:
    its mean weight on the key ``lag`` places back (the value
    :func:`lag_attention` returns) and its total mean weight on the keys
    ``≥ far`` places back. With ``far`` the training length, ``beyond`` is the
    weight on distances never seen in training: where the lost weight went.
    """
    length, lag, start = _probe_args(model, length, lag, start, samples, seed)
    far = checks.positive_int(far, "far")
    if far >= length:
        raise ValueError(f"far ({far}) debe ser menor que length ({length}): ninguna clave está "
                         f"a {far} posiciones o más de su consulta.")
    weights = _lag_weights(model, length, lag, start, samples, seed, far)
    on_lag, beyond = weights[weights[:, 0].argmax()].tolist()
    return on_lag, beyond


@torch.no_grad()
def probe_accuracy(model: PositionProbe, length: int, lag: int = 3, start: int | None = None,
                   samples: int = 256, seed: int = 1234) -> float:
    """Accuracy of ``model`` on fresh sequences of ``length`` tokens, at positions ``≥ start``.

    ``start`` defaults to ``lag`` (every position with an answer); pass the
    training length to score only the positions the model never saw.
    """
    length, lag, start = _probe_args(model, length, lag, start, samples, seed)
    model.eval()
    device = next(model.parameters()).device
    vocab = model.head[-1].out_features
    gen = torch.Generator().manual_seed(seed)
    x, y = lookback_batch(samples, length, lag, vocab, generator=gen)
    pred = model(x.to(device)).argmax(-1).cpu()
    return (pred[:, start:] == y[:, start:]).float().mean().item()

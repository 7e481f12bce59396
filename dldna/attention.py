"""Attention: similarity, softmax and scaled dot-product attention.

Conventions:

* tensors are ``batch_first``: ``(..., seq, features)``;
* a mask is boolean and ``True`` means "this query may attend to this key"
  (as in ``F.scaled_dot_product_attention``; ``nn.MultiheadAttention`` uses
  the opposite); it broadcasts against the score matrix ``(..., q_len, k_len)``.

Contents, in the order the book meets them:

* similarity of word vectors: :func:`dot_similarity`, :func:`cosine_similarity`,
  :func:`similarity_matrix`;
* :func:`softmax` (stable for every input, with temperature) and :func:`entropy`;
* attention without learned parameters, :func:`basic_self_attention`, whose
  outputs are convex combinations of its inputs (:func:`is_convex_combination`,
  :func:`convex_hull_2d`, :func:`in_convex_hull_2d`);
* the scoring functions of RNN encoder-decoders: :class:`DotScore`,
  :class:`BilinearScore` (Luong) and :class:`AdditiveScore` (Bahdanau), with
  :func:`attend`;
* :func:`scaled_dot_product_attention` and :class:`SelfAttention` (Q, K, V);
* :class:`MultiHeadAttention` (explicit or fused path, with :func:`split_heads`,
  :func:`merge_heads` and, for grouped keys and values, :func:`repeat_kv`) and
  :class:`CollaborativeAttention`.

Inputs are checked with :mod:`dldna.checks`: float64 tensors, NumPy arrays and
lists become tensors of the layer's dtype (or the query's), and what cannot be
used gets a Spanish message. No finite input gives NaN: scores are computed in
float32 at least, and scores too large for their dtype are refused with a message.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from dldna import checks, masking

_HALF = (torch.float16, torch.bfloat16)


def _wide(x: Tensor) -> Tensor:
    """float16/bfloat16 as float32 (their sums of products overflow or lose digits); others as they are."""
    return x.float() if x.dtype in _HALF else x


def _temperature(value) -> float:
    try:
        return checks.positive_number(value, "La temperatura")
    except ValueError:
        raise ValueError(
            f"La temperatura debe ser un número positivo y finito; se recibió {value!r}. "
            "Valores menores que 1 afilan la distribución; mayores que 1 la aplanan."
        ) from None


def softmax(scores: Tensor, dim: int = -1, temperature: float = 1.0) -> Tensor:
    """Softmax of ``scores / temperature`` along ``dim``, safe for every input that is not NaN.

    * The maximum of the raw scores is subtracted *before* dividing by the
      temperature, so every exponent is ``(s - max) / T ≤ 0``: nothing
      overflows, however large the scores or small the temperature.
    * ``-inf`` gets weight 0; a slice where every entry is ``-inf`` (a query
      with nothing to attend to) gets all zeros, not NaN.
    * ``+inf`` gets all the weight; several ``+inf`` in one slice share it
      equally (the limit of ever larger equal scores).
    * float16 and bfloat16 scores are computed in float32; the result has the
      dtype of ``scores``.

    Where both apply it gives the numbers of ``torch.softmax(scores / T, dim)`` (to rounding).
    NumPy arrays and lists are accepted; NaN scores are refused (on the CPU).
    """
    t = checks.features(scores, "scores")
    temperature = _temperature(temperature)
    dim = _dim(dim, t)
    if t.dim() and t.shape[dim] == 0:
        raise ValueError(f"No hay puntuaciones a lo largo de la dimensión {dim}: forma {tuple(t.shape)}.")
    return _softmax(_wide(t), dim, temperature).to(t.dtype)


def _dim(dim, t: Tensor) -> int:
    rank = max(t.dim(), 1)
    if isinstance(dim, bool) or not isinstance(dim, int) or not -rank <= dim < rank:
        raise ValueError(f"dim debe ser un entero entre {-rank} y {rank - 1} para una forma "
                         f"{tuple(t.shape)}; se recibió {dim!r}.")
    return dim


def _softmax(scores: Tensor, dim: int, temperature: float) -> Tensor:
    """:func:`softmax` on a checked floating tensor (no dtype change)."""
    info = torch.finfo(scores.dtype)
    # A temperature beyond the dtype's range would give 0/0 or inf/inf.
    temperature = min(max(temperature, info.tiny), info.max)
    peak = scores.amax(dim=dim, keepdim=True)
    finite_peak = torch.where(torch.isfinite(peak), peak, torch.zeros_like(peak))
    shifted = (scores - finite_peak) / temperature
    # Peak +inf: only the +inf entries keep weight (inf - inf would be NaN).
    shifted = torch.where(torch.isposinf(peak), torch.where(scores == peak, 0.0, -math.inf), shifted)
    exps = torch.exp(shifted)
    total = exps.sum(dim=dim, keepdim=True)
    # Peak -inf: every exp is 0 and the slice stays zeros.
    return exps / torch.where(total > 0, total, torch.ones_like(total))


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    scale: float | None = None,
    temperature: float = 1.0,
    bias: Tensor | None = None,
    dropout: float = 0.0,
) -> tuple[Tensor, Tensor]:
    """softmax((Q Kᵀ · scale + bias) / temperature) V, returning output and weights.

    Shapes:
        query: ``(..., q_len, d_k)``; key: ``(..., k_len, d_k)``;
        value: ``(..., k_len, d_v)``; mask: boolean, broadcastable to
        ``(..., q_len, k_len)``, ``True`` = may attend (the convention of
        ``F.scaled_dot_product_attention``); bias: a float tensor
        broadcastable to ``(..., q_len, k_len)``, added to the scaled scores
        before masking (relative-position schemes such as T5 or ALiBi, see
        :mod:`dldna.positional`).

    Returns:
        ``(output, weights)`` of shapes ``(..., q_len, d_v)`` and
        ``(..., q_len, k_len)``. ``scale`` defaults to ``1/sqrt(d_k)``. A query
        whose every key is masked gets zero weights and a zero output rather
        than NaN; no finite input gives NaN (see :func:`softmax`).

    Inputs: key and value are converted to the dtype of the query (float64
    from ``torch.from_numpy``, NumPy arrays and lists are fine); float16 and
    bfloat16 are computed in float32 and returned in their own dtype. Scores
    too large for that dtype (inputs near ``1e20`` in float32) are refused
    with a message, rather than turned into NaN.

    ``dropout``: probability of zeroing each weight before the product with V
    (as ``dropout_p`` of ``F.scaled_dot_product_attention``; use it only while
    training); the weights returned are those before dropout.
    """
    query, key, value, mask, scale, temperature, bias = _check_attention(
        query, key, value, mask, scale, temperature, bias)
    dropout = checks.probability(dropout, "dropout", allow_one=False)
    return _attend(query, key, value, mask, scale, temperature, bias, dropout)


def _attend(query, key, value, mask, scale, temperature=1.0, bias=None, dropout=0.0):
    """The formula of :func:`scaled_dot_product_attention`, on checked tensors (the layers'
    own projections, checked once at the layer's entry)."""
    scores = _wide(query) @ _wide(key).transpose(-2, -1) * scale  # (..., q_len, k_len)
    if bias is not None:
        scores = scores + bias
    _check_scores(scores)
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    weights = _softmax(scores, -1, temperature)
    mixed = F.dropout(weights, dropout) if dropout else weights
    return (mixed @ value.to(weights.dtype)).to(value.dtype), weights.to(query.dtype)


def _check_scores(scores: Tensor) -> None:
    """Refuse scores that overflowed their dtype (``inf``, or NaN from ``inf - inf`` inside one
    dot product). Read on the CPU, outside autograd, as :func:`dldna.checks.features` does."""
    if checks.reads_values(scores) and not torch.isfinite(scores).all():
        big = torch.finfo(scores.dtype).max
        raise ValueError(
            f"Las puntuaciones Q·Kᵀ no caben en {scores.dtype} (máximo ≈ {big:.1e}): las consultas o "
            "las claves son demasiado grandes. Normalízalas (por ejemplo, divídelas por su norma) "
            "o calcula en float64."
        )


def _check_attention(query, key, value, mask, scale, temperature, bias):
    query = checks.features(query, "query", finite=True)
    key = checks.features(key, "key", like=query, finite=True)
    value = checks.features(value, "value", like=query, finite=True)
    for name, t, last in (("query", query, "q_len, d_k"), ("key", key, "k_len, d_k"),
                          ("value", value, "k_len, d_v")):
        if t.dim() < 2:
            raise ValueError(f"{name} debe tener forma (..., {last}); tiene forma {tuple(t.shape)}. "
                             "Para un solo vector añade una dimensión: x[None].")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"Las consultas y las claves deben tener la misma dimensión d_k: "
            f"query termina en {query.shape[-1]} y key en {key.shape[-1]}."
        )
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(
            f"Debe haber tantos valores como claves: key tiene {key.shape[-2]} posiciones "
            f"y value {value.shape[-2]}."
        )
    try:
        target = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2]) + (query.shape[-2], key.shape[-2])
    except RuntimeError:
        raise ValueError(
            f"Las dimensiones de lote de query {tuple(query.shape)} y key {tuple(key.shape)} no son "
            "compatibles."
        ) from None
    if mask is not None:
        mask = checks.mask(mask, target, device=query.device)
    if bias is not None:
        bias = _check_bias(bias, target, query)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scale = checks.non_negative_number(scale, "scale")
    return query, key, value, mask, scale, _temperature(temperature), bias


def _check_bias(bias: Tensor, target: tuple[int, ...], like: Tensor) -> Tensor:
    """``bias``: float, broadcastable to the scores ``target``; in ``like``'s dtype and device."""
    if not isinstance(bias, Tensor) or not bias.is_floating_point():
        kind = bias.dtype if isinstance(bias, Tensor) else type(bias).__name__
        raise TypeError(
            f"El sesgo (bias) debe ser un tensor de números reales que se suma a las "
            f"puntuaciones; se recibió {kind}. Para prohibir posiciones usa una máscara booleana."
        )
    if not checks.broadcasts_to(bias.shape, target):
        raise ValueError(
            f"El sesgo de forma {tuple(bias.shape)} no se difunde a las puntuaciones "
            f"(..., q, k) = {tuple(target)}."
        )
    return bias.to(device=like.device, dtype=like.dtype)


def entropy(weights: Tensor, dim: int = -1) -> Tensor:
    """Shannon entropy (in nats) of each distribution along ``dim``; 0·log 0 = 0."""
    weights = checks.features(weights, "weights")
    dim = _dim(dim, weights)
    if weights.numel() and bool((weights < 0).any()):
        raise ValueError("Los pesos de una distribución no pueden ser negativos; la entropía se calcula "
                         "sobre probabilidades (por ejemplo, la salida de una softmax).")
    logs = torch.where(weights > 0, torch.log(weights.clamp_min(1e-30)), torch.zeros_like(weights))
    return -(weights * logs).sum(dim=dim)


# ---------------------------------------------------------------------------
# Similarity of vectors and attention without parameters
# ---------------------------------------------------------------------------


def _as_matrix(x, name: str, like: Tensor | nn.Module | None = None) -> Tensor:
    """``x`` as a floating tensor ``(..., n, d)`` with ``n ≥ 1`` and ``d ≥ 1`` (in ``like``'s dtype)."""
    x = checks.features(x, name, like=like, finite=True)
    if x.dim() < 2 or x.shape[-2] == 0 or x.shape[-1] == 0:
        raise ValueError(
            f"{name} debe tener forma (..., n, d) con al menos un vector (n ≥ 1) de al menos "
            f"una dimensión (d ≥ 1); se recibió forma {tuple(x.shape)}. Una frase vacía no "
            "tiene nada a lo que atender."
        )
    return x


def _check_same_dim(x: Tensor, y: Tensor, what: str = "x e y") -> None:
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(
            f"Los vectores de {what} deben tener la misma dimensión para compararlos: "
            f"unos tienen {x.shape[-1]} componentes y otros {y.shape[-1]}."
        )


def dot_similarity(x: Tensor, y: Tensor | None = None) -> Tensor:
    """Matrix of dot products ``x yᵀ``: entry ``(i, j)`` is ``x_i · y_j``.

    Shapes: ``x (..., n, d)``, ``y (..., m, d)`` (default ``y = x``) →
    ``(..., n, m)``. With ``y = x`` the matrix is symmetric.
    """
    x = _as_matrix(x, "x")
    y = x if y is None else _as_matrix(y, "y", like=x)
    _check_same_dim(x, y)
    return checks.no_overflow(x @ y.transpose(-2, -1), "dot_similarity")


def cosine_similarity(x: Tensor, y: Tensor | None = None, eps: float = 1e-12) -> Tensor:
    """Matrix of cosines ``x_i · y_j / (‖x_i‖ ‖y_j‖)``, each in ``[-1, 1]``.

    Same shapes as :func:`dot_similarity`. The cosine ignores the length of the
    vectors: its diagonal (``y = x``) is 1 for every non-zero vector.
    """
    x = _as_matrix(x, "x")
    y = x if y is None else _as_matrix(y, "y", like=x)
    _check_same_dim(x, y)
    eps = checks.positive_number(eps, "eps")
    xn = x / x.norm(dim=-1, keepdim=True).clamp_min(eps)
    yn = y / y.norm(dim=-1, keepdim=True).clamp_min(eps)
    return xn @ yn.transpose(-2, -1)


def similarity_matrix(x: Tensor, y: Tensor | None = None, kind: str = "dot") -> Tensor:
    """Similarity matrix of ``kind`` ``'dot'``, ``'scaled'`` (dot / √d) or ``'cosine'``."""
    if kind == "dot":
        return dot_similarity(x, y)
    if kind == "scaled":
        x = _as_matrix(x, "x")
        return dot_similarity(x, y) / math.sqrt(x.shape[-1])
    if kind == "cosine":
        return cosine_similarity(x, y)
    raise ValueError(
        f"Tipo de similitud desconocido: {kind!r}. Los válidos son 'dot' (producto escalar), "
        "'scaled' (producto escalar / √d) y 'cosine' (coseno)."
    )


def basic_self_attention(
    x: Tensor, temperature: float = 1.0, kind: str = "dot"
) -> tuple[Tensor, Tensor]:
    """Self-attention with no learned parameters: ``softmax(S / T) X``.

    ``S`` is :func:`similarity_matrix` of ``x`` with itself. Every output row
    is a weighted average of the rows of ``x`` (weights ≥ 0 that sum to 1).

    Shapes: ``x (..., n, d)`` → ``(output (..., n, d), weights (..., n, n))``.
    """
    x = _as_matrix(x, "x")
    weights = softmax(similarity_matrix(x, kind=kind), dim=-1, temperature=temperature)
    return weights @ x, weights


def is_convex_combination(weights: Tensor, atol: float = 1e-6) -> bool:
    """True when every row of ``weights`` is ≥ 0 and sums to 1 (within ``atol``)."""
    weights = checks.features(weights, "weights")
    atol = checks.non_negative_number(atol, "atol")
    return bool((weights >= -atol).all() and torch.allclose(
        weights.sum(-1), torch.ones((), dtype=weights.dtype), atol=atol))


def convex_hull_2d(points: Tensor) -> Tensor:
    """Indices of the vertices of the convex hull of 2-D ``points``, counter-clockwise.

    Andrew's monotone chain. ``points`` has shape ``(n, 2)``; collinear points
    on an edge are left out.
    """
    pts = checks.features(points, "points", dtype=torch.float64, finite=True)
    if pts.dim() != 2 or pts.shape[1] != 2 or pts.shape[0] < 1:
        raise ValueError(
            f"Se esperaban puntos del plano, de forma (n, 2) con n ≥ 1; "
            f"se recibió {tuple(pts.shape)}."
        )
    order = sorted(range(len(pts)), key=lambda i: (float(pts[i, 0]), float(pts[i, 1])))

    def cross(o: int, a: int, b: int) -> float:
        return float((pts[a, 0] - pts[o, 0]) * (pts[b, 1] - pts[o, 1])
                     - (pts[a, 1] - pts[o, 1]) * (pts[b, 0] - pts[o, 0]))

    def half(indices: list[int]) -> list[int]:
        chain: list[int] = []
        for i in indices:
            while len(chain) >= 2 and cross(chain[-2], chain[-1], i) <= 0:
                chain.pop()
            chain.append(i)
        return chain

    if len(order) < 3:
        return torch.tensor(order)
    lower, upper = half(order), half(order[::-1])
    return torch.tensor(lower[:-1] + upper[:-1])


def in_convex_hull_2d(queries: Tensor, points: Tensor, atol: float = 1e-6) -> Tensor:
    """For each 2-D query, whether it lies inside (or on) the convex hull of ``points``.

    Shapes: ``queries (m, 2)``, ``points (n, 2)`` with at least three points
    not on one line → boolean ``(m,)``.
    """
    q = checks.features(queries, "queries", dtype=torch.float64, finite=True)
    if q.dim() != 2 or q.shape[1] != 2:
        raise ValueError(f"Las consultas deben tener forma (m, 2); se recibió {tuple(q.shape)}.")
    pts = checks.features(points, "points", dtype=torch.float64, finite=True)
    hull = pts[convex_hull_2d(pts)]
    if len(hull) < 3:
        raise ValueError("Se necesitan al menos tres puntos que no estén alineados.")
    a, b = hull, hull.roll(-1, dims=0)  # edges a → b, counter-clockwise
    edge, rel = (b - a)[None], q[:, None] - a[None]
    cross = edge[..., 0] * rel[..., 1] - edge[..., 1] * rel[..., 0]  # (m, edges)
    return (cross >= -atol).all(dim=1)


# ---------------------------------------------------------------------------
# Scoring functions of RNN encoder-decoders (Luong, Bahdanau)
# ---------------------------------------------------------------------------


def _check_score_inputs(query, keys, like: nn.Module | None = None, query_dim: int | None = None,
                        key_dim: int | None = None) -> tuple[Tensor, Tensor]:
    """``query (..., q, d_q)`` and ``keys (..., k, d_k)`` as tensors of one dtype (``like``'s, if given)."""
    query = _as_matrix(query, "query", like=like)
    keys = _as_matrix(keys, "keys", like=query if like is None else like)
    if query_dim is not None and query.shape[-1] != query_dim:
        raise ValueError(
            f"La consulta debe tener {query_dim} componentes; tiene {query.shape[-1]}."
        )
    if key_dim is not None and keys.shape[-1] != key_dim:
        raise ValueError(f"Las claves deben tener {key_dim} componentes; tienen {keys.shape[-1]}.")
    return query, keys


class DotScore(nn.Module):
    """``score(s, h) = s · h``.

    Shapes: query ``(..., q, d)``, keys ``(..., k, d)`` → ``(..., q, k)``.
    """

    def forward(self, query: Tensor, keys: Tensor) -> Tensor:
        query, keys = _check_score_inputs(query, keys)
        _check_same_dim(query, keys, "la consulta y las claves")
        return query @ keys.transpose(-2, -1)


class BilinearScore(nn.Module):
    """Luong's "general" score ``score(s, h) = sᵀ W h`` with a learned ``W (d_q, d_k)``.

    With ``W = I`` it is the dot product. Query and keys may have different
    sizes. Shapes: query ``(..., q, d_q)``, keys ``(..., k, d_k)`` → ``(..., q, k)``.
    """

    def __init__(self, query_dim: int, key_dim: int | None = None):
        super().__init__()
        query_dim = checks.positive_int(query_dim, "query_dim")
        key_dim = query_dim if key_dim is None else checks.positive_int(key_dim, "key_dim")
        self.query_dim, self.key_dim = query_dim, key_dim
        self.weight = nn.Parameter(torch.empty(query_dim, key_dim))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, query: Tensor, keys: Tensor) -> Tensor:
        query, keys = _check_score_inputs(query, keys, self, self.query_dim, self.key_dim)
        return query @ self.weight @ keys.transpose(-2, -1)


class AdditiveScore(nn.Module):
    """Bahdanau's additive (MLP) score ``score(s, h) = vᵀ tanh(W_s s + W_h h + b)``.

    Equivalent to ``vᵀ tanh(W [s; h] + b)`` with ``W = [W_s  W_h]``. Shapes:
    query ``(..., q, d_q)``, keys ``(..., k, d_k)`` → ``(..., q, k)``.
    """

    def __init__(self, query_dim: int, key_dim: int | None = None, hidden_dim: int | None = None):
        super().__init__()
        query_dim = checks.positive_int(query_dim, "query_dim")
        key_dim = query_dim if key_dim is None else checks.positive_int(key_dim, "key_dim")
        hidden_dim = query_dim if hidden_dim is None else checks.positive_int(hidden_dim, "hidden_dim")
        self.query_dim, self.key_dim = query_dim, key_dim
        self.query_proj = nn.Linear(query_dim, hidden_dim, bias=False)
        self.key_proj = nn.Linear(key_dim, hidden_dim, bias=True)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, query: Tensor, keys: Tensor) -> Tensor:
        query, keys = _check_score_inputs(query, keys, self, self.query_dim, self.key_dim)
        hidden = torch.tanh(
            self.query_proj(query).unsqueeze(-2) + self.key_proj(keys).unsqueeze(-3)
        )
        return self.v(hidden).squeeze(-1)


def attend(scores: Tensor, values: Tensor, mask: Tensor | None = None,
           temperature: float = 1.0) -> tuple[Tensor, Tensor]:
    """Turn scores into weights and average the values: ``(softmax(scores) V, weights)``.

    Shapes: scores ``(..., q, k)``, values ``(..., k, d_v)`` → ``(..., q, d_v)``
    and ``(..., q, k)``. ``mask`` is boolean, ``True`` = may attend.
    """
    scores = checks.features(scores, "scores")
    values = checks.features(values, "values", like=scores if scores.is_floating_point() else None,
                             finite=True)
    if scores.dim() < 1 or values.dim() < 2 or scores.shape[-1] != values.shape[-2]:
        raise ValueError(
            f"Hay {scores.shape[-1] if scores.dim() else 0} puntuaciones por consulta pero "
            f"{values.shape[-2] if values.dim() > 1 else 0} valores (values tiene forma "
            f"{tuple(values.shape)}, se espera (..., k, d_v)): debe haber un valor por clave."
        )
    if mask is not None:
        mask = checks.mask(mask, scores.shape, device=scores.device)
        scores = masking.masked_scores(scores, mask)
    weights = softmax(scores, dim=-1, temperature=temperature)
    return weights @ values, weights


# ---------------------------------------------------------------------------
# Self-attention with queries, keys and values
# ---------------------------------------------------------------------------


class SelfAttention(nn.Module):
    """Single-head self-attention: ``softmax(Q Kᵀ / √d_k) V`` with learned Q, K, V.

    ``Q = X W_Qᵀ``, ``K = X W_Kᵀ``, ``V = X W_Vᵀ`` are three ``nn.Linear`` maps
    (``query``, ``key``, ``value``) from ``embed_dim`` to ``d_k``, ``d_k`` and
    ``d_v`` (both default to ``embed_dim``). With ``scaled=False`` the scores
    are not divided by √d_k (to study why the scale is there).

    Shapes:
        x ``(batch, seq, embed_dim)`` (``batch_first``) or ``(seq, embed_dim)``;
        mask boolean, ``True`` = may attend, broadcastable to ``(batch, seq, seq)``.

    Returns:
        ``(output, weights)``: ``(batch, seq, d_v)`` and ``(batch, seq, seq)``
        (without the batch axis if ``x`` had none). It gives the same numbers as
        ``F.scaled_dot_product_attention`` on the projected Q, K, V.

    ``x`` may be float64 (``torch.from_numpy``), a NumPy array or a list: it
    is converted to the layer's dtype and device.
    """

    def __init__(self, embed_dim: int, d_k: int | None = None, d_v: int | None = None, *,
                 bias: bool = True, scaled: bool = True):
        super().__init__()
        embed_dim = checks.positive_int(embed_dim, "embed_dim")
        d_k = embed_dim if d_k is None else checks.positive_int(d_k, "d_k")
        d_v = embed_dim if d_v is None else checks.positive_int(d_v, "d_v")
        bias, scaled = checks.boolean(bias, "bias"), checks.boolean(scaled, "scaled")
        self.embed_dim, self.d_k, self.d_v, self.scaled = embed_dim, d_k, d_v, scaled
        self.query = nn.Linear(embed_dim, d_k, bias=bias)
        self.key = nn.Linear(embed_dim, d_k, bias=bias)
        self.value = nn.Linear(embed_dim, d_v, bias=bias)

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, d_k={self.d_k}, d_v={self.d_v}, scaled={self.scaled}"

    def _check(self, x) -> Tensor:
        x = checks.features(x, "x", like=self, ndim=(2, 3), what="(batch, seq, embed_dim) o (seq, embed_dim)",
                            finite=True)
        if x.shape[-2] == 0:
            raise ValueError("La secuencia está vacía: se necesita al menos una posición.")
        if x.shape[-1] != self.embed_dim:
            raise ValueError(
                f"Los vectores de entrada tienen {x.shape[-1]} componentes, pero la capa espera "
                f"embed_dim={self.embed_dim}."
            )
        return x

    @property
    def _scale(self) -> float:
        return 1.0 / math.sqrt(self.d_k) if self.scaled else 1.0

    def scores(self, x: Tensor) -> Tensor:
        """The score matrix ``Q Kᵀ`` (divided by √d_k if ``scaled``): ``(..., seq, seq)``."""
        x = self._check(x)
        s = self.query(x) @ self.key(x).transpose(-2, -1)
        return s / math.sqrt(self.d_k) if self.scaled else s

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        x = self._check(x)
        if mask is not None:
            mask = checks.mask(mask, (*x.shape[:-1], x.shape[-2]), device=x.device)
        q, k, v = self.query(x), self.key(x), self.value(x)
        return _attend(q, k, v, mask, self._scale)


# ---------------------------------------------------------------------------
# Multi-head attention
# ---------------------------------------------------------------------------


def _check_heads(d_model: int, num_heads: int, name: str = "num_heads") -> int:
    """``d_k = d_model // num_heads``; ``name`` is how the caller calls ``num_heads``."""
    return checks.divides(num_heads, d_model, name, "d_model",
                          f"cada cabeza recibe d_model / {name} dimensiones, que debe ser un entero.")


def split_heads(x: Tensor, num_heads: int) -> Tensor:
    """Split the feature axis into heads.

    ``(batch, seq, d_model)`` → ``view`` → ``(batch, seq, heads, d_k)`` →
    ``transpose(1, 2)`` → ``(batch, heads, seq, d_k)``, with
    ``d_k = d_model // heads``. Head ``h`` holds features
    ``h·d_k … (h+1)·d_k - 1``.
    """
    x = checks.as_tensor(x, "x")
    if x.dim() != 3:
        raise ValueError(
            f"Se esperaba un tensor (batch, seq, d_model); se recibió forma {tuple(x.shape)}."
        )
    batch, seq, d_model = x.shape
    d_k = _check_heads(d_model, num_heads)
    return x.view(batch, seq, num_heads, d_k).transpose(1, 2)


def merge_heads(x: Tensor) -> Tensor:
    """Inverse of :func:`split_heads`: ``(batch, heads, seq, d_k)`` → ``(batch, seq, heads·d_k)``.

    This is the concatenation of the heads along the feature axis.
    """
    x = checks.as_tensor(x, "x")
    if x.dim() != 4:
        raise ValueError(
            f"Se esperaba un tensor (batch, heads, seq, d_k); se recibió forma {tuple(x.shape)}."
        )
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).reshape(batch, seq, heads * d_k)


def _check_kv_heads(num_heads: int, num_kv_heads, name: str = "num_heads") -> int:
    """``num_kv_heads`` (``None``: ``num_heads``), a divisor of ``num_heads``."""
    if num_kv_heads is None:
        return num_heads
    checks.divides(num_kv_heads, num_heads, "num_kv_heads", name,
                   "cada cabeza de clave y valor sirve a un grupo de consultas del mismo tamaño.")
    return int(num_kv_heads)


def repeat_kv(x: Tensor, num_heads: int) -> Tensor:
    """Grouped-query attention: ``(batch, kv_heads, seq, d_k)`` → ``(batch, num_heads, seq, d_k)``.

    Each key/value head is repeated for its group of ``num_heads / kv_heads``
    consecutive query heads: query head ``i`` uses key/value head
    ``i // (num_heads / kv_heads)`` (the order of ``repeat_interleave``, as in
    ``F.scaled_dot_product_attention(..., enable_gqa=True)``).
    """
    x = checks.as_tensor(x, "x")
    if x.dim() != 4:
        raise ValueError(
            f"Se esperaba un tensor (batch, kv_heads, seq, d_k); se recibió forma {tuple(x.shape)}."
        )
    groups = _check_kv_heads(checks.positive_int(num_heads, "num_heads"), x.shape[1])
    return x.repeat_interleave(num_heads // groups, dim=1)


def _check_inputs(layer: nn.Module, query, key, value) -> tuple[Tensor, Tensor, Tensor]:
    """query, key, value of an attention layer as ``(batch, seq, d_model)`` tensors of its dtype.

    ``key`` defaults to ``query`` and ``value`` to ``key``; a tensor given
    twice is checked once.
    """
    checked: dict[int, Tensor] = {}
    out = []
    for name, x in (("query", query), ("key", query if key is None else key),
                    ("value", (query if key is None else key) if value is None else value)):
        if id(x) not in checked:
            t = checks.features(x, name, like=layer, finite=True)
            if t.dim() != 3:
                raise ValueError(
                    f"{name} debe tener forma (batch, seq, d_model) (batch_first); se recibió "
                    f"{tuple(t.shape)}. Para una sola secuencia añade el lote con x.unsqueeze(0)."
                )
            if t.shape[-1] != layer.d_model:
                raise ValueError(
                    f"{name} termina en {t.shape[-1]} rasgos, pero la capa espera d_model={layer.d_model}."
                )
            checked[id(x)] = t
        out.append(checked[id(x)])
    query, key, value = out
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(
            f"key y value deben tener el mismo lote y longitud; key {tuple(key.shape)}, "
            f"value {tuple(value.shape)}."
        )
    if query.shape[0] != key.shape[0]:
        raise ValueError(
            f"query y key deben tener el mismo tamaño de lote: {query.shape[0]} y {key.shape[0]}."
        )
    return query, key, value


def _fused(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, bias: Tensor | None,
           dropout: float) -> Tensor:
    """PyTorch's fused kernel, ``F.scaled_dot_product_attention``: the numbers of
    :func:`scaled_dot_product_attention` without the ``(batch, heads, q, k)`` weights in memory.

    Its boolean ``attn_mask`` has our convention (``True`` = takes part); a
    float one is added to the scores, which is how ``bias`` goes in.
    """
    keep, attn_mask = None, bias
    if mask is not None:
        # A query with every key blocked: some kernels give NaN there. Let it
        # see everything, then zero its output, as the explicit path does.
        keep = mask.any(-1, keepdim=True)
        mask = mask | ~keep
        attn_mask = mask if bias is None else torch.where(mask, bias, -math.inf)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=dropout)
    return out if keep is None else out.masked_fill(~keep, 0.0)


class MultiHeadAttention(torch.nn.Module):
    """Multi-head attention (Vaswani et al., 2017), ``batch_first``.

    ``MultiHead(Q, K, V) = Concat(head_1, …, head_h) W_O`` with
    ``head_i = softmax(Q W_Q,i (K W_K,i)ᵀ / √d_k) V W_V,i`` and
    ``d_k = d_model / num_heads``. The four projections are ``d_model × d_model``
    linear layers (``q_proj``, ``k_proj``, ``v_proj``, ``out_proj``); the
    per-head matrices are column blocks of the first three.

    Call as ``mha(x)`` (self-attention), ``mha(x, memory)`` (cross-attention:
    keys and values from ``memory``) or ``mha(query, key, value)``.

    Two paths compute the same numbers:

    * ``need_weights=True`` (default): the explicit formula the chapters read,
      :func:`scaled_dot_product_attention` per head; dropout (training only)
      acts on the weights before their one product with V.
    * ``need_weights=False``: PyTorch's fused kernel
      ``F.scaled_dot_product_attention`` (flash or memory-efficient attention on
      a GPU), which never stores the ``(batch, heads, q, k)`` weights; it
      returns ``(output, None)``, as ``nn.MultiheadAttention`` does. Use it to
      train.

    Position schemes that act inside attention (see :mod:`dldna.positional`):
    ``bias`` is a float tensor added to the scaled scores of every head
    (T5 bias, ALiBi); ``rotary`` is a callable ``rotary(q, k) -> (q, k)``
    applied to the per-head queries and keys ``(batch, heads, len, d_k)``
    before the dot product (RoPE, :class:`dldna.positional.RotaryEmbedding`).

    Shapes:
        query ``(batch, q_len, d_model)``; key and value ``(batch, k_len, d_model)``;
        mask boolean, ``True`` = may attend, broadcastable to
        ``(batch, heads, q_len, k_len)`` (see :mod:`dldna.masking`);
        bias float, broadcastable to ``(batch, heads, q_len, k_len)``.

    Returns:
        ``(output, weights)``: ``(batch, q_len, d_model)`` and the per-head
        weights ``(batch, heads, q_len, k_len)`` (before dropout; ``None``
        with ``need_weights=False``). A query with every key masked gets zero
        weights and a zero head output (not NaN) on both paths.

    ``num_kv_heads`` (default ``num_heads``) gives grouped-query attention
    (Ainslie et al., 2023): only ``num_kv_heads`` key and value heads, each
    shared by a group of ``num_heads / num_kv_heads`` query heads (see
    :func:`repeat_kv`); ``num_kv_heads=1`` is multi-query attention (Shazeer,
    2019). ``k_proj`` and ``v_proj`` then have ``num_kv_heads · d_k`` outputs,
    and a key/value cache is ``num_heads / num_kv_heads`` times smaller.

    With the same weights (:meth:`load_torch`) it gives the same numbers as
    ``torch.nn.MultiheadAttention(d_model, num_heads, batch_first=True)``.
    Mask conventions differ between PyTorch's APIs: for
    ``F.scaled_dot_product_attention`` a boolean ``True`` takes part (as here);
    for ``nn.MultiheadAttention`` (``attn_mask``, ``key_padding_mask``) and
    ``nn.Transformer`` ``True`` means blocked, so pass ``~mask`` there.
    """

    def __init__(self, d_model: int, num_heads: int, *, bias: bool = True, dropout: float = 0.0,
                 num_kv_heads: int | None = None):
        super().__init__()
        self.d_k = _check_heads(d_model, num_heads)
        dropout = checks.probability(dropout, "dropout", allow_one=False)
        bias = checks.boolean(bias, "bias")
        self.d_model = int(d_model)
        self.num_heads = int(num_heads)
        self.num_kv_heads = _check_kv_heads(self.num_heads, num_kv_heads)
        d_kv = self.d_k * self.num_kv_heads  # d_model unless grouped
        self.q_proj = torch.nn.Linear(self.d_model, self.d_model, bias=bias)
        self.k_proj = torch.nn.Linear(self.d_model, d_kv, bias=bias)
        self.v_proj = torch.nn.Linear(self.d_model, d_kv, bias=bias)
        self.out_proj = torch.nn.Linear(self.d_model, self.d_model, bias=bias)
        self.dropout = torch.nn.Dropout(dropout)

    def extra_repr(self) -> str:
        grouped = "" if self.num_kv_heads == self.num_heads else f", num_kv_heads={self.num_kv_heads}"
        return f"d_model={self.d_model}, num_heads={self.num_heads}{grouped}, d_k={self.d_k}"

    def project(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Per-head ``(q, k, v)``: ``(batch, num_heads, q_len, d_k)`` and, for keys and
        values, ``(batch, num_kv_heads, k_len, d_k)`` (before :func:`repeat_kv`).

        On checked tensors; this is what a key/value cache keeps
        (:mod:`dldna.kv_cache`).
        """
        return (split_heads(self.q_proj(query), self.num_heads),
                split_heads(self.k_proj(key), self.num_kv_heads),
                split_heads(self.v_proj(value), self.num_kv_heads))

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        mask: Tensor | None = None,
        bias: Tensor | None = None,
        rotary: object | None = None,
        *,
        need_weights: bool = True,
    ) -> tuple[Tensor, Tensor | None]:
        query, key, value = _check_inputs(self, query, key, value)
        target = (query.shape[0], self.num_heads, query.shape[1], key.shape[1])
        mask = None if mask is None else checks.mask(mask, target, device=query.device)
        bias = None if bias is None else _check_bias(bias, target, query)
        if rotary is not None and not callable(rotary):
            raise TypeError(
                "rotary debe ser un objeto invocable rotary(q, k) -> (q, k), como "
                f"dldna.positional.RotaryEmbedding; se recibió {type(rotary).__name__}."
            )
        need_weights = checks.boolean(need_weights, "need_weights")

        q, k, v = self.project(query, key, value)
        if self.num_kv_heads != self.num_heads:
            k, v = repeat_kv(k, self.num_heads), repeat_kv(v, self.num_heads)
        if rotary is not None:
            q, k = rotary(q, k)
        if not need_weights:
            p = self.dropout.p if self.training else 0.0
            return self.out_proj(merge_heads(_fused(q, k, v, mask, bias, p))), None
        p = self.dropout.p if self.training else 0.0  # on the weights; they are returned without it
        heads, weights = _attend(q, k, v, mask, 1.0 / math.sqrt(self.d_k), bias=bias, dropout=p)
        return self.out_proj(merge_heads(heads)), weights

    @torch.no_grad()
    def load_torch(self, module: torch.nn.MultiheadAttention) -> MultiHeadAttention:
        """Copy the weights of a ``torch.nn.MultiheadAttention`` of the same size."""
        if not isinstance(module, torch.nn.MultiheadAttention):
            raise TypeError(
                f"Se esperaba un torch.nn.MultiheadAttention; se recibió {type(module).__name__}."
            )
        if (module.embed_dim, module.num_heads) != (self.d_model, self.num_heads):
            raise ValueError(
                f"Tamaños distintos: la capa de PyTorch tiene embed_dim={module.embed_dim} y "
                f"num_heads={module.num_heads}; esta, d_model={self.d_model} y "
                f"num_heads={self.num_heads}."
            )
        if self.num_kv_heads != self.num_heads:
            raise ValueError("nn.MultiheadAttention no agrupa cabezas: solo se copian sus pesos en una "
                             "capa con num_kv_heads = num_heads.")
        if not module._qkv_same_embed_dim or module.bias_k is not None:
            raise ValueError("Solo se admiten capas de PyTorch sin kdim/vdim ni add_bias_kv.")
        has_bias = module.in_proj_bias is not None
        if has_bias != (self.q_proj.bias is not None):
            raise ValueError("Una capa tiene sesgos (bias) y la otra no.")
        projections = (self.q_proj, self.k_proj, self.v_proj)
        for layer, w in zip(projections, module.in_proj_weight.chunk(3), strict=True):
            layer.weight.copy_(w)
        self.out_proj.weight.copy_(module.out_proj.weight)
        if has_bias:
            for layer, b in zip(projections, module.in_proj_bias.chunk(3), strict=True):
                layer.bias.copy_(b)
            self.out_proj.bias.copy_(module.out_proj.bias)
        return self

    @classmethod
    def from_torch(cls, module: torch.nn.MultiheadAttention) -> MultiHeadAttention:
        """A new layer holding the weights of ``module`` (see :meth:`load_torch`)."""
        if not isinstance(module, torch.nn.MultiheadAttention):
            raise TypeError(
                f"Se esperaba un torch.nn.MultiheadAttention; se recibió {type(module).__name__}."
            )
        layer = cls(module.embed_dim, module.num_heads, bias=module.in_proj_bias is not None,
                    dropout=module.dropout)
        return layer.load_torch(module)


class CollaborativeAttention(torch.nn.Module):
    """Collaborative multi-head attention (Cordonnier, Loukas and Jaggi, 2020).

    All heads share one query and one key projection to ``d_shared``
    dimensions; head ``i`` re-weights the shared dimensions with its own
    mixing vector ``m_i``::

        scores_i = (Q diag(m_i)) Kᵀ · scale,   head_i = softmax(scores_i) V_i

    Each head keeps its own value projection (``d_model // num_heads`` columns
    of ``v_proj``) and the heads are concatenated and projected by ``out_proj``
    as in :class:`MultiHeadAttention`. ``scale`` defaults to ``1/√d_shared``.
    Standard multi-head attention is the special case ``d_shared = d_model``
    with ``m_i`` the indicator of head ``i``'s block and ``scale = 1/√d_k``.

    Shapes and return value as in :class:`MultiHeadAttention`; ``mixing`` has
    shape ``(num_heads, d_shared)``.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_shared: int,
        *,
        bias: bool = True,
        scale: float | None = None,
    ):
        super().__init__()
        self.d_k = _check_heads(d_model, num_heads)
        d_model, num_heads = int(d_model), int(num_heads)
        d_shared = checks.positive_int(d_shared, "d_shared")
        bias = checks.boolean(bias, "bias")
        self.d_model, self.num_heads, self.d_shared = d_model, num_heads, d_shared
        self.scale = 1.0 / math.sqrt(d_shared) if scale is None else checks.positive_number(scale, "scale")
        self.q_proj = torch.nn.Linear(d_model, d_shared, bias=bias)
        self.k_proj = torch.nn.Linear(d_model, d_shared, bias=bias)
        self.v_proj = torch.nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = torch.nn.Linear(d_model, d_model, bias=bias)
        self.mixing = torch.nn.Parameter(torch.randn(num_heads, d_shared))

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, num_heads={self.num_heads}, d_shared={self.d_shared}"

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        mask: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        query, key, value = _check_inputs(self, query, key, value)
        target = (query.shape[0], self.num_heads, query.shape[1], key.shape[1])
        mask = None if mask is None else checks.mask(mask, target, device=query.device)
        q = self.q_proj(query)[:, None] * self.mixing[None, :, None, :]  # (b, h, q, D)
        k = self.k_proj(key)[:, None]  # (b, 1, k, D): shared by every head
        v = split_heads(self.v_proj(value), self.num_heads)
        heads, weights = _attend(q, k, v, mask, self.scale)
        return self.out_proj(merge_heads(heads)), weights

"""Online softmax: attention computed tile by tile, as FlashAttention does.

Ordinary attention builds the whole ``(q_len, k_len)`` matrix of weights
before multiplying it by V. The **online softmax** (Milakov and Gimelshein,
2018), which FlashAttention (Dao et al., 2022) runs inside one GPU routine,
reads the keys and values in tiles of ``tile`` positions and keeps, for each
query, only three running quantities:

* ``m``, the largest score seen so far;
* ``l``, the sum of ``exp(score - m)`` over the keys seen so far;
* ``acc``, the sum of ``exp(score - m) · v`` over the same keys.

When a tile brings a larger maximum ``m'``, the old ``l`` and ``acc`` were
computed relative to ``m`` and are rescaled by ``exp(m - m')``; after the last
tile ``acc / l`` is exactly ``softmax(scores) V``. The scores of one tile are
the only weights ever in memory: ``q_len · tile`` numbers instead of
``q_len · k_len``.

* :func:`online_attention` computes it and reports the bytes of the largest
  weight tensor it created, and optionally every intermediate state;
* :func:`weight_bytes` gives the two sizes from their formulas.

Shapes: query ``(..., q_len, d)``, key ``(..., k_len, d)``, value
``(..., k_len, d_v)`` → ``(..., q_len, d_v)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor

from dldna import checks

__all__ = ["OnlineResult", "online_attention", "weight_bytes"]


@dataclass
class OnlineResult:
    """What :func:`online_attention` returns.

    ``output``: ``(..., q_len, d_v)``; ``peak_weight_bytes``: bytes of the
    largest tensor of scores or weights it created (one tile's);
    ``trace``: with ``trace=True``, one dict per tile with ``start``, ``stop``,
    ``scores`` of the tile, and the running ``m``, ``l``, ``acc`` and
    ``output`` (``acc / l``) after it, all detached.
    """

    output: Tensor
    peak_weight_bytes: int
    trace: list[dict] = field(default_factory=list)


def online_attention(query: Tensor, key: Tensor, value: Tensor, tile: int, *,
                     causal: bool = False, scale: float | None = None,
                     trace: bool = False) -> OnlineResult:
    """``softmax(Q Kᵀ · scale) V`` over key tiles of ``tile`` positions, with a running max and sum.

    ``causal``: query ``i`` sees keys ``0 … i + k_len - q_len`` (the last
    queries aligned with the last keys, as in ``F.scaled_dot_product_attention``
    when ``q_len == k_len``). ``scale`` defaults to ``1/√d``. Same numbers as
    :func:`dldna.attention.scaled_dot_product_attention` up to float rounding.
    """
    query = checks.features(query, "query", finite=True)
    key = checks.features(key, "key", like=query, finite=True)
    value = checks.features(value, "value", like=query, finite=True)
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.dim() < 2:
            raise ValueError(f"{name} debe tener forma (..., posiciones, rasgos); "
                             f"tiene forma {tuple(t.shape)}.")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"Las consultas y las claves deben tener la misma dimensión: query termina en "
                         f"{query.shape[-1]} y key en {key.shape[-1]}.")
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(f"Debe haber tantos valores como claves: key tiene {key.shape[-2]} posiciones "
                         f"y value {value.shape[-2]}.")
    tile = checks.positive_int(tile, "tile")
    causal = checks.boolean(causal, "causal")
    trace = checks.boolean(trace, "trace")
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else checks.positive_number(scale, "scale")
    q_len, k_len = query.shape[-2], key.shape[-2]
    if causal and k_len < q_len:
        # The first q_len - k_len queries would see no key (zeros); masking.causal_mask refuses it too.
        raise ValueError(f"Con causal=True no puede haber más consultas ({q_len}) que claves ({k_len}): "
                         "las primeras consultas no verían ninguna clave.")
    batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    m = torch.full((*batch, q_len, 1), -math.inf, dtype=query.dtype, device=query.device)
    l_sum = torch.zeros_like(m)
    acc = torch.zeros((*batch, q_len, value.shape[-1]), dtype=query.dtype, device=query.device)
    rows = torch.arange(q_len, device=query.device)[:, None] + (k_len - q_len)
    peak, states = 0, []
    for start in range(0, k_len, tile):
        stop = min(start + tile, k_len)
        scores = query @ key[..., start:stop, :].transpose(-2, -1) * scale
        if causal:
            allowed = torch.arange(start, stop, device=query.device)[None, :] <= rows
            scores = scores.masked_fill(~allowed, -math.inf)
        m_new = torch.maximum(m, scores.amax(-1, keepdim=True))
        # A row that has seen only masked keys keeps m = -inf: shift by 0 there (exp(-inf) = 0).
        shift = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        weights = torch.exp(scores - shift)
        rescale = torch.exp(m - shift)
        l_sum = rescale * l_sum + weights.sum(-1, keepdim=True)
        acc = rescale * acc + weights @ value[..., start:stop, :]
        m = m_new
        peak = max(peak, scores.numel() * scores.element_size(), weights.numel() * weights.element_size())
        if trace:
            states.append({"start": start, "stop": stop, "scores": scores.detach().clone(),
                           "m": m.detach().clone(), "l": l_sum.detach().clone(),
                           "acc": acc.detach().clone(), "output": _divide(acc, l_sum).detach().clone()})
    return OnlineResult(_divide(acc, l_sum), peak, states)


def _divide(acc: Tensor, total: Tensor) -> Tensor:
    """``acc / total``; a query that saw no key at all gets zeros, not NaN."""
    return acc / torch.where(total > 0, total, torch.ones_like(total))


def weight_bytes(q_len: int, k_len: int, tile: int | None = None, bytes_per_value: int = 4) -> int:
    """Bytes of the attention weights held at once: ``q_len · k_len · bytes`` for the whole
    matrix (``tile=None``), ``q_len · min(tile, k_len) · bytes`` for one tile."""
    q_len = checks.positive_int(q_len, "q_len")
    k_len = checks.positive_int(k_len, "k_len")
    bytes_per_value = checks.positive_int(bytes_per_value, "bytes_per_value")
    width = k_len if tile is None else min(checks.positive_int(tile, "tile"), k_len)
    return q_len * width * bytes_per_value

"""Key/value cache: incremental decoding for the causal :class:`~dldna.language_models.LanguageModel`.

Greedy decoding (chapter 7e) calls the model on the whole prefix at every
step, so step ``n`` recomputes the keys and values of the ``n`` earlier
positions, which have not changed: in a causal model a position never sees
what comes after it. A **key/value cache** keeps, for every layer, the keys
and values of the positions already read; each new token then computes one
query, one key and one value per head, appends the key and value to the
cache and attends over the whole cache.

* :class:`KVCache`: the tensors, per layer, and their real size in bytes;
* :func:`cache_bytes`: the same size from its formula,
  ``2 · layers · kv_heads · d_head · n · bytes`` (per sequence);
* :func:`forward_cached`: logits of new tokens given the cache (the first
  call, with an empty cache, reads the whole prompt: the *prefill*);
* :func:`greedy_generate`: greedy continuation with or without the cache;
* :func:`step_seconds`: the time of one decoding step at a given length;
  :func:`compare_step_seconds`, both ways, measured in turns.

With ``num_kv_heads`` smaller than ``n_heads`` (grouped-query attention,
:class:`dldna.attention.MultiHeadAttention`) the cache keeps only the
``num_kv_heads`` shared heads, before :func:`~dldna.attention.repeat_kv`.

The model must be causal, Pre-LN (the book's :class:`LanguageModel`) and in
eval mode; prompts have no padding. Shapes: ids ``(batch, new)`` → logits
``(batch, new, vocab)``; cached keys and values ``(batch, kv_heads, n, d_k)``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch
from torch import Tensor

from dldna import checks, corpus
from dldna.attention import _attend, merge_heads, repeat_kv
from dldna.language_models import LanguageModel
from dldna.tasks.base import BOS_ID, PAD_ID, BenchResult

__all__ = ["KVCache", "benchmark", "cache_bytes", "forward_cached", "greedy_generate", "step_seconds",
           "compare_step_seconds"]


@dataclass
class KVCache:
    """Keys and values of the positions read so far, one tensor of each per layer.

    ``keys[i]`` and ``values[i]``: ``(batch, kv_heads, length, d_k)`` of layer ``i``.
    """

    keys: list[Tensor] = field(default_factory=list)
    values: list[Tensor] = field(default_factory=list)

    @property
    def length(self) -> int:
        """How many positions the cache holds (0 when empty)."""
        return int(self.keys[0].shape[2]) if self.keys else 0

    @property
    def nbytes(self) -> int:
        """The real size of the cached tensors, in bytes."""
        return sum(t.numel() * t.element_size() for t in self.keys + self.values)


def cache_bytes(n_layers: int, n_kv_heads: int, d_head: int, length: int, *,
                bytes_per_value: int = 4, batch: int = 1) -> int:
    """``2 · n_layers · n_kv_heads · d_head · length · bytes_per_value · batch``.

    The 2 counts keys and values; float32 is 4 bytes per value, float16 and bfloat16 2.
    """
    names = ("n_layers", "n_kv_heads", "d_head", "bytes_per_value", "batch")
    values = (n_layers, n_kv_heads, d_head, bytes_per_value, batch)
    n_layers, n_kv_heads, d_head, bytes_per_value, batch = (
        checks.positive_int(v, name) for v, name in zip(values, names, strict=True))
    return 2 * n_layers * n_kv_heads * d_head * checks.non_negative_int(length, "length") \
        * bytes_per_value * batch


def _check_model(model) -> LanguageModel:
    if not isinstance(model, LanguageModel):
        raise TypeError(f"Se esperaba un LanguageModel de dldna; se recibió {type(model).__name__}.")
    if not model.causal:
        raise ValueError("La caché de claves y valores solo sirve a un modelo causal (causal=True): "
                         "en uno bidireccional cada posición cambia al llegar una palabra nueva.")
    if model.training:
        raise ValueError("Pon el modelo en modo de evaluación (model.eval()) antes de generar con caché.")
    if not all(layer.norm_first for layer in model.encoder.layers):
        raise ValueError("forward_cached sigue el orden Pre-LN del libro (norm_first=True).")
    return model


@torch.no_grad()
def forward_cached(model: LanguageModel, ids: Tensor,
                   cache: KVCache | None = None) -> tuple[Tensor, KVCache]:
    """Logits ``(batch, new, vocab)`` of the new tokens ``ids`` and the cache that includes them.

    The new tokens sit at positions ``cache.length, …``; each sees every
    cached position and the new ones up to itself (the causal mask, shifted).
    The input ``cache`` is not modified. Same numbers as
    ``model(all_ids)[:, -new:]`` up to float rounding.
    """
    model = _check_model(model)
    ids = checks.ids(ids, "ids", vocab_size=model.vocab, like=model, ndim=2)
    if bool((ids == PAD_ID).any()):
        raise ValueError("Los ids de forward_cached no pueden tener relleno (PAD): la caché supone "
                         "secuencias sin huecos.")
    cache = KVCache() if cache is None else cache
    if not isinstance(cache, KVCache):
        raise TypeError(f"cache debe ser un KVCache o None; se recibió {type(cache).__name__}.")
    start, new = cache.length, ids.shape[1]
    if cache.keys and cache.keys[0].shape[0] != ids.shape[0]:
        raise ValueError(f"La caché es de un lote de {cache.keys[0].shape[0]} secuencias y los ids "
                         f"de {ids.shape[0]}.")
    table = model.embed.position.table
    if start + new > len(table):
        raise ValueError(f"La secuencia llegaría a {start + new} posiciones, más que max_len="
                         f"{len(table)} del modelo.")
    x = model.embed.token(ids) + table[start:start + new]
    # Query i (position start + i) sees keys 0 … start + i.
    keys_at = torch.arange(start + new, device=ids.device)
    mask = keys_at[None, :] <= (start + torch.arange(new, device=ids.device))[:, None]
    out = KVCache()
    for i, layer in enumerate(model.encoder.layers):
        attn = layer.self_attn
        h = layer.norm1(x)
        q, k, v = attn.project(h, h, h)
        if cache.keys:
            k = torch.cat([cache.keys[i], k], dim=2)
            v = torch.cat([cache.values[i], v], dim=2)
        out.keys.append(k)
        out.values.append(v)
        if attn.num_kv_heads != attn.num_heads:
            k, v = repeat_kv(k, attn.num_heads), repeat_kv(v, attn.num_heads)
        heads, _ = _attend(q, k, v, mask, 1.0 / math.sqrt(attn.d_k))
        x = x + attn.out_proj(merge_heads(heads))
        x = x + layer.ff(layer.norm2(x))
    return model.head(model.encoder.norm(x)), out


@torch.no_grad()
def greedy_generate(model: LanguageModel, prompt: Tensor, steps: int, *,
                    use_cache: bool = True) -> Tensor:
    """The prompt ``(batch, P)`` followed by ``steps`` greedy tokens: ``(batch, P + steps)``.

    ``use_cache=False`` calls the model on the whole sequence at every step
    (as :mod:`dldna.decoding` does with its decoder over the written prefix;
    there the encoder reads the source once); ``True`` reads the prompt once and then
    one token per step with :func:`forward_cached`. No stop at EOS: every row
    gets ``steps`` tokens, so the two ways can be compared token by token.
    """
    model = _check_model(model)
    steps = checks.positive_int(steps, "steps")
    use_cache = checks.boolean(use_cache, "use_cache")
    ids = checks.ids(prompt, "prompt", vocab_size=model.vocab, like=model, ndim=2)
    if use_cache:
        logits, cache = forward_cached(model, ids)
        for step in range(steps):
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            ids = torch.cat([ids, nxt], dim=1)
            if step < steps - 1:  # the last token's logits are not needed
                logits, cache = forward_cached(model, nxt, cache)
        return ids
    for _ in range(steps):
        nxt = model(ids)[:, -1].argmax(-1, keepdim=True)
        ids = torch.cat([ids, nxt], dim=1)
    return ids


@torch.no_grad()
def step_seconds(model: LanguageModel, ids: Tensor, *, use_cache: bool, repeats: int = 7) -> float:
    """Shortest time (s), over ``repeats`` runs, of the step that reads the last token of
    ``ids`` ``(batch, n)``.

    With the cache: one :func:`forward_cached` call for that token, the
    other ``n - 1`` positions already cached. Without: the model on all ``n``
    positions, as greedy decoding without a cache does at that length.
    """
    model = _check_model(model)
    repeats = checks.positive_int(repeats, "repeats")
    use_cache = checks.boolean(use_cache, "use_cache")
    ids = checks.ids(ids, "ids", vocab_size=model.vocab, like=model, ndim=2)
    if ids.shape[1] < 2:
        raise ValueError("Hacen falta al menos dos posiciones: las anteriores y la que se lee.")
    if use_cache:
        _, cache = forward_cached(model, ids[:, :-1])
        last = ids[:, -1:]
        run = lambda: forward_cached(model, last, cache)  # noqa: E731
    else:
        run = lambda: model(ids)  # noqa: E731
    run()  # warm-up: the first call allocates
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    # The shortest run is the one least disturbed by other programs on the machine.
    return min(times)


@torch.no_grad()
def compare_step_seconds(model: LanguageModel, ids: Tensor, *, repeats: int = 21) -> tuple[float, float]:
    """``(without cache, with cache)``: the two times of :func:`step_seconds`, measured in turns.

    One run of each, ``repeats`` times, and the shortest of each: a burst of
    load from another program slows both ways alike instead of only the one
    that happened to be running, so their comparison holds on a busy machine.
    """
    model = _check_model(model)
    repeats = checks.positive_int(repeats, "repeats")
    ids = checks.ids(ids, "ids", vocab_size=model.vocab, like=model, ndim=2)
    if ids.shape[1] < 2:
        raise ValueError("Hacen falta al menos dos posiciones: las anteriores y la que se lee.")
    _, cache = forward_cached(model, ids[:, :-1])
    last = ids[:, -1:]
    runs = (lambda: model(ids), lambda: forward_cached(model, last, cache))
    best = [math.inf, math.inf]
    for run in runs:
        run()  # warm-up: the first call allocates
    for _ in range(repeats):
        for i, run in enumerate(runs):
            t0 = time.perf_counter()
            run()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best[0], best[1]


def benchmark(device=None, quick: bool = False) -> list[BenchResult]:
    """Rows of ``make bench`` for chapter 10: greedy decoding with and without the cache.

    Chapter 9's GPT shape, untrained (time does not depend on the weights),
    with room for 520 positions, writes 255 tokens after ``<bos>`` (``quick``:
    8). ``steps`` are tokens, ``steps/s`` tokens per second; the accuracy
    column is the fraction of tokens equal to those written without the cache
    (1 when the cache changes nothing).
    """
    dev = checks.device(device)
    tokens = 8 if checks.boolean(quick, "quick") else 255
    torch.manual_seed(0)
    model = LanguageModel(len(corpus.tokenizer()), max_len=520).to(dev).eval()
    prompt = torch.full((1, 1), BOS_ID, dtype=torch.long, device=dev)
    written, rows = {}, []
    for use_cache in (False, True):
        start = time.perf_counter()
        written[use_cache] = greedy_generate(model, prompt, tokens, use_cache=use_cache)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        seconds = time.perf_counter() - start
        same = (written[use_cache] == written[False]).float().mean().item()
        rows.append(BenchResult(f"decodificación voraz {'con' if use_cache else 'sin'} caché KV",
                                dev.type, tokens, seconds, same, "pasos = tókenes generados",
                                tokens / seconds))
    return rows

"""Decoding: turning a sequence model's next-token distributions into sequences.

A trained encoder-decoder gives, for a source sentence and a target prefix,
a distribution over the next token. *Decoding* is the search (or the
sampling) that builds a whole output from those distributions, one token at
a time, until the end-of-sequence token (EOS) or a length limit:

* :func:`greedy_decode`: take the most likely token at every step;
* :func:`beam_search`: keep the ``beam_width`` most likely partial outputs
  (Wu et al., 2016 length penalty optional); can record the search tree of
  one input (:class:`BeamTree`) for :func:`dldna.viz.decoding.beam_tree`;
* :func:`sample_decode`: draw each token from the distribution reshaped by
  :func:`filter_logits`: temperature, top-k (Fan et al., 2018) and top-p or
  nucleus sampling (Holtzman et al., 2020); deterministic with a
  ``torch.Generator`` or a ``seed``;
* :func:`sequence_log_prob`: the log-probability a model gives to given outputs.

Model-agnostic. Every function takes either

* a **model** with ``encode(src) -> memory (B, S, D)`` and
  ``decode(tgt, memory, src) -> logits (B, T, V)`` (such as
  :class:`dldna.transformer.Transformer`): the source is encoded once and the
  decoder is re-run on the growing prefix; or
* a **step function** ``step(prefix, rows) -> logits``: ``prefix`` is a
  ``LongTensor (N, t)`` that starts with BOS, ``rows`` a ``LongTensor (N,)``
  saying which input (row of ``src``) each prefix belongs to, and the result
  ``(N, V)`` holds the logits (or log-probabilities) of the next token. With a
  step function ``src`` may be just the batch size (an ``int``).

Output convention (all functions): a ``LongTensor (B, L)`` of *generated*
tokens, without BOS, up to and including EOS, and ``pad_id`` after EOS;
``L <= max_len`` is the longest output of the batch. A row without EOS hit
the ``max_len`` limit. :func:`strip` turns such rows into lists of tokens.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor

__all__ = [
    "StepFn",
    "model_step",
    "greedy_decode",
    "beam_search",
    "BeamSearchResult",
    "Hypothesis",
    "BeamTree",
    "BeamNode",
    "length_penalty",
    "filter_logits",
    "next_token_probs",
    "sample_decode",
    "sequence_log_prob",
    "strip",
]

#: ``step(prefix (N, t) long, rows (N,) long) -> logits (N, V)``.
StepFn = Callable[[Tensor, Tensor], Tensor]


# ---------------------------------------------------------------------------
# Argument checks (Spanish messages: readers call these functions directly)
# ---------------------------------------------------------------------------


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_int(value, name: str, minimum: int, hint: str = "") -> int:
    if not _is_int(value) or value < minimum:
        raise ValueError(
            f"{name} debe ser un número entero mayor o igual que {minimum}; se recibió {value!r}."
            + (f" {hint}" if hint else "")
        )
    return value


def _check_token_id(value, name: str) -> int:
    if not _is_int(value) or value < 0:
        raise ValueError(f"{name} debe ser el índice (entero ≥ 0) de un tóken; se recibió {value!r}.")
    return value


def _check_temperature(temperature) -> float:
    if (not isinstance(temperature, (int, float)) or isinstance(temperature, bool)
            or not math.isfinite(temperature) or temperature <= 0):
        raise ValueError(
            f"La temperatura debe ser un número positivo y finito; se recibió {temperature!r}. "
            "Menor que 1 afila la distribución, mayor que 1 la aplana; para elegir siempre "
            "el tóken más probable (el límite T → 0) usa greedy_decode."
        )
    return float(temperature)


def _check_top_k(top_k) -> int | None:
    if top_k is None:
        return None
    return _check_int(top_k, "top_k", 1, "Usa None para no recortar por k.")


def _check_top_p(top_p) -> float | None:
    if top_p is None:
        return None
    if (not isinstance(top_p, (int, float)) or isinstance(top_p, bool)
            or not math.isfinite(top_p) or not 0 < top_p <= 1):
        raise ValueError(
            f"top_p debe estar en el intervalo (0, 1]; se recibió {top_p!r}. "
            "Es la probabilidad acumulada del núcleo (p = 1 no recorta nada)."
        )
    return float(top_p)


def _check_length_penalty(alpha) -> float:
    if (not isinstance(alpha, (int, float)) or isinstance(alpha, bool)
            or not math.isfinite(alpha) or alpha < 0):
        raise ValueError(
            f"length_penalty (α) debe ser un número ≥ 0; se recibió {alpha!r}. "
            "0 compara sumas de log-probabilidades; valores como 0.6 favorecen salidas largas."
        )
    return float(alpha)


def _is_model(obj) -> bool:
    return callable(getattr(obj, "encode", None)) and callable(getattr(obj, "decode", None))


def _check_src(src) -> Tensor:
    if not isinstance(src, Tensor) or src.dim() != 2 or src.dtype not in (
        torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8
    ):
        shape = tuple(src.shape) if isinstance(src, Tensor) else type(src).__name__
        raise ValueError(
            "src debe ser un tensor de enteros de forma (lote, longitud), un índice de tóken por "
            f"posición; se recibió {shape}. Para una sola frase usa src[None] o src.unsqueeze(0)."
        )
    if src.shape[0] == 0:
        raise ValueError("src no tiene ninguna frase (la primera dimensión, el lote, es 0).")
    return src.long()


def model_step(model, src: Tensor) -> StepFn:
    """A step function for an encoder-decoder ``model`` and a batch ``src (B, S)``.

    The source is encoded once; each call runs ``model.decode`` on the whole
    prefix (no key/value cache: simple, and fast enough for the book's
    models) and returns the logits of the last position, ``(N, V)``.
    """
    if not _is_model(model):
        raise TypeError(
            "model debe tener los métodos encode(src) y decode(tgt, memory, src), como "
            f"dldna.transformer.Transformer; se recibió {type(model).__name__}."
        )
    src = _check_src(src)
    memory = model.encode(src)

    def step(prefix: Tensor, rows: Tensor) -> Tensor:
        return model.decode(prefix, memory[rows], src[rows])[:, -1]

    return step


@contextmanager
def _inference(model):
    """No gradients, and an ``nn.Module`` in eval mode (dropout off) while decoding."""
    training = getattr(model, "training", None)
    if training is not None and callable(getattr(model, "eval", None)):
        model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        if training:
            model.train(True)


def _prepare(model_or_step, src, device=None) -> tuple[StepFn, int, torch.device]:
    if _is_model(model_or_step):
        src = _check_src(src)
        return model_step(model_or_step, src), src.shape[0], src.device
    if not callable(model_or_step):
        raise TypeError(
            "El primer argumento debe ser un modelo (con encode y decode) o una función "
            f"step(prefijo, filas) -> logits; se recibió {type(model_or_step).__name__}."
        )
    if isinstance(src, Tensor):
        batch = _check_src(src).shape[0]
        dev = src.device
    else:
        batch = _check_int(src, "src (tamaño del lote)", 1,
                           "Con una función de paso, src es un tensor (lote, longitud) o el tamaño del lote.")
        dev = torch.device("cpu")
    return model_or_step, batch, torch.device(device) if device is not None else dev


def _logits(step: StepFn, prefix: Tensor, rows: Tensor) -> Tensor:
    out = step(prefix, rows)
    if not isinstance(out, Tensor) or out.dim() != 2 or out.shape[0] != prefix.shape[0]:
        shape = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
        raise ValueError(
            f"La función de paso debe devolver logits de forma ({prefix.shape[0]}, vocabulario), "
            f"una fila por prefijo; devolvió {shape}."
        )
    return out.float()


def _finish(prefix: Tensor) -> Tensor:
    return prefix[:, 1:].contiguous()


# ---------------------------------------------------------------------------
# Greedy
# ---------------------------------------------------------------------------


def greedy_decode(model, src, max_len: int, bos_id: int, eos_id: int, pad_id: int = 0) -> Tensor:
    """Greedy decoding: at every step append the most likely next token.

    Args:
        model: an encoder-decoder (``encode``/``decode``) or a step function
            (see the module docstring).
        src: ``(B, S)`` source token ids (padded with the model's pad id); with
            a step function, also the batch size ``B``.
        max_len: the most tokens to generate per row (EOS included).
        bos_id, eos_id: the start and end tokens; ``pad_id`` fills each row
            after its EOS.

    Returns:
        ``LongTensor (B, L)``, ``L <= max_len``: the generated tokens without
        BOS, up to and including EOS, then ``pad_id``. Ties go to the lowest
        token id (``argmax``), so the result is deterministic. The whole batch
        stops as soon as every row has produced EOS.
    """
    return _autoregress(model, src, max_len, bos_id, eos_id, pad_id,
                        lambda device: lambda logits: logits.argmax(dim=-1))


def _autoregress(model, src, max_len, bos_id, eos_id, pad_id,
                 chooser: Callable[[torch.device], Callable[[Tensor], Tensor]]) -> Tensor:
    """The loop shared by greedy and sampling.

    ``chooser(device)`` returns the rule that maps each step's logits ``(B, V)``
    to the next ids ``(B,)``; rows that already produced EOS get ``pad_id``.
    """
    step, batch, device = _prepare(model, src)
    _check_int(max_len, "max_len", 1)
    bos_id, eos_id = _check_token_id(bos_id, "bos_id"), _check_token_id(eos_id, "eos_id")
    pad_id = _check_token_id(pad_id, "pad_id")
    choose = chooser(device)
    with _inference(model):
        prefix = torch.full((batch, 1), bos_id, dtype=torch.long, device=device)
        rows = torch.arange(batch, device=device)
        done = torch.zeros(batch, dtype=torch.bool, device=device)
        for _ in range(max_len):
            nxt = choose(_logits(step, prefix, rows))
            nxt = torch.where(done, torch.full_like(nxt, pad_id), nxt)
            prefix = torch.cat([prefix, nxt[:, None]], dim=1)
            done |= nxt == eos_id
            if bool(done.all()):
                break
    return _finish(prefix)


# ---------------------------------------------------------------------------
# Beam search
# ---------------------------------------------------------------------------


def length_penalty(length: int, alpha: float) -> float:
    """Wu et al. (2016): ``((5 + length) / 6) ** alpha``; a hypothesis' score is
    its log-probability divided by this. ``alpha = 0`` gives 1 (no penalty)."""
    return ((5.0 + length) / 6.0) ** alpha


@dataclass(frozen=True)
class Hypothesis:
    """One output of beam search: ``tokens`` (without BOS; with EOS when
    ``finished``), its total log-probability and its ``score`` (the
    log-probability divided by :func:`length_penalty`)."""

    tokens: tuple[int, ...]
    log_prob: float
    score: float
    finished: bool


@dataclass(frozen=True)
class BeamNode:
    """A node of the recorded search tree.

    ``status``: ``"root"`` (BOS), ``"kept"`` (entered the beam),
    ``"finished"`` (ended with EOS and was set aside), ``"pruned"`` (among the
    best candidates of its step but outside the beam). ``log_prob`` is the
    cumulative log-probability of the prefix that ends at this node.
    """

    id: int
    parent: int | None
    token: int
    step: int
    log_prob: float
    status: str


@dataclass
class BeamTree:
    """The search of one input: every candidate beam search looked at (the
    ``2 · beam_width`` best extensions of each step) and the chosen path."""

    beam_width: int
    nodes: list[BeamNode] = field(default_factory=list)
    best_path: list[int] = field(default_factory=list)

    def path_tokens(self, node_id: int) -> list[int]:
        """Tokens from the root's child to ``node_id``."""
        tokens = []
        node = self.nodes[node_id]
        while node.parent is not None:
            tokens.append(node.token)
            node = self.nodes[node.parent]
        return tokens[::-1]

    def count(self, status: str) -> int:
        return sum(n.status == status for n in self.nodes)


@dataclass
class BeamSearchResult:
    """What :func:`beam_search` returns.

    ``tokens``: ``LongTensor (B, L)``, the best output of each input (same
    convention as :func:`greedy_decode`); ``log_probs``: ``(B,)`` their total
    log-probabilities; ``hypotheses``: for each input its ``n_best`` best
    :class:`Hypothesis`, best first; ``tree``: the recorded search of input
    ``trace`` (``None`` unless asked for).
    """

    tokens: Tensor
    log_probs: Tensor
    hypotheses: list[list[Hypothesis]]
    tree: BeamTree | None = None


def beam_search(
    model,
    src,
    beam_width: int,
    max_len: int,
    bos_id: int,
    eos_id: int,
    pad_id: int = 0,
    *,
    length_penalty_alpha: float = 0.0,
    n_best: int = 1,
    trace: int | None = None,
) -> BeamSearchResult:
    """Beam search: keep the ``beam_width`` most likely partial outputs.

    At each step every live hypothesis is extended by every token; of all
    extensions the best ones are taken in order of cumulative log-probability:
    an extension that ends in EOS and ranks among the first ``beam_width`` is
    set aside as *finished*; the others fill the beam up to ``beam_width``.
    An input is done when it has ``beam_width`` finished hypotheses and no
    live one can still beat them (exact bound: log-probabilities only
    decrease), or after ``max_len`` steps, when the live hypotheses join the
    candidates as they are. The answer is the candidate with the best score,
    ``log_prob / length_penalty(len, α)``.

    ``beam_width = 1`` is greedy decoding (the same output). Works on a batch:
    the ``B · beam_width`` prefixes go through the model together.

    Args:
        model, src, max_len, bos_id, eos_id, pad_id: as in :func:`greedy_decode`.
        beam_width: how many hypotheses to keep (≥ 1).
        length_penalty_alpha: α of :func:`length_penalty` (≥ 0; 0 = none).
        n_best: how many hypotheses per input to return (1 ≤ n_best ≤ beam_width).
        trace: index of one input whose search tree to record (:class:`BeamTree`).
    """
    step, batch, device = _prepare(model, src)
    k = _check_int(beam_width, "El ancho del haz (beam_width)", 1)
    _check_int(max_len, "max_len", 1)
    bos_id, eos_id = _check_token_id(bos_id, "bos_id"), _check_token_id(eos_id, "eos_id")
    pad_id = _check_token_id(pad_id, "pad_id")
    alpha = _check_length_penalty(length_penalty_alpha)
    _check_int(n_best, "n_best", 1)
    if n_best > k:
        raise ValueError(f"n_best ({n_best}) no puede ser mayor que el ancho del haz ({k}).")
    if trace is not None and (not _is_int(trace) or not 0 <= trace < batch):
        raise ValueError(f"trace debe ser el índice de una entrada del lote (0 a {batch - 1}); "
                         f"se recibió {trace!r}.")


    tree = BeamTree(k) if trace is not None else None
    if tree is not None:
        tree.nodes.append(BeamNode(0, None, bos_id, 0, 0.0, "root"))
    # Live hypotheses of every input: tokens (B, k, t) and log-probs (B, k).
    # At the start only slot 0 is alive (BOS); the others have -inf so that
    # the first step does not pick the same extension k times.
    tokens = torch.full((batch, k, 1), bos_id, dtype=torch.long, device=device)
    scores = torch.full((batch, k), -math.inf, device=device)
    scores[:, 0] = 0.0
    live_node = [0] * k  # tree node of each live slot of input ``trace``
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]
    finished_node: dict[int, int] = {}  # index in finished[trace] -> tree node
    done = [False] * batch
    rows = torch.arange(batch, device=device).repeat_interleave(k)

    def nth_best_finished(b: int) -> float:
        top = sorted((h.score for h in finished[b]), reverse=True)
        return top[n_best - 1] if len(top) >= n_best else -math.inf

    with _inference(model):
        for t in range(1, max_len + 1):
            logp = F.log_softmax(_logits(step, tokens.view(batch * k, -1), rows), dim=-1)
            vocab = logp.shape[-1]
            total = (scores[:, :, None] + logp.view(batch, k, vocab)).view(batch, k * vocab)
            # A stable sort breaks ties towards the lower index (better parent,
            # then lower token id), as argmax does in greedy_decode.
            cand_scores, cand_index = total.sort(dim=-1, descending=True, stable=True)
            n_cand = min(2 * k, k * vocab)
            cand_scores, cand_index = cand_scores[:, :n_cand], cand_index[:, :n_cand]
            cand_scores, cand_index = cand_scores.cpu().tolist(), cand_index.cpu().tolist()
            parents = [list(range(k)) for _ in range(batch)]
            next_tok = [[pad_id] * k for _ in range(batch)]
            new_scores = scores.cpu().tolist()
            for b in range(batch):
                if done[b]:
                    continue
                new_scores[b] = [-math.inf] * k
                filled = 0
                new_nodes = [0] * k
                for rank, (score, index) in enumerate(zip(cand_scores[b], cand_index[b], strict=True)):
                    if score == -math.inf:
                        break
                    parent, token = divmod(index, vocab)
                    status = "pruned"
                    if token == eos_id:
                        if rank < k:
                            seq = tuple(tokens[b, parent, 1:].tolist()) + (token,)
                            finished[b].append(Hypothesis(seq, score, score / length_penalty(t, alpha), True))
                            status = "finished"
                    elif filled < k:
                        parents[b][filled], next_tok[b][filled] = parent, token
                        new_scores[b][filled] = score
                        status = "kept"
                    if b == trace:
                        node = BeamNode(len(tree.nodes), live_node[parent], token, t, score, status)
                        tree.nodes.append(node)
                        if status == "finished":
                            finished_node[len(finished[b]) - 1] = node.id
                        elif status == "kept":
                            new_nodes[filled] = node.id
                    filled += status == "kept"
                if b == trace:
                    live_node = new_nodes
                # Done when n_best hypotheses are finished and no live one can
                # beat them: a log-prob only goes down as tokens are added, and
                # the length penalty is at most length_penalty(max_len, α).
                live_best = max(new_scores[b])
                bound = live_best / length_penalty(max_len, alpha) if live_best < 0 else live_best
                if live_best == -math.inf or (len(finished[b]) >= n_best
                                              and bound <= nth_best_finished(b)):
                    done[b] = True
            index = torch.tensor(parents, device=device)
            tokens = torch.cat([
                tokens.gather(1, index[:, :, None].expand(-1, -1, tokens.shape[-1])),
                torch.tensor(next_tok, device=device)[:, :, None],
            ], dim=-1)
            scores = torch.tensor(new_scores, device=device)
            if all(done):
                break

    hypotheses: list[list[Hypothesis]] = []
    best_slot: list[tuple[str, int]] = []
    for b in range(batch):
        cands = [(h, ("finished", i)) for i, h in enumerate(finished[b])]
        if not done[b]:  # max_len reached: the live hypotheses are candidates too
            for slot in range(k):
                lp = scores[b, slot].item()
                if lp > -math.inf:
                    seq = tuple(tokens[b, slot, 1:].tolist())
                    hyp = Hypothesis(seq, lp, lp / length_penalty(len(seq), alpha), False)
                    cands.append((hyp, ("live", slot)))
        cands.sort(key=lambda c: c[0].score, reverse=True)
        hypotheses.append([h for h, _ in cands[:n_best]])
        best_slot.append(cands[0][1] if cands else ("none", -1))

    length = max((len(h[0].tokens) for h in hypotheses if h), default=0)
    out = torch.full((batch, max(length, 1)), pad_id, dtype=torch.long, device=device)
    for b, hyps in enumerate(hypotheses):
        if hyps:
            out[b, :len(hyps[0].tokens)] = torch.tensor(hyps[0].tokens, device=device)
    log_probs = torch.tensor([h[0].log_prob if h else -math.inf for h in hypotheses], device=device)
    if tree is not None:
        kind, i = best_slot[trace]
        node = finished_node.get(i) if kind == "finished" else live_node[i] if kind == "live" else None
        path = []
        while node is not None:
            path.append(node)
            node = tree.nodes[node].parent
        tree.best_path = path[::-1]
    return BeamSearchResult(out[:, :length] if length else out[:, :0], log_probs, hypotheses, tree)


# ---------------------------------------------------------------------------
# Sampling: temperature, top-k, top-p
# ---------------------------------------------------------------------------


def filter_logits(logits: Tensor, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None) -> Tensor:
    """Reshape next-token logits ``(..., V)`` for sampling; returns new logits.

    In this order (the usual one, e.g. in Hugging Face ``transformers``):

    1. **temperature** ``T > 0``: ``logits / T``. ``T < 1`` sharpens the
       distribution, ``T > 1`` flattens it; it never changes the ranking.
    2. **top-k**: keep the ``k`` largest logits, set the rest to ``-inf``
       (ties at the k-th value are all kept).
    3. **top-p** (nucleus): keep the smallest set of most likely tokens whose
       probability adds up to at least ``p``; the most likely token is always
       kept. ``p = 1`` keeps everything.

    ``softmax`` of the result is the distribution :func:`sample_decode` draws from.
    """
    temperature = _check_temperature(temperature)
    top_k, top_p = _check_top_k(top_k), _check_top_p(top_p)
    if not isinstance(logits, Tensor) or logits.dim() < 1:
        raise ValueError("logits debe ser un tensor (..., vocabulario).")
    out = logits.float() / temperature
    if top_k is not None and top_k < out.shape[-1]:
        kth = out.topk(top_k, dim=-1).values[..., -1:]
        out = out.masked_fill(out < kth, -math.inf)
    if top_p is not None and top_p < 1.0:
        sorted_logits, order = out.sort(dim=-1, descending=True)
        probs = sorted_logits.softmax(dim=-1)
        before = probs.cumsum(dim=-1) - probs  # probability of the strictly better tokens
        drop_sorted = before >= top_p
        drop_sorted[..., 0] = False
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        out = out.masked_fill(drop, -math.inf)
    return out


def next_token_probs(logits: Tensor, temperature: float = 1.0, top_k: int | None = None,
                     top_p: float | None = None) -> Tensor:
    """``softmax(filter_logits(...))``: the distribution sampling draws from."""
    return filter_logits(logits, temperature, top_k, top_p).softmax(dim=-1)


def _generator(generator, seed, device: torch.device) -> torch.Generator | None:
    if generator is not None and seed is not None:
        raise ValueError("Da generator o seed, no los dos.")
    if generator is not None:
        if not isinstance(generator, torch.Generator):
            raise TypeError(f"generator debe ser un torch.Generator; se recibió {type(generator).__name__}.")
        return generator
    if seed is not None:
        _check_int(seed, "seed (semilla)", 0)
        return torch.Generator(device=device).manual_seed(seed)
    return None


def sample_decode(
    model,
    src,
    max_len: int,
    bos_id: int,
    eos_id: int,
    pad_id: int = 0,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
    seed: int | None = None,
) -> Tensor:
    """Sampling: draw every next token from :func:`next_token_probs`.

    Same arguments and output as :func:`greedy_decode`, plus the filters of
    :func:`filter_logits`. Randomness comes from ``generator`` or from a new
    generator seeded with ``seed`` (give at most one); with neither, from
    PyTorch's global generator (seed it with
    :func:`dldna.runtime.seed_everything`). The same seed gives the same
    outputs. To draw several outputs per input, repeat the input rows
    (``src.repeat_interleave(n, dim=0)``).

    ``top_k=1`` gives the greedy output.
    """
    _check_temperature(temperature)
    _check_top_k(top_k)
    _check_top_p(top_p)

    def chooser(device: torch.device) -> Callable[[Tensor], Tensor]:
        gen = _generator(generator, seed, device)

        def choose(logits: Tensor) -> Tensor:
            probs = next_token_probs(logits, temperature, top_k, top_p)
            if gen is not None and gen.device != probs.device:
                return torch.multinomial(probs.to(gen.device), 1, generator=gen)[:, 0].to(device)
            return torch.multinomial(probs, 1, generator=gen)[:, 0]

        return choose

    return _autoregress(model, src, max_len, bos_id, eos_id, pad_id, chooser)


# ---------------------------------------------------------------------------
# Scoring and post-processing
# ---------------------------------------------------------------------------


def sequence_log_prob(model, src, tgt: Tensor, bos_id: int, eos_id: int) -> Tensor:
    """Total log-probability the model gives to each output row of ``tgt``.

    ``tgt``: ``(B, L)`` generated tokens in this module's convention (without
    BOS; tokens after the first EOS are ignored). Returns ``(B,)``: the sum
    over positions up to and including the first EOS (all ``L`` if none) of
    ``log p(token | source, previous tokens)``. Beam search maximises this
    (with ``length_penalty_alpha = 0``); greedy decoding does not, in general.
    """
    step, batch, device = _prepare(model, src)
    if not isinstance(tgt, Tensor) or tgt.dim() != 2 or tgt.shape[0] != batch:
        raise ValueError(f"tgt debe ser un tensor de enteros (lote = {batch}, longitud).")
    tgt = tgt.long().to(device)
    with _inference(model):
        prefix = torch.full((batch, 1), bos_id, dtype=torch.long, device=device)
        rows = torch.arange(batch, device=device)
        alive = torch.ones(batch, dtype=torch.bool, device=device)
        total = torch.zeros(batch, device=device)
        for i in range(tgt.shape[1]):
            logp = F.log_softmax(_logits(step, prefix, rows), dim=-1)
            tok = tgt[:, i]
            total += torch.where(alive, logp.gather(1, tok[:, None])[:, 0], torch.zeros_like(total))
            alive &= tok != eos_id
            prefix = torch.cat([prefix, tok[:, None]], dim=1)
            if not bool(alive.any()):
                break
    return total


def strip(tokens: Tensor | Sequence[Sequence[int]], eos_id: int,
          bos_id: int | None = None) -> list[list[int]]:
    """Rows of generated tokens as lists, cut before the first EOS (and without
    a leading BOS when ``bos_id`` is given)."""
    rows = tokens.tolist() if isinstance(tokens, Tensor) else [list(r) for r in tokens]
    out = []
    for row in rows:
        if bos_id is not None and row and row[0] == bos_id:
            row = row[1:]
        out.append(row[:row.index(eos_id)] if eos_id in row else row)
    return out

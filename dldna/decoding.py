"""Decoding: turning a sequence model's next-token distributions into sequences.

A trained encoder-decoder gives, for a source sentence and a target prefix,
a distribution over the next token. *Decoding* is the search (or the
sampling) that builds a whole output from those distributions, one token at
a time, until the end-of-sequence token (EOS) or a length limit:

* :func:`greedy_decode`: take the most likely token at every step;
* :func:`beam_search`: keep the ``beam_width`` most likely partial outputs
  (Wu et al., 2016 length penalty optional); a :class:`BeamObserver` sees
  every step, and :class:`TreeRecorder` records the search tree of one input
  (:class:`BeamTree`) for :func:`dldna.viz.decoding.beam_tree`;
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
``pad_id``, ``bos_id`` and ``unk_id`` (when given) are never generated;
``L <= max_len`` is the longest output of the batch. A row without EOS hit
the ``max_len`` limit. :func:`strip` turns such rows into lists of tokens.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from dldna import checks

__all__ = [
    "StepFn",
    "model_step",
    "greedy_decode",
    "beam_search",
    "BeamSearchResult",
    "Hypothesis",
    "BeamTree",
    "BeamNode",
    "BeamObserver",
    "TreeRecorder",
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


def _check_token_id(value, name: str) -> int:
    if not _is_int(value) or value < 0:
        raise ValueError(f"{name} debe ser el índice (entero ≥ 0) de un tóken; se recibió {value!r}.")
    return value


def _banned_ids(bos_id, eos_id, pad_id, unk_id) -> list[int]:
    """Checks the special ids; returns those a decoder must never generate
    (``<pad>``, ``<bos>`` and ``<unk>`` when given), EOS excluded."""
    eos_id = _check_token_id(eos_id, "eos_id")
    ids = [_check_token_id(bos_id, "bos_id"), _check_token_id(pad_id, "pad_id")]
    if unk_id is not None:
        ids.append(_check_token_id(unk_id, "unk_id"))
    return sorted({i for i in ids if i != eos_id})


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
    if not _is_int(top_k) or top_k < 1:
        raise ValueError(f"top_k debe ser un número entero mayor o igual que 1; se recibió {top_k!r}. "
                         "Usa None para no recortar por k.")
    return top_k


def _check_top_p(top_p) -> float | None:
    if top_p is None:
        return None
    if (not isinstance(top_p, (int, float)) or isinstance(top_p, bool)
            or not math.isfinite(top_p) or not 0 < top_p <= 1):
        raise ValueError(
            f"top_p debe estar en el intervalo (0, 1]; se recibió {top_p!r}. "
            "Es la probabilidad acumulada que conservan los tókenes más probables (p = 1 no recorta nada)."
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


def _check_src(src, model=None) -> Tensor:
    """``src`` as a ``long (B, S)`` tensor (lists and NumPy arrays converted), on
    the device of ``model`` when it is an ``nn.Module``."""
    like = model if isinstance(model, nn.Module) else None
    src = checks.ids(src, "src", like=like)
    if src.dim() != 2:
        raise ValueError(
            "src debe ser un tensor de enteros de forma (lote, longitud), un índice de tóken por "
            f"posición; se recibió {tuple(src.shape)}. Para una sola frase usa src[None] o "
            "src.unsqueeze(0)."
        )
    if src.shape[0] == 0:
        raise ValueError("src no tiene ninguna frase (la primera dimensión, el lote, es 0).")
    return src


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
    src = _check_src(src, model)
    memory = model.encode(src)

    batch = src.shape[0]

    def step(prefix: Tensor, rows: Tensor) -> Tensor:
        rows = checks.ids(rows, "rows (filas del lote)", ndim=1, like=src)
        if checks.reads_values(rows) and (int(rows.min()) < 0 or int(rows.max()) >= batch):
            bad = int(rows.min()) if int(rows.min()) < 0 else int(rows.max())
            raise ValueError(f"rows contiene la fila {bad}, fuera del lote de src (filas válidas: 0 a "
                             f"{batch - 1}).")
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


def _prepare(model_or_step, src) -> tuple[StepFn, int, torch.device]:
    if _is_model(model_or_step):
        src = _check_src(src, model_or_step)
        return model_step(model_or_step, src), src.shape[0], src.device
    if not callable(model_or_step):
        raise TypeError(
            "El primer argumento debe ser un modelo (con encode y decode) o una función "
            f"step(prefijo, filas) -> logits; se recibió {type(model_or_step).__name__}."
        )
    if isinstance(src, Tensor):
        src = _check_src(src)
        return model_or_step, src.shape[0], src.device
    if not _is_int(src) or src < 1:
        raise ValueError(f"src (tamaño del lote) debe ser un entero positivo; se recibió {src!r}. "
                         "Con una función de paso, src es un tensor (lote, longitud) o el tamaño "
                         "del lote.")
    return model_or_step, src, torch.device("cpu")


def _logits(step: StepFn, prefix: Tensor, rows: Tensor, banned: list[int], t: int,
            specials: dict | None = None) -> Tensor:
    """The next-token logits ``(N, V)`` of step ``t`` in float32, with the
    ``banned`` special tokens set to ``-inf`` so no decoder generates them.

    ``specials`` (name → id, e.g. ``{"eos_id": 2}``) are checked against the
    vocabulary ``V``, known only now: an ``eos_id`` outside it could never be
    generated, and decoding would silently run to ``max_len``.

    ``-inf`` from the model is allowed (a token it rules out); NaN and
    ``+inf`` are not: argmax would pick them, or the softmax turn them into
    NaN, and the output would be silently wrong."""
    out = step(prefix, rows)
    if not isinstance(out, Tensor) or out.dim() != 2 or out.shape[0] != prefix.shape[0]:
        shape = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
        raise ValueError(
            f"La función de paso debe devolver logits de forma ({prefix.shape[0]}, vocabulario), "
            f"una fila por prefijo; devolvió {shape}."
        )
    for name, value in (specials or {}).items():
        if value is not None and value >= out.shape[-1]:
            raise ValueError(
                f"{name} = {value} está fuera del vocabulario del modelo ({out.shape[-1]} tókenes, "
                f"ids 0 a {out.shape[-1] - 1})."
            )
    out = out.float()
    if bool((torch.isnan(out) | (out == math.inf)).any()):
        raise ValueError(
            f"El modelo devolvió logits no finitos (NaN o +inf) en el paso {t}: no se puede elegir "
            "el tóken siguiente. Suele deberse a pesos dañados (un entrenamiento que divergió) o a "
            "una entrada fuera de rango; comprueba el modelo con entradas conocidas."
        )
    out = out.index_fill(-1, torch.tensor([i for i in banned if i < out.shape[-1]], dtype=torch.long,
                                          device=out.device), -math.inf)
    if bool((out == -math.inf).all(dim=-1).any()):
        raise ValueError(
            f"En el paso {t} ningún tóken es posible: el modelo da probabilidad 0 (logit -inf) a "
            "todos los que no son especiales (<pad>, <bos>, <unk>)."
        )
    return out


def _finish(prefix: Tensor) -> Tensor:
    return prefix[:, 1:].contiguous()


# ---------------------------------------------------------------------------
# Greedy
# ---------------------------------------------------------------------------


def greedy_decode(model, src, max_len: int, bos_id: int, eos_id: int, pad_id: int = 0, *,
                  unk_id: int | None = None) -> Tensor:
    """Greedy decoding: at every step append the most likely next token.

    Args:
        model: an encoder-decoder (``encode``/``decode``) or a step function
            (see the module docstring).
        src: ``(B, S)`` source token ids (padded with the model's pad id); with
            a step function, also the batch size ``B``.
        max_len: the most tokens to generate per row (EOS included).
        bos_id, eos_id: the start and end tokens; ``pad_id`` fills each row
            after its EOS. ``pad_id``, ``bos_id`` and ``unk_id`` (if given) are
            never generated: their logits are set to ``-inf``.

    Returns:
        ``LongTensor (B, L)``, ``L <= max_len``: the generated tokens without
        BOS, up to and including EOS, then ``pad_id``. Ties go to the lowest
        token id (``argmax``), so the result is deterministic. The whole batch
        stops as soon as every row has produced EOS.
    """
    return _autoregress(model, src, max_len, bos_id, eos_id, pad_id, unk_id,
                        lambda device: lambda logits: logits.argmax(dim=-1))


def _autoregress(model, src, max_len, bos_id, eos_id, pad_id, unk_id,
                 chooser: Callable[[torch.device], Callable[[Tensor], Tensor]]) -> Tensor:
    """The loop shared by greedy and sampling.

    ``chooser(device)`` returns the rule that maps each step's logits ``(B, V)``
    to the next ids ``(B,)``; rows that already produced EOS get ``pad_id``.
    """
    step, batch, device = _prepare(model, src)
    checks.positive_int(max_len, "max_len")
    banned = _banned_ids(bos_id, eos_id, pad_id, unk_id)
    specials = {"bos_id": bos_id, "eos_id": eos_id, "pad_id": pad_id, "unk_id": unk_id}
    choose = chooser(device)
    with _inference(model):
        prefix = torch.full((batch, 1), bos_id, dtype=torch.long, device=device)
        rows = torch.arange(batch, device=device)
        done = torch.zeros(batch, dtype=torch.bool, device=device)
        for t in range(1, max_len + 1):
            nxt = choose(_logits(step, prefix, rows, banned, t, specials if t == 1 else None))
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
    its log-probability divided by this. ``alpha = 0`` gives 1 (no penalty).

    ``length`` counts the hypothesis' tokens (EOS included, BOS not), so it is
    at least 1: beam search calls it after one step or more."""
    length = checks.positive_int(length, "length (longitud de la hipótesis, en tókenes; al menos 1)")
    alpha = _check_length_penalty(alpha)
    try:
        return ((5.0 + length) / 6.0) ** alpha
    except OverflowError:
        raise ValueError(f"length_penalty: ((5 + {length}) / 6) ** {alpha} es demasiado grande para un "
                         "float; usa un α pequeño (el artículo usa 0.6 a 1).") from None


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

    def __post_init__(self):
        self.beam_width = checks.positive_int(self.beam_width, "beam_width (anchura del haz)")
        for name in ("nodes", "best_path"):
            if not isinstance(getattr(self, name), list):
                raise TypeError(f"{name} debe ser una lista; se recibió "
                                f"{type(getattr(self, name)).__name__}.")

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


class BeamObserver:
    """What :func:`beam_search` reports while it searches; override what you need.

    ``candidate`` is called for every candidate of input ``row`` at step ``t``
    in rank order: ``parent`` is the beam slot it extends, ``status`` one of
    ``"kept"``, ``"finished"``, ``"pruned"`` (as in :class:`BeamNode`).
    ``answer`` gives the winner of each input: ``("finished", i)`` (the i-th
    hypothesis set aside) or ``("live", slot)`` (cut by ``max_len``).
    """

    def candidate(self, row: int, t: int, parent: int, token: int, log_prob: float,
                  status: str) -> None:
        pass

    def answer(self, row: int, kind: str, index: int) -> None:
        pass


class TreeRecorder(BeamObserver):
    """Records the search of one input (``row``) as a :class:`BeamTree`."""

    def __init__(self, row: int, beam_width: int, bos_id: int):
        self.row = checks.non_negative_int(row, "row (la entrada que se registra)")
        beam_width = checks.positive_int(beam_width, "beam_width (anchura del haz)")
        bos_id = checks.non_negative_int(bos_id, "bos_id")
        self.tree = BeamTree(beam_width, [BeamNode(0, None, bos_id, 0, 0.0, "root")])
        self._slots = [0] * beam_width  # tree node of each live beam slot
        self._next_slots: list[int] = []
        self._finished: list[int] = []  # tree node of each finished hypothesis
        self._step = 0

    def candidate(self, row, t, parent, token, log_prob, status):
        if row != self.row:
            return
        if t != self._step:  # a new step: the slots filled during the last one become live
            if self._next_slots:
                self._slots = self._next_slots + [0] * (len(self._slots) - len(self._next_slots))
            self._next_slots, self._step = [], t
        node = BeamNode(len(self.tree.nodes), self._slots[parent], token, t, log_prob, status)
        self.tree.nodes.append(node)
        if status == "kept":
            self._next_slots.append(node.id)
        elif status == "finished":
            self._finished.append(node.id)

    def answer(self, row, kind, index):
        if row != self.row:
            return
        slots = self._next_slots or self._slots
        node = self._finished[index] if kind == "finished" else slots[index]
        path = []
        while node is not None:
            path.append(node)
            node = self.tree.nodes[node].parent
        self.tree.best_path = path[::-1]


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
    observer: BeamObserver | None = None,
    unk_id: int | None = None,
) -> BeamSearchResult:
    """Beam search: keep the ``beam_width`` most likely partial outputs.

    Each step has three parts, one function each:

    1. **select candidates** (:func:`_select_candidates`): extend every live
       hypothesis by every token and take the ``2 · beam_width`` best
       extensions by cumulative log-probability;
    2. **keep or finish** (:func:`_keep_or_finish`): in rank order, an
       extension that ends in EOS and ranks among the first ``beam_width`` is
       set aside as *finished*; the others fill the beam up to ``beam_width``;
    3. **stop** (:func:`_search_is_over`): an input is done when it has
       ``n_best`` finished hypotheses and no live one can still beat them
       (exact bound: log-probabilities only decrease), or after ``max_len``
       steps, when the live hypotheses join the candidates as they are.

    The answer is the candidate with the best score,
    ``log_prob / length_penalty(len, α)``. It is the best of what the beam
    kept, not the most likely output: the greedy path can be pruned, and then
    beam search may return a *less* likely output than greedy decoding.
    ``beam_width = 1`` is greedy decoding (the same output). Works on a batch:
    the ``B · beam_width`` prefixes go through the model together.

    Args:
        model, src, max_len, bos_id, eos_id, pad_id, unk_id: as in :func:`greedy_decode`.
        beam_width: how many hypotheses to keep (≥ 1).
        length_penalty_alpha: α of :func:`length_penalty` (≥ 0; 0 = none).
        n_best: how many hypotheses per input to return (1 ≤ n_best ≤ beam_width).
        trace: index of one input whose search tree to record (:class:`BeamTree`,
            through a :class:`TreeRecorder`).
        observer: a :class:`BeamObserver` told of every candidate and answer.
    """
    step, batch, device = _prepare(model, src)
    k = checks.positive_int(beam_width, "La anchura del haz (beam_width)")
    checks.positive_int(max_len, "max_len")
    banned = _banned_ids(bos_id, eos_id, pad_id, unk_id)
    alpha = _check_length_penalty(length_penalty_alpha)
    checks.positive_int(n_best, "n_best")
    if n_best > k:
        raise ValueError(f"n_best ({n_best}) no puede ser mayor que la anchura del haz ({k}).")
    if trace is not None and (not _is_int(trace) or not 0 <= trace < batch):
        raise ValueError(f"trace debe ser el índice de una entrada del lote (0 a {batch - 1}); "
                         f"se recibió {trace!r}.")
    if observer is not None and not (callable(getattr(observer, "candidate", None))
                                     and callable(getattr(observer, "answer", None))):
        raise TypeError("observer debe ser un BeamObserver (con los métodos candidate y answer) o None; "
                        f"se recibió {type(observer).__name__}.")
    observers = [o for o in (observer, TreeRecorder(trace, k, bos_id) if trace is not None else None)
                 if o is not None]

    # Live hypotheses of every input: tokens (B, k, t) and log-probs (B, k).
    # At the start only slot 0 is alive (BOS); the others have -inf so that
    # the first step does not pick the same extension k times.
    tokens = torch.full((batch, k, 1), bos_id, dtype=torch.long, device=device)
    scores = torch.full((batch, k), -math.inf, device=device)
    scores[:, 0] = 0.0
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]
    done = [False] * batch
    rows = torch.arange(batch, device=device).repeat_interleave(k)

    with _inference(model):
        for t in range(1, max_len + 1):
            logits = _logits(step, tokens.view(batch * k, -1), rows, banned, t,
                             {"bos_id": bos_id, "eos_id": eos_id, "pad_id": pad_id, "unk_id": unk_id}
                             if t == 1 else None)
            logp = F.log_softmax(logits, dim=-1).view(batch, k, -1)
            candidates = _select_candidates(scores, logp, k)
            parents = [list(range(k)) for _ in range(batch)]  # done inputs: unchanged, padded
            next_tok = [[pad_id] * k for _ in range(batch)]
            new_scores = scores.tolist()
            for b in range(batch):
                if done[b]:
                    continue
                kept = _keep_or_finish(b, t, candidates[b], tokens[b], k, eos_id, alpha,
                                       finished[b], observers)
                new_scores[b] = [-math.inf] * k
                for slot, (score, parent, token) in enumerate(kept):
                    parents[b][slot], next_tok[b][slot], new_scores[b][slot] = parent, token, score
                done[b] = _search_is_over(new_scores[b], finished[b], n_best, max_len, alpha)
            index = torch.tensor(parents, device=device)
            tokens = torch.cat([
                tokens.gather(1, index[:, :, None].expand(-1, -1, tokens.shape[-1])),
                torch.tensor(next_tok, device=device)[:, :, None],
            ], dim=-1)
            scores = torch.tensor(new_scores, device=device)
            if all(done):
                break

    hypotheses = [_best_hypotheses(b, finished[b], None if done[b] else (tokens[b], scores[b]),
                                   n_best, alpha, observers) for b in range(batch)]
    length = max((len(h[0].tokens) for h in hypotheses if h), default=0)
    out = torch.full((batch, length), pad_id, dtype=torch.long, device=device)
    for b, hyps in enumerate(hypotheses):
        if hyps:
            out[b, :len(hyps[0].tokens)] = torch.tensor(hyps[0].tokens, device=device)
    log_probs = torch.tensor([h[0].log_prob if h else -math.inf for h in hypotheses], device=device)
    tree = next((o.tree for o in observers if isinstance(o, TreeRecorder) and o.row == trace), None)
    return BeamSearchResult(out, log_probs, hypotheses, tree)


def _select_candidates(scores: Tensor, logp: Tensor, k: int) -> list[list[tuple[float, int, int]]]:
    """Step 1. The ``2k`` best extensions of each input, best first, as
    ``(cumulative log-prob, parent slot, token)``.

    ``scores (B, k)`` are the live hypotheses' log-probs, ``logp (B, k, V)``
    the next-token log-probs. ``2k`` is enough: at most ``k`` of them end in
    EOS, so at least ``k`` remain to fill the beam. A stable sort breaks ties
    towards the lower index (better parent, then lower token id), as
    ``argmax`` does in :func:`greedy_decode`.
    """
    batch, _, vocab = logp.shape
    total = (scores[:, :, None] + logp).view(batch, k * vocab)
    best, index = total.sort(dim=-1, descending=True, stable=True)
    n = min(2 * k, k * vocab)
    best, index = best[:, :n].tolist(), index[:, :n].tolist()
    return [[(s, *divmod(i, vocab)) for s, i in zip(bs, ix, strict=True)]
            for bs, ix in zip(best, index, strict=True)]


def _keep_or_finish(row: int, t: int, candidates, tokens: Tensor, k: int, eos_id: int,
                    alpha: float, finished: list[Hypothesis],
                    observers: list[BeamObserver]) -> list[tuple[float, int, int]]:
    """Step 2. Walk the candidates in rank order: an EOS among the first ``k``
    joins ``finished``; other tokens fill the beam (at most ``k``); the rest
    are pruned. Returns the new beam, ``[(log-prob, parent slot, token)]``.
    ``tokens (k, t)`` are the live prefixes (with BOS)."""
    kept = []
    for rank, (score, parent, token) in enumerate(candidates):
        if score == -math.inf:
            break
        status = "pruned"
        if token == eos_id:
            if rank < k:
                seq = tuple(tokens[parent, 1:].tolist()) + (token,)
                finished.append(Hypothesis(seq, score, score / length_penalty(t, alpha), True))
                status = "finished"
        elif len(kept) < k:
            kept.append((score, parent, token))
            status = "kept"
        for o in observers:
            o.candidate(row, t, parent, token, score, status)
    return kept


def _search_is_over(live_scores: list[float], finished: list[Hypothesis], n_best: int,
                    max_len: int, alpha: float) -> bool:
    """Step 3. Over when nothing is alive, or when ``n_best`` hypotheses are
    finished and no live one can beat them: a log-prob only goes down as
    tokens are added, and the length penalty is at most
    ``length_penalty(max_len, α)``."""
    live_best = max(live_scores)
    if live_best == -math.inf:
        return True
    if len(finished) < n_best:
        return False
    bound = live_best / length_penalty(max_len, alpha) if live_best < 0 else live_best
    nth_best = sorted((h.score for h in finished), reverse=True)[n_best - 1]
    return bound <= nth_best


def _best_hypotheses(row: int, finished: list[Hypothesis], live, n_best: int, alpha: float,
                     observers: list[BeamObserver]) -> list[Hypothesis]:
    """The ``n_best`` best of the finished hypotheses and, when ``max_len`` cut
    the search (``live = (tokens (k, t), scores (k,))``), the live ones."""
    cands = [(h, ("finished", i)) for i, h in enumerate(finished)]
    if live is not None:
        for slot, (seq, lp) in enumerate(zip(live[0][:, 1:].tolist(), live[1].tolist(), strict=True)):
            if lp > -math.inf:
                hyp = Hypothesis(tuple(seq), lp, lp / length_penalty(len(seq), alpha), False)
                cands.append((hyp, ("live", slot)))
    cands.sort(key=lambda c: c[0].score, reverse=True)
    if cands:
        for o in observers:
            o.answer(row, *cands[0][1])
    return [h for h, _ in cands[:n_best]]


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
       (ties at the k-th value are all kept); ``k`` larger than the
       vocabulary is an error.
    3. **top-p** (nucleus): keep the smallest set of most likely tokens whose
       probability adds up to at least ``p``; the most likely token is always
       kept. ``p = 1`` keeps everything.

    ``softmax`` of the result is the distribution :func:`sample_decode` draws from.
    """
    temperature = _check_temperature(temperature)
    top_k, top_p = _check_top_k(top_k), _check_top_p(top_p)
    # Bool or integer logits would be silently read as numbers; NaN is refused here too.
    if isinstance(logits, (list, tuple)) or (isinstance(logits, Tensor) and not logits.is_floating_point()):
        logits = checks.features(logits, "logits")
    elif not isinstance(logits, Tensor):
        logits = None
    if logits is None or logits.dim() < 1 or logits.shape[-1] == 0:
        raise ValueError("logits debe ser un tensor (..., vocabulario) con al menos un tóken.")
    if bool((torch.isnan(logits) | (logits == math.inf)).any()):
        raise ValueError("logits contiene valores no finitos (NaN o +inf): no definen una distribución.")
    if top_k is not None and top_k > logits.shape[-1]:
        raise ValueError(f"top_k ({top_k}) no puede ser mayor que el vocabulario ({logits.shape[-1]} "
                         "tókenes); con top_k igual al vocabulario no se recorta nada.")
    out = logits.float() / temperature
    if temperature < 1.0 and bool((torch.isnan(out) | (out == math.inf)).any()):
        # 1/T overflowed float32 (T of 1e-40, say). (logits - max) / T has the
        # same softmax and stays ≤ 0: the T → 0 limit, all mass on the maximum.
        shifted = logits.float() - logits.float().amax(dim=-1, keepdim=True)
        out = torch.where(shifted == 0, torch.zeros_like(shifted), shifted / temperature)
        out = out.nan_to_num(nan=-math.inf)
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
    """``softmax(filter_logits(...))``: the distribution sampling draws from.

    A row without any finite logit (all ``-inf``: every token masked) is
    refused: its softmax would be NaN, not a distribution."""
    out = filter_logits(logits, temperature, top_k, top_p)
    if bool((out == -math.inf).all(dim=-1).any()):
        raise ValueError("logits tiene una fila sin ningún valor finito (todos -inf, todos los tókenes "
                         "enmascarados): no define una distribución. Cada fila necesita al menos un "
                         "tóken posible.")
    return out.softmax(dim=-1)


def _generator(generator, seed, device: torch.device) -> torch.Generator | None:
    if generator is not None and seed is not None:
        raise ValueError("Da generator o seed, no los dos.")
    if generator is not None:
        if not isinstance(generator, torch.Generator):
            raise TypeError(f"generator debe ser un torch.Generator; se recibió {type(generator).__name__}.")
        return generator
    if seed is not None:
        checks.non_negative_int(seed, "seed (semilla)")
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
    unk_id: int | None = None,
) -> Tensor:
    """Sampling: draw every next token from :func:`next_token_probs`.

    Same arguments and output as :func:`greedy_decode`, plus the filters of
    :func:`filter_logits`. Randomness comes from ``generator`` or from a new
    generator seeded with ``seed`` (give at most one); with neither, from
    PyTorch's global generator (seed it with
    :func:`dldna.runtime.seed_everything`). The same seed gives the same
    outputs. To draw several outputs per input, repeat the input rows
    (``src.repeat_interleave(n, dim=0)``).

    ``top_k=1`` gives the greedy output. The special tokens are masked before
    the filters, so top-k and top-p count only tokens that can be generated.
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

    return _autoregress(model, src, max_len, bos_id, eos_id, pad_id, unk_id, chooser)


# ---------------------------------------------------------------------------
# Scoring and post-processing
# ---------------------------------------------------------------------------


def sequence_log_prob(model, src, tgt: Tensor, bos_id: int, eos_id: int, pad_id: int = 0, *,
                      unk_id: int | None = None) -> Tensor:
    """Total log-probability the model gives to each output row of ``tgt``.

    ``tgt``: ``(B, L)`` generated tokens in this module's convention (without
    BOS; tokens after the first EOS are ignored). Returns ``(B,)``: the sum
    over positions up to and including the first EOS (all ``L`` if none) of
    ``log p(token | source, previous tokens)``, under the distribution the
    decoders use (special tokens masked, so one in ``tgt`` gives ``-inf``).
    Beam search approximately maximises this (with ``length_penalty_alpha =
    0``); greedy decoding does not, in general.
    """
    step, batch, device = _prepare(model, src)
    banned = _banned_ids(bos_id, eos_id, pad_id, unk_id)
    tgt = checks.ids(tgt, "tgt")
    if tgt.dim() != 2 or tgt.shape[0] != batch:
        raise ValueError(f"tgt debe ser un tensor de enteros (lote = {batch}, longitud); "
                         f"tiene forma {tuple(tgt.shape)}.")
    given, tgt = tgt, tgt.to(device)
    specials = {"bos_id": bos_id, "eos_id": eos_id, "pad_id": pad_id, "unk_id": unk_id}
    with _inference(model):
        prefix = torch.full((batch, 1), bos_id, dtype=torch.long, device=device)
        rows = torch.arange(batch, device=device)
        alive = torch.ones(batch, dtype=torch.bool, device=device)
        total = torch.zeros(batch, device=device)
        for i in range(tgt.shape[1]):
            logits = _logits(step, prefix, rows, banned, i + 1, specials if i == 0 else None)
            if i == 0:  # the vocabulary is known from the first logits
                checks.ids(given, "tgt", vocab_size=logits.shape[-1])
            logp = F.log_softmax(logits, dim=-1)
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
    eos_id = _check_token_id(eos_id, "eos_id")
    if bos_id is not None:
        bos_id = _check_token_id(bos_id, "bos_id")
    if isinstance(tokens, Tensor):
        rows = checks.ids(tokens, "tokens", ndim=2).tolist()
    elif isinstance(tokens, (str, numbers.Number)) or not isinstance(tokens, Iterable):
        raise TypeError(f"tokens debe ser un tensor (lote, longitud) o una lista de filas de ids; "
                        f"se recibió {type(tokens).__name__}.")
    else:
        rows = [checks.id_list(r, "Cada fila de tókenes") for r in tokens]
    out = []
    for row in rows:
        if bos_id is not None and row and row[0] == bos_id:
            row = row[1:]
        out.append(row[:row.index(eos_id)] if eos_id in row else row)
    return out

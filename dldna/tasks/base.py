"""Shared pieces of every training task: special tokens, tokenizer, batches, evaluation.

Every task of the book (copy, addition, parsing, translation...) is a
sequence-to-sequence problem for the encoder-decoder Transformer of
:mod:`dldna.transformer`. They all speak the same language, defined here:

Special ids
    ``PAD_ID = 0`` (padding, ignored by the loss and masked in attention),
    ``BOS_ID = 1`` (beginning of sequence: the first input of the decoder),
    ``EOS_ID = 2`` (end of sequence: the model writes it to stop). They are
    the first three ids of every :class:`Tokenizer`; data tokens start at
    ``N_SPECIAL = 3`` (or 4 when the tokenizer has an unknown-token ``<unk>``),
    so a data token can never be mistaken for a special one.

:class:`Tokenizer`
    ``encode(text) -> list[int]`` and ``decode(ids) -> list[str]`` with an
    exact round trip: ``tok.decode(tok.encode(text)) == tok.split(text)``.
    ``decode`` stops at the first EOS and drops PAD and BOS, so it reads the
    raw output of a decoder. ``separator=""`` splits text into characters
    (``"12+7"`` → ``["1", "2", "+", "7"]``), ``separator=" "`` into words.

Batches (teacher forcing)
    :func:`make_batch` turns (source ids, target ids) pairs into a
    :class:`Batch`: ``src`` ``(B, S)`` and ``tgt`` ``(B, T + 1)`` = BOS +
    target + EOS, padded with ``PAD_ID`` on the right; ``tgt_in`` = BOS +
    target (what the decoder reads) and ``tgt_out`` = target + EOS (what it
    must predict, one step ahead) are its two shifted views.

Evaluation
    :func:`exact_match` decodes fresh sources with any ``decode_fn(src) ->
    ids`` (greedy, beam...) and counts the sequences that match their target
    exactly (everything up to EOS). :func:`greedy_decoder` builds such a
    function for a model with ``encode``/``decode`` methods, with
    :func:`dldna.decoding.greedy_decode`.

Tasks and the benchmark
    :class:`Task` is the small interface of a task (tokenizers, a generator of
    fresh examples, a held-out test set never produced for training).
    ``tools/bench.py`` (``make bench``) imports every module of the
    :mod:`dldna.tasks` package and calls its ``benchmark(device=None)``
    function when it has one; the function returns a :class:`BenchResult`.
    To add a task to the benchmark, define ``benchmark`` in its module: no
    other file needs to change.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from dldna import checks, ensemble, runtime
from dldna.decoding import greedy_decode
from dldna.training import FitResult, Recipe, _check_recipe, fit, seq2seq_loss
from dldna.transformer import Transformer, TransformerConfig

__all__ = [
    "PAD_ID",
    "BOS_ID",
    "EOS_ID",
    "N_SPECIAL",
    "SPECIAL_TOKENS",
    "UNK_TOKEN",
    "Tokenizer",
    "Example",
    "Batch",
    "pad_batch",
    "make_batch",
    "Task",
    "EvalResult",
    "exact_match",
    "strip_output",
    "greedy_decoder",
    "train",
    "train_together",
    "BenchResult",
    "benchmark_task",
    "benchmark_seeds",
    "BENCH_SEEDS",
]

PAD_ID = 0
BOS_ID = 1
EOS_ID = 2
N_SPECIAL = 3
#: The printable names of the special ids, in id order.
SPECIAL_TOKENS: tuple[str, str, str] = ("<pad>", "<bos>", "<eos>")
#: Optional fourth special token (id 3) for tokenizers of open vocabularies.
UNK_TOKEN = "<unk>"


# ---------------------------------------------------------------------------
# Tokenizer
# ---------------------------------------------------------------------------


class Tokenizer:
    """A fixed vocabulary: tokens (strings) to ids and back.

    Ids ``0, 1, 2`` are PAD, BOS and EOS; with ``unk=True`` id ``3`` is
    ``<unk>`` and unknown tokens map to it (otherwise they raise
    ``ValueError``). The data tokens follow, in the order given.

    Args:
        tokens: the data tokens, each a non-empty string without the
            separator, no repeats, none equal to a special token.
        separator: how :meth:`split` cuts a text: ``""`` = one token per
            character (spaces ignored), ``" "`` = words.
        unk: add ``<unk>`` for tokens outside the vocabulary.

    >>> tok = Tokenizer(list("0123456789+"), separator="")
    >>> tok.encode("12+7")
    [4, 5, 13, 10]
    >>> tok.decode([1, 4, 5, 13, 10, 2, 0, 0])
    ['1', '2', '+', '7']
    """

    def __init__(self, tokens: Iterable[str], *, separator: str = " ", unk: bool = False):
        separator = checks.text(separator, "separator", allow_empty=True)
        # A text is a list of tokens only for a tokenizer of characters (separator=""):
        # with words, "el gato" would silently become the tokens e, l, g, a, t, o.
        if (isinstance(tokens, str) and separator) or isinstance(tokens, (bytes, dict)) \
                or not isinstance(tokens, Iterable):
            raise TypeError("tokens debe ser una lista de tókenes (textos), p. ej. texto.split() "
                            f"o list(\"0123456789\"); se recibió {type(tokens).__name__}: {tokens!r}.")
        unk = checks.boolean(unk, "unk")
        tokens = list(tokens)
        specials = SPECIAL_TOKENS + ((UNK_TOKEN,) if unk else ())
        seen: set[str] = set()
        for t in tokens:
            if not isinstance(t, str) or not t:
                raise ValueError(f"Cada tóken debe ser un texto no vacío; se recibió {t!r}.")
            if t in specials:
                raise ValueError(
                    f"El tóken {t!r} está reservado para los tókenes especiales {list(specials)}; "
                    "los tókenes de datos deben ser distintos."
                )
            if separator and separator in t:
                raise ValueError(f"El tóken {t!r} contiene el separador {separator!r}.")
            if t in seen:
                raise ValueError(f"El tóken {t!r} aparece dos veces en el vocabulario.")
            seen.add(t)
        self.separator = separator
        self.unk = unk
        self.itos: list[str] = list(specials) + tokens
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}
        self.n_special = len(specials)

    pad_id = PAD_ID
    bos_id = BOS_ID
    eos_id = EOS_ID

    @property
    def unk_id(self) -> int | None:
        return 3 if self.unk else None

    def __len__(self) -> int:
        return len(self.itos)

    @property
    def data_tokens(self) -> list[str]:
        return self.itos[self.n_special:]

    def __repr__(self) -> str:
        shown = " ".join(self.data_tokens[:12]) + (" …" if len(self.data_tokens) > 12 else "")
        return f"Tokenizer({len(self)} ids: {' '.join(self.itos[:self.n_special])} | {shown})"

    def split(self, text: str | Sequence[str]) -> list[str]:
        """Cut a text into tokens (a list of tokens is returned as a list)."""
        if not isinstance(text, str):
            if not isinstance(text, (list, tuple)) or not all(isinstance(t, str) for t in text):
                raise TypeError(
                    f"Se esperaba un texto (str) o una lista de tókenes (textos); se recibió "
                    f"{type(text).__name__}: {text!r}."
                )
            return list(text)
        if self.separator == "":
            return [c for c in text if not c.isspace()]
        return text.split(self.separator) if self.separator != " " else text.split()

    def join(self, tokens: Sequence[str]) -> str:
        return self.separator.join(tokens)

    def token_to_id(self, token: str) -> int:
        try:
            return self.stoi[token]
        except KeyError:
            if self.unk:
                return 3
            raise ValueError(
                f"El tóken {token!r} no está en el vocabulario ({len(self)} tókenes: "
                f"{' '.join(self.itos[:20])}{' …' if len(self) > 20 else ''})."
            ) from None

    def id_to_token(self, index: int) -> str:
        index = checks.id_list([index], "El id")[0]
        if not 0 <= index < len(self):
            raise ValueError(
                f"El id {index} no existe: el vocabulario tiene {len(self)} ids (0 a {len(self) - 1})."
            )
        return self.itos[int(index)]

    def encode(self, text: str | Sequence[str], *, bos: bool = False, eos: bool = False) -> list[int]:
        """Ids of ``text`` (a string, cut by :meth:`split`, or a list of tokens)."""
        ids = [self.token_to_id(t) for t in self.split(text)]
        return ([BOS_ID] if bos else []) + ids + ([EOS_ID] if eos else [])

    def decode(self, ids: Iterable[int] | Tensor, *, keep_special: bool = False) -> list[str]:
        """Tokens of ``ids``: stops at the first EOS, drops PAD and BOS.

        With ``keep_special=True`` every id is shown, specials included.
        """
        if isinstance(ids, Tensor) and ids.dim() > 1:
            raise ValueError(
                f"decode lee una sola secuencia (1 dimensión); se recibió un tensor de forma "
                f"{tuple(ids.shape)}: decodifica cada fila, p. ej. [tok.decode(fila) for fila in ids]."
            )
        if isinstance(ids, Tensor):
            ids = ids.detach().cpu()
        if isinstance(ids, (list, tuple)) and any(isinstance(i, (list, tuple, Tensor)) and
                                                  getattr(i, "ndim", 1) > 0 for i in ids):
            raise ValueError(
                "decode lee una sola secuencia de ids; se recibió una lista de secuencias: "
                "decodifica cada una por separado."
            )
        keep_special = checks.boolean(keep_special, "keep_special")
        out = []
        for i in checks.id_list(ids, "ids (la secuencia que decode lee)"):
            if not keep_special:
                if i == EOS_ID:
                    break
                if i in (PAD_ID, BOS_ID):
                    continue
            out.append(self.id_to_token(i))
        return out

    def decode_text(self, ids: Iterable[int] | Tensor) -> str:
        """:meth:`decode`, joined with the separator."""
        return self.join(self.decode(ids))


# ---------------------------------------------------------------------------
# Examples and batches
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    """One pair of a task, as tokens (``source``/``target``) and as text."""

    source: tuple[str, ...]
    target: tuple[str, ...]

    @property
    def key(self) -> tuple[str, ...]:
        """What identifies the example for the train/test split: its source."""
        return self.source


@dataclass
class Batch:
    """A padded batch for teacher forcing.

    ``src (B, S)``: source ids. ``tgt (B, T + 1)``: BOS, target ids, EOS, then
    PAD: the layout :func:`dldna.training.seq2seq_loss` expects. Its two views
    ``tgt_in = tgt[:, :-1]`` (what the decoder reads, starting with BOS) and
    ``tgt_out = tgt[:, 1:]`` (what it must predict, one step ahead, ending in
    EOS) have shape ``(B, T)``.
    """

    src: Tensor
    tgt: Tensor

    @property
    def tgt_in(self) -> Tensor:
        return self.tgt[:, :-1]

    @property
    def tgt_out(self) -> Tensor:
        return self.tgt[:, 1:]

    def to(self, device) -> Batch:
        return Batch(self.src.to(device), self.tgt.to(device))

    @property
    def n_tokens(self) -> int:
        """Number of target tokens the loss counts (PAD excluded, EOS included)."""
        return int((self.tgt_out != PAD_ID).sum())

    def __len__(self) -> int:
        return self.src.shape[0]


def pad_batch(seqs: Sequence[Sequence[int]], length: int | None = None, pad_id: int = PAD_ID) -> Tensor:
    """Stack id lists into a ``(B, L)`` long tensor, padding on the right."""
    if isinstance(seqs, (str, bytes)) or not isinstance(seqs, (list, tuple)):
        raise TypeError(f"seqs debe ser una lista de secuencias de ids; se recibió {type(seqs).__name__}.")
    if not seqs:
        raise ValueError("Hace falta al menos una secuencia para formar un lote.")
    seqs = [checks.id_list(s, "Cada secuencia de seqs") for s in seqs]
    if length is not None:
        length = checks.non_negative_int(length, "length (longitud del lote)")
    pad_id = checks.non_negative_int(pad_id, "pad_id")
    longest = max(len(s) for s in seqs)
    length = longest if length is None else length
    if length < longest:
        raise ValueError(f"Una secuencia tiene {longest} tókenes y no cabe en la longitud {length}.")
    out = torch.full((len(seqs), length), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        if len(s):
            out[i, : len(s)] = torch.as_tensor(list(s), dtype=torch.long)
    return out


def make_batch(pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> Batch:
    """Build a :class:`Batch` from ``(source ids, target ids)`` pairs (no specials in them)."""
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, (list, tuple)):
        raise TypeError(f"pairs debe ser una lista de pares (ids de entrada, ids de salida); "
                        f"se recibió {type(pairs).__name__}.")
    if not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs):
        raise ValueError("Cada elemento de pairs debe ser un par (ids de entrada, ids de salida).")
    src = pad_batch([s for s, _ in pairs])
    tgt = pad_batch([[BOS_ID, *t, EOS_ID] for _, t in pairs])
    return Batch(src, tgt)


# ---------------------------------------------------------------------------
# Tasks
# ---------------------------------------------------------------------------


_ROW_WEIGHTS = torch.randint(-2**62, 2**62, (512,), generator=torch.Generator().manual_seed(0))


def _row_keys(ids: Tensor) -> Tensor:
    """One int64 per row of ``ids (B, S)``: ``Σ_j ids[:, j] · w_j`` (wrapping on overflow)."""
    if ids.shape[1] > len(_ROW_WEIGHTS):
        raise ValueError(f"Secuencias de más de {len(_ROW_WEIGHTS)} tókenes no están previstas.")
    return (ids.long() * _ROW_WEIGHTS[: ids.shape[1]]).sum(1)


class Task:
    """A sequence-to-sequence task: two tokenizers and a generator of examples.

    Subclasses set ``name``, ``src_tokenizer``, ``tgt_tokenizer`` and define
    :meth:`sample` (one random :class:`Example` from a ``random.Random``).
    :meth:`test_set` draws a held-out set with its own seed; :meth:`batch`
    draws training batches that never contain a held-out source (it redraws
    them), so the test examples are truly unseen.
    """

    name = "tarea"
    src_tokenizer: Tokenizer
    tgt_tokenizer: Tokenizer

    def __init__(self) -> None:
        self._held_out: set[tuple[str, ...]] = set()

    # -- to define -------------------------------------------------------------
    def sample(self, rng: random.Random) -> Example:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- provided ----------------------------------------------------------------
    def encode(self, example: Example) -> tuple[list[int], list[int]]:
        return self.src_tokenizer.encode(example.source), self.tgt_tokenizer.encode(example.target)

    def examples(self, n: int, rng: random.Random, *, unique: bool = False,
                 exclude: set | None = None) -> list[Example]:
        """``n`` random examples; ``unique``: no repeated source; ``exclude``: keys to skip."""
        n = checks.non_negative_int(n, "n (número de ejemplos)")
        checks.rng(rng)
        unique = checks.boolean(unique, "unique")
        out: list[Example] = []
        seen: set[tuple[str, ...]] = set()
        tries = 0
        while len(out) < n:
            tries += 1
            if tries > 100 * n + 1000:
                raise ValueError(
                    f"No se pueden generar {n} ejemplos distintos de la tarea «{self.name}»: "
                    "el espacio de ejemplos es demasiado pequeño."
                )
            ex = self.sample(rng)
            if exclude and ex.key in exclude:
                continue
            if unique:
                if ex.key in seen:
                    continue
                seen.add(ex.key)
            out.append(ex)
        return out

    @property
    def held_out(self) -> frozenset:
        """Keys (sources) that :meth:`batch` never draws."""
        return frozenset(self._held_out)

    def hold_out(self, examples: Iterable[Example]) -> None:
        """Keep these examples out of every training batch from now on."""
        self._held_out.update(ex.key for ex in examples)

    def test_set(self, n: int = 1000, seed: int = 12345) -> list[Example]:
        """A fixed held-out set of ``n`` distinct examples; from now on
        :meth:`batch` never draws them for training."""
        seed = checks.non_negative_int(seed, "seed (semilla)")
        examples = self.examples(n, random.Random(seed), unique=True)
        self.hold_out(examples)
        return examples

    def batch(self, n: int, rng: random.Random) -> Batch:
        """A fresh training batch of ``n`` examples, none of them held out."""
        n = checks.positive_int(n, "n (ejemplos por lote)")
        exs = self.examples(n, rng, exclude=self._held_out)
        return make_batch([self.encode(ex) for ex in exs])

    def sampler(self, n: int, seed: int) -> Callable[[int], Batch]:
        """Training batches for :func:`train`: ``step → Batch`` of ``n`` fresh examples.

        This default draws the examples one by one with :meth:`batch` from a
        ``random.Random(seed)``; a task whose examples are cheap to write as
        tensors overrides it to build a whole batch with a few tensor
        operations (see :class:`~dldna.tasks.copy.CopyTask`).
        """
        n = checks.positive_int(n, "n (ejemplos por lote)")
        rng = random.Random(checks.non_negative_int(seed, "seed (semilla)"))
        return lambda _step: self.batch(n, rng)

    def held_out_rows(self, src: Tensor) -> Tensor:
        """Which rows of a source batch ``(B, S)`` are held-out sources: ``(B,)`` bool.

        Vectorised: each row is summarised by one 64-bit number (a weighted
        sum of its ids with fixed random weights; PAD adds nothing), the
        held-out sources' numbers are computed once, and ``torch.isin``
        compares them all at once. A held-out row is always found; a
        different row that happened to share its number (about 1 in 10¹⁸)
        would only be drawn again.
        """
        if not self._held_out:
            return torch.zeros(src.shape[0], dtype=torch.bool)
        cache = getattr(self, "_held_out_keys", None)
        if cache is None or cache[0] != len(self._held_out):
            ids = pad_batch([self.src_tokenizer.encode(key) for key in self._held_out])
            cache = self._held_out_keys = (len(self._held_out), _row_keys(ids))
        return torch.isin(_row_keys(src), cache[1])

    def batches(self, n: int, rng: random.Random) -> Iterable[Batch]:
        """An endless stream of :meth:`batch` (the data never repeats on purpose)."""
        while True:
            yield self.batch(n, rng)

    def format(self, tokens: Sequence[str], side: str = "tgt") -> str:
        """Text of a token list as the chapter prints it."""
        tok = self.src_tokenizer if side == "src" else self.tgt_tokenizer
        return tok.join(tokens)


# ---------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------


def _task(task) -> Task:
    if not isinstance(task, Task):
        raise TypeError(f"task debe ser una tarea de dldna.tasks (Task); se recibió {type(task).__name__}.")
    return task


def _examples(examples) -> list[Example]:
    if isinstance(examples, (str, bytes)) or not isinstance(examples, Iterable):
        raise TypeError(f"examples debe ser una lista de ejemplos (Example) de la tarea; se recibió "
                        f"{type(examples).__name__}.")
    examples = list(examples)
    if not examples:
        raise ValueError("No hay ejemplos que evaluar.")
    if not all(isinstance(ex, Example) for ex in examples):
        raise TypeError("examples debe contener ejemplos (Example) de la tarea, "
                        "p. ej. los de task.test_set().")
    return examples


def strip_output(ids: Sequence[int] | Tensor) -> list[int]:
    """Ids of one generated sequence up to (not including) the first EOS,
    without a leading BOS and without PAD.

    One sequence only: a batch ``(B, L)`` is refused rather than read as one
    long sequence (its rows would run together and stop at the first EOS)."""
    if isinstance(ids, Tensor):
        ids = ids.detach().cpu()
        if ids.dim() != 1:
            raise ValueError(
                f"ids debe ser una sola secuencia generada (un tensor de 1 dimensión); tiene forma "
                f"{tuple(ids.shape)}. Para un lote, aplica strip_output a cada fila: "
                "[strip_output(fila) for fila in salida]."
            )
    out = []
    for i in checks.id_list(ids, "ids (la secuencia generada)"):
        if i == EOS_ID:
            break
        if i in (PAD_ID, BOS_ID):
            continue
        out.append(i)
    return out


@dataclass
class EvalResult:
    """What :func:`exact_match` found. ``accuracy`` in [0, 1]; ``predictions``
    are token lists, in the order of the examples."""

    accuracy: float
    correct: int
    total: int
    predictions: list[list[str]] = field(repr=False)
    examples: list[Example] = field(repr=False)

    @property
    def errors(self) -> list[tuple[Example, list[str]]]:
        return [(ex, p) for ex, p in zip(self.examples, self.predictions, strict=True)
                if list(ex.target) != p]

    def __str__(self) -> str:
        return f"exactitud {100 * self.accuracy:.1f} % ({self.correct}/{self.total})"


DecodeFn = Callable[[Tensor], Tensor]


def exact_match(task: Task, decode_fn: DecodeFn, examples: Sequence[Example], *,
                batch_size: int = 500, device=None) -> EvalResult:
    """Decode the sources of ``examples`` with ``decode_fn`` and compare with the targets.

    Args:
        decode_fn: ``src (B, S) -> ids (B, T)``; generated ids, with or
            without a leading BOS; everything after the first EOS is ignored.
        device: where ``src`` is sent (default: the CPU).

    A prediction counts only if it equals the whole target (same tokens, same
    length): exact match of the sequence, not of single tokens.
    """
    _task(task)
    examples = _examples(examples)
    batch_size = checks.positive_int(batch_size, "batch_size (ejemplos por lote de evaluación)")
    checks.function(decode_fn, "decode_fn", "una función src → ids")
    preds: list[list[str]] = []
    for start in range(0, len(examples), batch_size):
        chunk = examples[start:start + batch_size]
        src = pad_batch([task.src_tokenizer.encode(ex.source) for ex in chunk])
        if device is not None:
            src = src.to(checks.device(device))
        with torch.no_grad():
            out = checks.ids(decode_fn(src), "Lo que devuelve decode_fn (ids generados)", ndim=2)
        if len(out) != len(chunk):
            raise ValueError(f"decode_fn devolvió {len(out)} secuencias para {len(chunk)} entradas; "
                             "debe devolver una por entrada.")
        for row in out:
            preds.append(task.tgt_tokenizer.decode(strip_output(row)))
    correct = sum(list(ex.target) == p for ex, p in zip(examples, preds, strict=True))
    return EvalResult(correct / len(examples), correct, len(examples), preds, list(examples))


def greedy_decoder(model, max_len: int) -> DecodeFn:
    """A ``decode_fn`` for :func:`exact_match`: greedy decoding of ``model``
    with :func:`dldna.decoding.greedy_decode` (at most ``max_len`` tokens, EOS
    included; the model is put in eval mode while it decodes). The sources
    are moved to the model's device."""
    checks.module(model, "model")
    max_len = checks.positive_int(max_len, "max_len (tókenes generados como máximo)")

    def run(src: Tensor) -> Tensor:
        # The sources follow the model wherever it is (exact_match builds them on the CPU).
        src = checks.ids(src, "src (ids de entrada)", like=model)
        return greedy_decode(model, src, max_len, BOS_ID, EOS_ID, PAD_ID)

    return run


# ---------------------------------------------------------------------------
# Training on a task
# ---------------------------------------------------------------------------


def train(model: nn.Module, task: Task, recipe: Recipe, *, device=None, seed: int = 0,
          progress: bool = True, desc: str = "entrenando", snapshots: Sequence[int] = ()) -> FitResult:
    """Train an encoder-decoder ``model`` on ``task`` with :func:`dldna.training.fit`.

    What this adds to ``fit`` is the task's three pieces:

    * **batches**: every step draws ``recipe.batch_size`` *fresh* examples
      (:meth:`Task.sampler`, seeded with ``seed``), never a held-out one:
      make the test set with :meth:`Task.test_set` *before* training;
    * **loss**: teacher forcing (:func:`dldna.training.seq2seq_loss`, padding
      ignored, label smoothing ``recipe.smoothing``);
    * **evaluation** (when ``recipe.eval_every > 0``): the exact match of
      greedy decoding on ``recipe.eval_size`` validation examples, drawn with
      seed ``seed + 1`` and held out from training from then on. They are
      drawn apart from the test set, not excluding it: a few may also be
      test examples (the same validation set for a seed, whatever the test).

    ``device``: where to train (default: :func:`dldna.runtime.get_device`);
    ``seed`` seeds the data stream and PyTorch, so two runs on the same
    machine give the same numbers; ``snapshots`` are passed to ``fit``.
    Returns the :class:`~dldna.training.FitResult`.
    """
    checks.module(model, "model")
    _task(task)
    _check_recipe(recipe)
    seed = checks.non_negative_int(seed, "seed (semilla)")
    progress = checks.boolean(progress, "progress")
    dev = checks.device(device)
    return fit(model, task.sampler(recipe.batch_size, seed), _teacher_forcing(recipe), recipe,
               evaluate=_validation(task, model, recipe, seed, dev), device=dev, seed=seed,
               progress=progress, desc=desc, snapshots=snapshots)


def train_together(models: Sequence[nn.Module], task: Task, recipe: Recipe, *, seeds: Sequence[int],
                   device=None, progress: bool = True, desc: str = "entrenando") -> list[FitResult]:
    """:func:`train` for several models of one architecture, one per seed, in
    one training loop (:func:`dldna.ensemble.fit`): each step advances all of
    them. Model ``i`` draws the batches and the validation set that
    ``train(models[i], task, recipe, seed=seeds[i])`` would draw (every
    validation set is held out before the first step). Returns one
    :class:`~dldna.training.FitResult` per model."""
    _task(task)
    _check_recipe(recipe)
    dev = checks.device(device)
    models, seeds = ensemble._members(models, seeds)  # before the validation sets pair them
    evaluate = [_validation(task, m, recipe, s, dev) for m, s in zip(models, seeds, strict=True)]
    return ensemble.fit(models, [task.sampler(recipe.batch_size, s) for s in seeds],
                        _teacher_forcing(recipe), recipe, seeds=seeds,
                        evaluate=None if recipe.eval_every == 0 else evaluate,
                        device=dev, pad_id=PAD_ID, progress=progress, desc=desc)


def _teacher_forcing(recipe: Recipe):
    return lambda m, b: seq2seq_loss(m, b.src, b.tgt, pad_id=PAD_ID, smoothing=recipe.smoothing)


def _validation(task: Task, model: nn.Module, recipe: Recipe, seed: int, dev):
    """The exact match on ``recipe.eval_size`` examples drawn with seed ``seed + 1``, or None."""
    if not recipe.eval_every:
        return None
    # The same validation set for the same seed, whatever was held out
    # before (so that two runs see the same batches); held out from now on.
    validation = task.examples(recipe.eval_size, random.Random(seed + 1), unique=True)
    task.hold_out(validation)
    decode = greedy_decoder(model, task.max_target_len)
    return lambda _model: exact_match(task, decode, validation, device=dev).accuracy


# ---------------------------------------------------------------------------
# Benchmark
# ---------------------------------------------------------------------------


@dataclass
class BenchResult:
    """One row of ``make bench``: what a task's ``benchmark()`` returns.

    ``wall_s``: training time (evaluations included); ``steps_per_s``:
    optimisation steps per second; ``claim``: the accuracy the chapter claims
    and ``seconds_to_claim``: the time until the validation accuracy first
    reached it (``None``: not reached, or no claim); ``accuracy``: the exact
    match on held-out examples never trained on. ``models``: how many seeds
    trained together in those steps (:func:`train_together`); then the times
    are those of all of them, the accuracy is their mean, and the claim
    counts as reached when every one has reached it."""

    task: str
    device: str
    steps: int
    wall_s: float
    accuracy: float
    note: str = ""
    steps_per_s: float = float("nan")
    claim: float | None = None
    seconds_to_claim: float | None = None
    models: int = 1


#: The seeds of the rows of ``make bench`` for a task: seed 0 alone, then seeds 0, 1 and 2 together.
BENCH_SEEDS: tuple[tuple[int, ...], ...] = ((0,), (0, 1, 2))


def benchmark_seeds(new_task: Callable[[], Task], setup: Callable, *, device=None, quick: bool = False,
                    **kwargs) -> list[BenchResult]:
    """One :func:`benchmark_task` row per group of :data:`BENCH_SEEDS`, each on a fresh
    ``new_task()`` (nothing held out yet) with its ``setup(task)`` config and recipe."""
    checks.function(new_task, "new_task", "una función sin argumentos que crea la tarea")
    checks.function(setup, "setup", "una función tarea → (config, receta)")
    rows = []
    for seeds in BENCH_SEEDS:
        task = new_task()
        pair = setup(task)
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(f"setup(task) debe devolver (config, receta); devolvió {type(pair).__name__}.")
        config, recipe = pair
        rows.append(benchmark_task(task, config, recipe, device=device, quick=quick, seeds=seeds, **kwargs))
    return rows


def benchmark_task(task: Task, config, recipe: Recipe, *, device=None, quick: bool = False,
                   test_size: int = 1000, seeds: Sequence[int] = (0,), claim: float | None = None,
                   note: str = "") -> BenchResult:
    """Train fresh :class:`dldna.transformer.Transformer` models of ``config`` on
    ``task`` with ``recipe``, one per seed (one seed: :func:`train`; several:
    :func:`train_together`), without a progress bar, and measure the exact
    match of greedy decoding on ``test_size`` held-out examples.
    ``quick``: 5 steps and 20 test examples, to check the plumbing. On a GPU
    the clock waits for the device only where it is read (the evaluations
    and the end), not at every step."""
    _task(task)
    if not isinstance(config, TransformerConfig):
        raise TypeError(f"config debe ser un dldna.transformer.TransformerConfig; se recibió "
                        f"{type(config).__name__}.")
    _check_recipe(recipe)
    quick = checks.boolean(quick, "quick")
    test_size = checks.positive_int(test_size, "test_size (ejemplos de prueba)")
    seeds = checks.sequence(seeds, "seeds (semillas)", checks.non_negative_int)
    if claim is not None:
        claim = checks.probability(claim, "claim (la exactitud que el capítulo afirma)")
    note = checks.text(note, "note", allow_empty=True)
    if quick:
        recipe = dataclasses.replace(recipe, steps=5, warmup=2, eval_every=0)
        test_size = 20
    dev = checks.device(device)
    test = task.test_set(test_size)
    models = []
    for seed in seeds:
        runtime.seed_everything(seed)
        models.append(Transformer(config))
    if len(seeds) == 1:
        results = [train(models[0], task, recipe, device=dev, seed=seeds[0], progress=False)]
    else:
        results = train_together(models, task, recipe, seeds=seeds, device=dev, progress=False)
    accuracy = sum(exact_match(task, greedy_decoder(m, task.max_target_len), test, device=dev).accuracy
                   for m in models) / len(models)
    reached = None if claim is None else [r.seconds_to(claim) for r in results]
    return BenchResult(task.name, dev.type, recipe.steps, results[0].wall_s, accuracy, note,
                       results[0].steps_per_s, claim,
                       None if reached is None or None in reached else max(reached), len(models))

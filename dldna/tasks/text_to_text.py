"""Text to text (chapter 9): several tasks, one model, told apart by a prefix (T5).

T5 writes every task as text in, text out, and names the task with a prefix
word at the start of the input. :class:`TextToTextTask` does the same with the
book's tasks: it takes a mapping ``prefix → task`` and makes one task whose
source is ``(prefix, *source)`` and whose target is the sub-task's target,
over **one** vocabulary for source and target (the union of every sub-task's
tokens and the prefixes), so one :class:`~dldna.transformer.Transformer` with
shared embeddings reads and writes all of them.

The chapter's mixture (:func:`chapter_tasks`) has two prefixes:

* ``"traduce:"``: the Spanish → English grammar of chapter 7d;
* ``"copia:"``: the *same* Spanish sentences, written again (the copy task of
  chapter 7a). The input after the prefix is the same text, so only the prefix
  can tell the model what to write.

Held-out examples are held out under **every** prefix
(:meth:`TextToTextTask.hold_out`): a test sentence is never trained on as
``copia:`` either. Sub-tasks that draw from the same generator with the same
seed (``traduce:`` and ``copia:``, see :class:`Echo`) give the same sentences
in the same order, so :meth:`TextToTextTask.test_sets` pairs them.

>>> import random
>>> task = TextToTextTask(chapter_tasks())
>>> ex = task.sample(random.Random(1))
>>> ex.source[0] in task.prefixes
True
"""

from __future__ import annotations

import math
import numbers
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dldna import checks, runtime
from dldna.tasks.base import (
    PAD_ID,
    BenchResult,
    EvalResult,
    Example,
    Task,
    Tokenizer,
    benchmark_task,
    exact_match,
    greedy_decoder,
    train,
)
from dldna.tasks.translation import TranslationTask
from dldna.training import FitResult, Recipe, _check_recipe
from dldna.transformer import Transformer, TransformerConfig

__all__ = ["Echo", "TextToTextTask", "chapter_tasks", "setup", "TextToTextRun", "train_text_to_text",
           "benchmark"]


class Echo(Task):
    """The copy task over another task's sources: the target is the source itself.

    ``Echo(TranslationTask())`` copies Spanish sentences of the grammar. It
    draws from ``task.sample`` with the same random generator, so with the
    same seed it yields the same sources as ``task``, in the same order.
    """

    name = "copia"

    def __init__(self, task: Task):
        super().__init__()
        if not isinstance(task, Task):
            raise TypeError(f"Echo copia las entradas de una tarea (Task); se recibió {type(task).__name__}.")
        if not isinstance(getattr(task, "max_source_len", None), int):
            raise ValueError(f"Echo necesita una tarea con max_source_len (la longitud máxima de sus "
                             f"entradas), como TranslationTask; {type(task).__name__} no lo tiene.")
        self.task = task
        self.src_tokenizer = self.tgt_tokenizer = task.src_tokenizer
        self.max_target_len = task.max_source_len + 1  # the sentence + EOS
        self.max_source_len = task.max_source_len

    def sample(self, rng: random.Random) -> Example:
        source = self.task.sample(rng).source
        return Example(source, source)


class TextToTextTask(Task):
    """One task made of several, each announced by its prefix word.

    Args:
        tasks: ``prefix → task``; a prefix is one word (no spaces) that is
            not a token of any sub-task. One task alone is the specialist
            to compare a mixture with.
        weights: how often each prefix is drawn for training (default: all
            equally often).

    Every example is ``Example((prefix, *source), target)``; both tokenizers
    are one shared word tokenizer (``separator=" "``). :meth:`format` writes
    a sequence the way its sub-task writes it (``"45+78"``, not
    ``"4 5 + 7 8"``).
    """

    name = "texto a texto"

    def __init__(self, tasks: Mapping[str, Task], weights: Sequence[float] | None = None):
        super().__init__()
        if not isinstance(tasks, Mapping) or not tasks:
            raise ValueError("TextToTextTask necesita un diccionario prefijo → tarea, con al menos una.")
        vocab: dict[str, None] = {}
        for prefix, task in tasks.items():
            if not isinstance(task, Task):
                raise TypeError(f"La tarea del prefijo {prefix!r} debe ser una Task; "
                                f"se recibió {type(task).__name__}.")
            vocab.update(dict.fromkeys(task.src_tokenizer.data_tokens))
            vocab.update(dict.fromkeys(task.tgt_tokenizer.data_tokens))
        for prefix in tasks:
            if not isinstance(prefix, str) or not prefix or " " in prefix or prefix in vocab:
                raise ValueError(f"Cada prefijo debe ser una palabra nueva (sin espacios, que no sea un "
                                 f"tóken de las tareas); se recibió {prefix!r}.")
        self.tasks = dict(tasks)
        self.prefixes = tuple(tasks)
        if weights is None:
            weights = [1.0] * len(self.prefixes)
        if isinstance(weights, (str, bytes)) or not isinstance(weights, (list, tuple)) \
                or len(weights) != len(self.prefixes) \
                or any(isinstance(w, bool) or not isinstance(w, numbers.Real) or not w > 0
                       or not math.isfinite(w) for w in weights):
            raise ValueError(f"weights debe tener un peso positivo por tarea ({len(self.prefixes)}); "
                             f"se recibió {weights!r}.")
        self.weights = [float(w) for w in weights]
        self.src_tokenizer = self.tgt_tokenizer = Tokenizer([*self.prefixes, *vocab], separator=" ")
        self.max_target_len = max(t.max_target_len for t in self.tasks.values())

    def sample(self, rng: random.Random) -> Example:
        prefix = rng.choices(self.prefixes, self.weights)[0]
        ex = self.tasks[prefix].sample(rng)
        return Example((prefix, *ex.source), ex.target)

    def hold_out(self, examples) -> None:
        """Hold out each example's input under every prefix, not only its own."""
        examples = list(examples)
        bare = {ex.source[1:] if ex.source and ex.source[0] in self.tasks else ex.source for ex in examples}
        self._held_out.update((p, *source) for source in bare for p in self.prefixes)

    def test_sets(self, n: int = 500, seed: int = 12345) -> dict[str, list[Example]]:
        """``n`` distinct held-out examples per prefix, each drawn from its
        sub-task with ``random.Random(seed)``; held out under every prefix
        from now on."""
        n = checks.positive_int(n, "n (ejemplos de prueba por tarea)")
        sets = {}
        for prefix, task in self.tasks.items():
            drawn = task.examples(n, random.Random(seed), unique=True)
            sets[prefix] = [Example((prefix, *ex.source), ex.target) for ex in drawn]
        for examples in sets.values():
            self.hold_out(examples)
        return sets

    def format(self, tokens: Sequence[str], side: str = "tgt", prefix: str | None = None) -> str:
        """Text of a token list as its sub-task writes it. A source carries
        its prefix; a target needs ``prefix`` to know its sub-task."""
        tokens = list(tokens)
        if side == "src" and tokens and tokens[0] in self.tasks:
            prefix, rest = tokens[0], tokens[1:]
            return f"{prefix} {self.tasks[prefix].format(rest, 'src')}"
        if prefix in self.tasks:
            return self.tasks[prefix].format(tokens, side)
        return self.src_tokenizer.join(tokens)


def chapter_tasks() -> dict[str, Task]:
    """The chapter's two prefixes: ``traduce:`` (chapter 7d's grammar) and
    ``copia:`` (its Spanish sentences written again)."""
    translation = TranslationTask()
    return {"traduce:": translation, "copia:": Echo(translation)}


def setup(task: TextToTextTask) -> tuple[TransformerConfig, Recipe]:
    """The chapter's model and recipe for ``task``: ``(TransformerConfig, Recipe)``.

    Chapter 7d's model (two encoder and two decoder layers of width 64) with
    one embedding table for source and target, as in T5, and the output layer
    tied to it. The recipe is chapter 7d's (300 steps of 64 examples, Noam
    schedule, label smoothing 0.1), so that with two prefixes each task gets
    about 32 examples a step.
    """
    if not isinstance(task, TextToTextTask):
        raise TypeError(f"task debe ser una TextToTextTask; se recibió {type(task).__name__}.")
    return (TransformerConfig(src_vocab=len(task.src_tokenizer), tgt_vocab=len(task.tgt_tokenizer),
                              d_model=64, n_heads=4, n_encoder_layers=2, n_decoder_layers=2,
                              d_ff=128, dropout=0.0, max_len=16,
                              pad_id=PAD_ID, share_embeddings=True, tie_embeddings=True),
            Recipe(steps=300, batch_size=64, lr=2e-3, warmup=40, schedule="noam", smoothing=0.1,
                   grad_clip=None, eval_every=0))


@dataclass
class TextToTextRun:
    """What :func:`train_text_to_text` returns: the trained ``model``, its
    ``task``, the held-out ``tests`` (per prefix), the training ``result``
    and ``scores``, the exact match of greedy decoding per prefix."""

    model: Transformer
    task: TextToTextTask
    tests: dict[str, list[Example]]
    result: FitResult
    scores: dict[str, EvalResult]


def train_text_to_text(tasks: Mapping[str, Task] | None = None, *, seed: int = 0,
                       recipe: Recipe | None = None, test_size: int = 300, device=None,
                       progress: bool = True, desc: str = "texto a texto") -> TextToTextRun:
    """Train one model on ``tasks`` (default: :func:`chapter_tasks`) and score it per prefix.

    The ``test_size`` test examples of each prefix are drawn first
    (:meth:`TextToTextTask.test_sets`, the same for any mixture that shares
    a sub-task) and held out under every prefix; the model is built after
    seeding with ``seed``; training is :func:`dldna.tasks.train` with
    ``recipe`` (default: :func:`setup`'s).
    """
    seed = checks.non_negative_int(seed, "seed (semilla)")
    _check_recipe(recipe, optional=True)
    progress = checks.boolean(progress, "progress")
    device = checks.device(device)
    task = TextToTextTask(chapter_tasks() if tasks is None else tasks)
    config, default = setup(task)
    tests = task.test_sets(test_size)
    runtime.seed_everything(seed)
    model = Transformer(config)
    result = train(model, task, recipe or default, device=device, seed=seed, progress=progress, desc=desc)
    decode = greedy_decoder(model, task.max_target_len)
    scores = {p: exact_match(task, decode, examples, device=result.device) for p, examples in tests.items()}
    return TextToTextRun(model, task, tests, result, scores)


def benchmark(device=None, quick: bool = False) -> BenchResult:
    """Row of ``make bench``: the chapter's mixture, exact match on 1,000
    held-out examples drawn from both prefixes."""
    task = TextToTextTask(chapter_tasks())
    config, recipe = setup(task)
    return benchmark_task(task, config, recipe, device=device, quick=quick,
                          note="traduce: y copia: en un modelo")

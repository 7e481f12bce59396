"""Training tasks of the book: data generators, tokenizers and evaluation on fresh data.

* :mod:`dldna.tasks.base`: special ids (PAD=0, BOS=1, EOS=2), :class:`Tokenizer`,
  batches for teacher forcing, the exact-match evaluator and :class:`Task`;
* :mod:`dldna.tasks.copy`: copy a random sequence (chapter 7a);
* :mod:`dldna.tasks.addition`: add two numbers, answer in either digit order (7b);
* :mod:`dldna.tasks.parsing`: arithmetic assignments to prefix trees (7c).

:func:`train` trains a model on a task (fresh batches, teacher forcing,
exact-match validation) with the package's general training loop, :func:`dldna.training.fit`.

Each task module may define ``benchmark(device=None) -> BenchResult``;
``tools/bench.py`` (``make bench``) finds and runs them all.
"""

from dldna.tasks.base import (
    BOS_ID,
    EOS_ID,
    N_SPECIAL,
    PAD_ID,
    SPECIAL_TOKENS,
    Batch,
    BenchResult,
    EvalResult,
    Example,
    Task,
    Tokenizer,
    benchmark_task,
    exact_match,
    greedy_decoder,
    make_batch,
    pad_batch,
    strip_output,
    train,
    train_together,
)

__all__ = [
    "BOS_ID",
    "EOS_ID",
    "N_SPECIAL",
    "PAD_ID",
    "SPECIAL_TOKENS",
    "Batch",
    "BenchResult",
    "EvalResult",
    "Example",
    "Task",
    "Tokenizer",
    "benchmark_task",
    "exact_match",
    "greedy_decoder",
    "make_batch",
    "pad_batch",
    "strip_output",
    "train",
    "train_together",
]

"""Copy task (chapter 7a): the decoder must write the source sequence again.

Sequences of 20 symbols, as in the original «Deep Learning DNA» example,
which drew the integers 1 to 19; here the alphabet is the 20 letters ``a``
to ``t``, so that no data token looks like a special id. The output
is the input followed by EOS. Nothing is learned about the symbols; what the
model must learn is *where to look*: output position ``i`` reads input
position ``i`` through cross-attention, a diagonal.

>>> task = CopyTask(length=5)
>>> ex = task.sample(__import__("random").Random(0))
>>> "".join(ex.source) == "".join(ex.target)
True
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

import torch
from torch import Tensor

from dldna import checks
from dldna.tasks.base import (
    BOS_ID,
    EOS_ID,
    N_SPECIAL,
    PAD_ID,
    Batch,
    BenchResult,
    Example,
    Task,
    Tokenizer,
    benchmark_seeds,
)
from dldna.training import Recipe
from dldna.transformer import TransformerConfig

__all__ = ["CopyTask", "ALPHABET"]

#: The 20 symbols of the chapter.
ALPHABET = string.ascii_lowercase[:20]


class CopyTask(Task):
    """Copy a random sequence of ``length`` symbols drawn from ``n_symbols``.

    With ``min_length`` the length varies uniformly in ``[min_length, length]``
    (sequences are then padded in a batch).
    """

    name = "copia"

    def __init__(self, length: int = 20, n_symbols: int = 20, min_length: int | None = None):
        super().__init__()
        length = checks.positive_int(length, "length (longitud de las secuencias)")
        n_symbols = checks.positive_int(n_symbols, "n_symbols (número de símbolos)")
        if n_symbols > len(string.ascii_lowercase):
            raise ValueError(f"n_symbols debe estar entre 1 y 26; se recibió {n_symbols!r}.")
        if min_length is not None:
            min_length = checks.positive_int(min_length, "min_length (longitud mínima)")
            if min_length > length:
                raise ValueError(
                    f"Longitudes no válidas: length={length!r}, min_length={min_length!r} "
                    "(hace falta 1 ≤ min_length ≤ length)."
                )
        self.length = length
        self.min_length = length if min_length is None else min_length
        self.symbols = string.ascii_lowercase[:n_symbols]
        self.src_tokenizer = self.tgt_tokenizer = Tokenizer(self.symbols, separator="")

    @property
    def max_target_len(self) -> int:
        """Longest output the decoder must write (EOS included)."""
        return self.length + 1

    def sample(self, rng: random.Random) -> Example:
        n = rng.randint(self.min_length, self.length)
        seq = tuple(rng.choice(self.symbols) for _ in range(n))
        return Example(seq, seq)

    def _draw(self, n: int, generator: torch.Generator) -> Tensor:
        """``n`` random sources as ids ``(n, length)``, PAD after each one's length."""
        ids = torch.randint(N_SPECIAL, N_SPECIAL + len(self.symbols), (n, self.length),
                            generator=generator)
        if self.min_length < self.length:
            lengths = torch.randint(self.min_length, self.length + 1, (n, 1), generator=generator)
            ids = ids.masked_fill(torch.arange(self.length) >= lengths, PAD_ID)
        return ids

    def sampler(self, n: int, seed: int) -> Callable[[int], Batch]:
        """Training batches built as tensors (a few operations per batch, not a
        Python loop per symbol), from a ``torch.Generator`` seeded with ``seed``
        on the CPU, so that every device trains on the same data. Rows that
        are held-out sources are drawn again. A subclass that redefines
        :meth:`sample` (another target, say) gets the generic sampler, which
        calls its :meth:`sample`."""
        if type(self).sample is not CopyTask.sample:
            return super().sampler(n, seed)
        generator = torch.Generator().manual_seed(seed)

        def batch(_step: int) -> Batch:
            src = self._draw(n, generator)
            redraw = self.held_out_rows(src)
            while redraw.any():
                src[redraw] = self._draw(int(redraw.sum()), generator)
                redraw = self.held_out_rows(src)
            lengths = (src != PAD_ID).sum(1)
            tgt = torch.full((n, self.length + 2), PAD_ID, dtype=torch.long)
            tgt[:, 0] = BOS_ID
            tgt[:, 1:-1] = src
            tgt[torch.arange(n), lengths + 1] = EOS_ID
            return Batch(src, tgt)

        return batch


def setup(task: CopyTask | None = None) -> tuple[TransformerConfig, Recipe]:
    """The chapter's model and recipe for ``task``: ``(TransformerConfig, Recipe)``.

    One encoder and one decoder layer of width 64 (copying needs a single
    cross-attention hop), 400 steps of 64 fresh sequences, peak rate 3·10⁻³
    after 100 warm-up steps, then a linear decay to 0. The same on every
    device (:mod:`dldna.runtime`).
    """
    task = task or CopyTask()
    n = len(task.src_tokenizer)
    return (TransformerConfig(src_vocab=n, tgt_vocab=n, d_model=64, n_heads=4, n_encoder_layers=1,
                              n_decoder_layers=1, d_ff=128, dropout=0.0, max_len=64),
            Recipe(steps=400, batch_size=64, lr=3e-3, warmup=100, eval_every=50))


def benchmark(device=None, quick: bool = False) -> list[BenchResult]:
    """Rows of ``make bench``: train with :func:`setup`, exact match on 1,000 fresh
    sequences; seed 0 alone, then seeds 0, 1 and 2 trained together."""
    return benchmark_seeds(CopyTask, setup, device=device, quick=quick, claim=0.99)

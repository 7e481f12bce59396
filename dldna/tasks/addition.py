"""Addition task (chapter 7b): ``"045+178"`` → ``"0223"`` or, reversed, ``"3220"``.

Two numbers of up to ``digits`` digits are written with leading zeros (so
every digit sits at a fixed position of the source) and joined by ``+``. The
answer has ``digits + 1`` digits, also with leading zeros, followed by EOS.
The only thing that changes between the two variants is the **order** in
which the decoder writes the answer:

* ``reverse=False``: most significant digit first, as people write it;
* ``reverse=True``: least significant digit first, the order in which the
  carry is computed by hand.

>>> import random
>>> task = AdditionTask(reverse=True)
>>> ex = task.make(45, 178)
>>> "".join(ex.source), "".join(ex.target)
('045+178', '3220')
>>> task.value(ex.target)
223
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from dldna import checks
from dldna.tasks.base import BenchResult, Example, Task, Tokenizer, benchmark_task
from dldna.training import Recipe
from dldna.transformer import TransformerConfig

__all__ = ["AdditionTask", "carries"]


def carries(a: int, b: int) -> int:
    """How many carries the column addition of ``a + b`` produces.

    >>> carries(45, 178), carries(999, 1), carries(120, 301)
    (2, 3, 0)
    """
    count = carry = 0
    while a or b or carry:
        carry = int(a % 10 + b % 10 + carry >= 10)
        count += carry
        a, b = a // 10, b // 10
    return count


class AdditionTask(Task):
    """Sums of two numbers in ``[0, 10**digits)``, the answer in either order."""

    def __init__(self, digits: int = 3, reverse: bool = False):
        super().__init__()
        if checks.positive_int(digits, "digits (número de cifras)") > 9:
            raise ValueError(f"digits debe ser un entero entre 1 y 9; se recibió {digits!r}.")
        if not isinstance(reverse, bool):
            raise TypeError(
                "reverse debe ser True (unidades primero) o False (cifra mayor primero); "
                f"se recibió {reverse!r}."
            )
        self.digits = int(digits)
        self.reverse = reverse
        self.name = "suma (unidades primero)" if reverse else "suma (cifra mayor primero)"
        self.src_tokenizer = Tokenizer(list("0123456789+"), separator="")
        self.tgt_tokenizer = Tokenizer(list("0123456789"), separator="")

    @property
    def max_target_len(self) -> int:
        return self.digits + 2  # digits of the sum + EOS

    def make(self, a: int, b: int) -> Example:
        """The example for ``a + b``."""
        top = 10**self.digits
        if not (0 <= a < top and 0 <= b < top):
            raise ValueError(f"Los sumandos deben estar entre 0 y {top - 1}; se recibió {a} + {b}.")
        source = f"{a:0{self.digits}d}+{b:0{self.digits}d}"
        answer = f"{a + b:0{self.digits + 1}d}"
        if self.reverse:
            answer = answer[::-1]
        return Example(tuple(source), tuple(answer))

    def sample(self, rng: random.Random) -> Example:
        top = 10**self.digits
        return self.make(rng.randrange(top), rng.randrange(top))

    def operands(self, source: Sequence[str]) -> tuple[int, int]:
        """The two numbers of a source: ``("0","4","5","+",...)`` → ``(45, 178)``."""
        a, b = "".join(source).split("+")
        return int(a), int(b)

    def value(self, answer: Sequence[str]) -> int | None:
        """The number an answer (in this task's order) writes; ``None`` if it is not a number."""
        text = "".join(answer)
        if self.reverse:
            text = text[::-1]
        return int(text) if text.isdigit() else None


def setup(task: AdditionTask | None = None) -> tuple[TransformerConfig, Recipe]:
    """The chapter's model and recipe for ``task``: ``(TransformerConfig, Recipe)``.

    Two encoder and two decoder layers of width 64, 800 steps of 128 fresh
    sums, peak rate 2·10⁻³ after 100 warm-up steps, linear decay. The same
    recipe for both digit orders, so that they can be compared, and the same
    on every device: a GPU only runs it faster.
    """
    task = task or AdditionTask(reverse=True)
    src, tgt = len(task.src_tokenizer), len(task.tgt_tokenizer)
    return (TransformerConfig(src_vocab=src, tgt_vocab=tgt, d_model=64, n_heads=4, n_encoder_layers=2,
                              n_decoder_layers=2, d_ff=256, dropout=0.0, max_len=32),
            Recipe(steps=800, batch_size=128, lr=2e-3, warmup=100, eval_every=100))


def benchmark(device=None, quick: bool = False) -> list[BenchResult]:
    """Rows of ``make bench``: both digit orders, exact match on 1,000 fresh sums."""
    rows = []
    for reverse in (True, False):
        task = AdditionTask(reverse=reverse)
        config, recipe = setup(task)
        rows.append(benchmark_task(task, config, recipe, device=device, quick=quick))
    return rows

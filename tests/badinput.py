"""A tiny harness for tables of bad inputs: what a reader may type, and what ``dldna`` must answer.

The book promises that whatever a reader types gets either a clear Spanish
message (what was wrong, what is expected) or a correct result: never a raw
PyTorch traceback, a NaN or a silent wrong answer. A table of :class:`Case`
rows states that promise input by input.

A case is one call and what it must do:

* ``rejects(name, call, error, fragment)``: ``call()`` raises ``error`` (or a
  subclass) whose message contains the Spanish ``fragment`` (case-insensitive
  substring, not a regular expression);
* ``accepts(name, call, check=None)``: ``call()`` returns, no tensor in the
  result holds NaN, and ``check(result)`` (if given) is true. Use it for input
  that must be converted (float64, NumPy, lists) or that a naive version got
  wrong (the check says what the right answer is).

``name`` says what the reader typed, in a few words; it becomes the test id.
``call`` is a function of no arguments, usually a ``lambda``.

A test file per area (``tests/test_bad_inputs_<area>.py``)::

    from badinput import accepts, rejects, table

    CASES = [
        rejects("longitud como texto", lambda: masking.causal_mask("5"), ValueError, "entero positivo"),
        accepts("float64 de NumPy", lambda: layer(torch.from_numpy(x)),
                lambda out: out[0].dtype == torch.float32),
    ]

    @table(CASES)
    def test_bad_input(case):
        case.run()

(``tests/`` is on ``sys.path`` while pytest runs, so ``import badinput`` works.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pytest
import torch


def _tensors(value) -> Iterable[torch.Tensor]:
    """Every tensor in ``value`` (nested in tuples, lists, dicts or dataclass-like objects)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


@dataclass(frozen=True)
class Case:
    """One row of a table: a call and the answer it must give (see the module docstring)."""

    name: str
    call: Callable[[], object]
    error: type[BaseException] | None = None
    fragment: str = ""
    check: Callable[[object], bool] | None = None

    def run(self):
        """Make the call and assert the promised answer; returns the result (or the exception)."""
        if self.error is not None:
            with pytest.raises(BaseException) as info:
                self.call()
            err = info.value
            assert isinstance(err, self.error), (
                f"{self.name}: se esperaba {self.error.__name__}, llegó {type(err).__name__}: {err}"
            )
            assert self.fragment.lower() in str(err).lower(), (
                f"{self.name}: el mensaje no contiene {self.fragment!r}: {err}"
            )
            return err
        result = self.call()
        for t in _tensors(result):
            if t.is_floating_point() or t.is_complex():
                assert not torch.isnan(t).any(), f"{self.name}: el resultado contiene NaN"
        if self.check is not None:
            assert self.check(result), f"{self.name}: resultado incorrecto: {result!r}"
        return result


def rejects(name: str, call: Callable[[], object], error: type[BaseException], fragment: str) -> Case:
    """A case whose call must raise ``error`` with the Spanish ``fragment`` in its message."""
    if not fragment:
        raise ValueError("Un caso que rechaza necesita el fragmento del mensaje en español.")
    return Case(name, call, error=error, fragment=fragment)


def accepts(name: str, call: Callable[[], object], check: Callable[[object], bool] | None = None) -> Case:
    """A case whose call must return a result without NaN, for which ``check`` holds."""
    return Case(name, call, check=check)


def table(cases: list[Case]):
    """``pytest.mark.parametrize`` over ``cases``, one test per row, named by the row."""
    names = [c.name for c in cases]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(f"Nombres de caso repetidos: {duplicated}")
    return pytest.mark.parametrize("case", cases, ids=names)

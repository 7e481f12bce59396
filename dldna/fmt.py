"""How the book writes numbers for a reader: one convention, in prose and in printed output.

The convention (the RAE's *Ortografía de la lengua española*, 2010, allows
either decimal sign; the point is the one Python prints, so prose and outputs
agree):

* decimal **point**: ``0.73``;
* thousands grouped in threes by a **space**, from five digits on
  (``1 050 624``, but ``4096``); never a comma, which a Spanish reader takes
  for a decimal sign;
* a **space** before the percent sign: ``15.0 %``.

Every chapter prints counts, fractions and percentages through these
functions, so a reader never meets ``1,050,624`` in one cell and
``1 050 624`` in the next.
"""

from __future__ import annotations

import math
import numbers

__all__ = ["integer", "number", "percent"]


def _real(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        # Tensors and NumPy scalars of one element convert; anything else is refused.
        try:
            value = float(value.item())  # type: ignore[union-attr]
        except (AttributeError, TypeError, ValueError, RuntimeError):
            raise TypeError(f"{name} debe ser un número; recibí {type(value).__name__}.") from None
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} debe ser un número finito; recibí {value}.")
    return value


def _decimals(decimals) -> int:
    if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral) or decimals < 0:
        raise ValueError(f"decimals debe ser un entero mayor o igual que 0; recibí {decimals!r}.")
    return int(decimals)


def _group(digits: str) -> str:
    """``"1050624"`` → ``"1 050 624"``; four digits or fewer stay together."""
    if len(digits) <= 4:
        return digits
    head = len(digits) % 3 or 3
    return " ".join([digits[:head]] + [digits[i:i + 3] for i in range(head, len(digits), 3)])


def number(value, decimals: int = 2) -> str:
    """``value`` with ``decimals`` decimals, a decimal point and grouped thousands.

    >>> number(1050624.5, 1)
    '1 050 624.5'
    >>> number(-0.7349)
    '-0.73'
    """
    value, decimals = _real(value, "value"), _decimals(decimals)
    text = f"{abs(value):.{decimals}f}"
    whole, _, frac = text.partition(".")
    sign = "-" if value < 0 and float(text) != 0 else ""
    return sign + _group(whole) + ("." + frac if frac else "")


def integer(value) -> str:
    """A whole number with grouped thousands: ``integer(1050624)`` → ``'1 050 624'``.

    Refuses a value with a fractional part (it would be silently rounded).
    """
    real = _real(value, "value")
    if real != int(real):
        raise ValueError(f"value debe ser un número entero; recibí {real}.")
    return number(real, 0)


def percent(fraction, decimals: int = 1) -> str:
    """A fraction as a percentage with a space before the sign: ``percent(0.153)`` → ``'15.3 %'``."""
    return f"{number(100 * _real(fraction, 'fraction'), decimals)} %"

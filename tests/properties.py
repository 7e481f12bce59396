"""Argument kinds and Hypothesis strategies for the property-based tests of bad input.

A public function of ``dldna`` is registered in ``tests/test_properties.py``
as a :class:`Spec`: how to call it and, for each argument varied, its
:class:`Arg` kind. A kind knows three strategies:

* ``valid``: values the function must accept (the result has no NaN);
* ``invalid``: values it must refuse with a Spanish ``ValueError``/``TypeError``
  (wrong types, numbers typed as text, a float where an int or an id goes,
  NaN and inf, out-of-range values, empty and wrongly shaped inputs);
* ``edge``: huge and tiny values that are legal: the function either returns
  a finite result or refuses them in Spanish, never a NaN or a raw error.

The public names themselves are derived from the package (:func:`public_names`),
so a new function without a :class:`Spec` makes the tests fail.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from hypothesis import strategies as st

import dldna

# ---------------------------------------------------------------------------
# The public names, derived from the package
# ---------------------------------------------------------------------------

#: Modules that are not part of the reader's API (Sphinx's hook runs at build time).
NOT_READER_API = {"dldna.sphinx_ext"}


def public_names() -> list[str]:
    """``module.name`` of every public function and class of ``dldna``.

    Public: listed in the module's ``__all__`` where it has one, else every
    name not starting with ``_``; only functions and classes defined in that
    module (re-exports are counted where they are defined).
    """
    names = []
    for info in pkgutil.walk_packages(dldna.__path__, "dldna."):
        if info.name in NOT_READER_API:
            continue
        module = importlib.import_module(info.name)
        exported = getattr(module, "__all__", None)
        candidates = exported if exported is not None else [n for n in vars(module) if not n.startswith("_")]
        for name in candidates:
            obj = getattr(module, name, None)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == info.name:
                names.append(f"{info.name}.{name}")
    return sorted(names)


def resolve(qualified: str):
    module, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module), name)


# ---------------------------------------------------------------------------
# Spanish, not Python's English
# ---------------------------------------------------------------------------

#: Phrases of Python's, NumPy's and PyTorch's own messages.
ENGLISH = re.compile(
    r"\b(the|must|expected|got|invalid|cannot|could not|object|unsupported|argument|not supported|"
    r"has no attribute|iterable|convert|out of bounds|index \d|should|Unknown format|literal|"
    r"size of tensor|mismatch|probability tensor|mixed dtype|only|not subscriptable|callable)\b"
)
#: Words every Spanish message of dldna has one of (or an accented letter).
SPANISH = re.compile(
    r"(debe|deben|se recibió|se esperaba|no puede|no hay|contiene|fuera|hace falta|no existe|vací[oa]|"
    r"usa |tiene|necesita|escribe|revisa|ningún|ninguna|\bespera|hay que|[áéíóúñ¿«])", re.IGNORECASE)


def is_spanish(message: str) -> bool:
    return bool(message.strip()) and not ENGLISH.search(message) and bool(SPANISH.search(message))


def finite(value, seen: int = 0) -> bool:
    """No NaN anywhere in ``value`` (tensors, arrays, floats, nested containers, dataclasses).

    ``-inf`` is allowed (masked scores are ``-inf`` by design); NaN never is.
    """
    if seen > 4:
        return True
    if isinstance(value, torch.Tensor):
        return not (value.is_floating_point() or value.is_complex()) or not bool(torch.isnan(value).any())
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or not bool(np.isnan(value).any())
    if isinstance(value, float):
        return not math.isnan(value)
    if isinstance(value, (list, tuple)):
        return all(finite(v, seen + 1) for v in value[:50])
    if isinstance(value, dict):
        return all(finite(v, seen + 1) for v in list(value.values())[:50])
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return all(finite(getattr(value, f.name), seen + 1) for f in dataclasses.fields(value))
    return True


# ---------------------------------------------------------------------------
# Argument kinds
# ---------------------------------------------------------------------------

#: What a reader may type where a number goes: text, None, a list, a boolean.
_WORDS = st.sampled_from(["x", "hola", "sí", "no", "", " "])
_NOT_A_NUMBER = st.one_of(_WORDS, st.none(), st.booleans(), st.just([1, 2]), st.just({"a": 1}))


class Arg:
    """An argument kind: its valid, invalid and edge values (see the module docstring)."""

    def valid(self) -> st.SearchStrategy:
        raise NotImplementedError

    def invalid(self) -> st.SearchStrategy | None:
        return None

    def edge(self) -> st.SearchStrategy | None:
        return None


@dataclass
class Int(Arg):
    """An integer in ``[lo, hi]``: a float (even ``3.0``), ``"3"``, a bool, None are refused."""

    lo: int = 1
    hi: int = 8
    refuse_below: bool = True
    refuse_above: bool = False

    def valid(self):
        return st.integers(self.lo, self.hi)

    def invalid(self):
        options = [_NOT_A_NUMBER, st.integers(self.lo, self.hi).map(str),
                   st.floats(allow_nan=True, allow_infinity=True),
                   st.integers(self.lo, self.hi).map(float)]
        if self.refuse_below:
            options.append(st.integers(self.lo - 1000, self.lo - 1))
        if self.refuse_above:
            options.append(st.integers(self.hi + 1, self.hi + 1000))
        return st.one_of(options)


@dataclass
class Num(Arg):
    """A finite real number in ``(lo, hi)`` or ``[lo, hi]``; NaN, inf, text, None refused."""

    lo: float | None = None
    hi: float | None = None
    open_lo: bool = False
    open_hi: bool = False
    typical: tuple[float, float] = (-10.0, 10.0)

    def valid(self):
        lo = self.typical[0] if self.lo is None else max(self.lo, self.typical[0])
        hi = self.typical[1] if self.hi is None else min(self.hi, self.typical[1])
        return st.floats(lo, hi, exclude_min=self.open_lo, exclude_max=self.open_hi,
                         allow_nan=False, allow_infinity=False)

    def invalid(self):
        options = [_NOT_A_NUMBER, st.sampled_from([math.nan, math.inf, -math.inf]),
                   self.valid().map(repr)]
        if self.lo is not None:
            options.append(st.floats(self.lo - 100, self.lo, exclude_max=not self.open_lo,
                                     allow_nan=False))
        if self.hi is not None:
            options.append(st.floats(self.hi, self.hi + 100, exclude_min=not self.open_hi,
                                     allow_nan=False))
        return st.one_of(options)

    def edge(self):
        def inside(x):
            return ((self.lo is None or x > self.lo or (x == self.lo and not self.open_lo))
                    and (self.hi is None or x < self.hi or (x == self.hi and not self.open_hi)))

        values = [v for v in (5e-324, 1e-300, 1e-40, 1e-8, 1e8, 1e30, 1e300, -1e-40, -1e300) if inside(v)]
        return st.sampled_from(values) if values else None


@dataclass
class Bool(Arg):
    """True or False; ``"no"`` (truthy), 0/1 and None refused."""

    def valid(self):
        return st.booleans()

    def invalid(self):
        return st.sampled_from(["no", "sí", "False", 0, 1, None, 1.0])


@dataclass
class Choice(Arg):
    """One of ``options``."""

    options: tuple

    def valid(self):
        return st.sampled_from(self.options)

    def invalid(self):
        return st.one_of(_WORDS.filter(lambda w: w not in self.options), st.none(), st.just(3),
                         st.just(["x"]))


@dataclass
class Text(Arg):
    """A string (non-empty unless ``allow_empty``)."""

    allow_empty: bool = False
    examples: tuple[str, ...] = ("el gato", "título", "a")

    def valid(self):
        return st.sampled_from(self.examples)

    def invalid(self):
        options = [st.none(), st.just(3), st.just(2.5), st.just(["a"])]
        if not self.allow_empty:
            options.append(st.sampled_from(["", "   "]))
        return st.one_of(options)


def _tensor(shape, seed, scale=1.0, dtype=torch.float32):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype) * scale


@dataclass
class Floats(Arg):
    """A real-valued tensor of ``shape`` (float32, or float64 / a list: converted).

    ``low``: values are drawn as ``|randn|`` + low (e.g. 0 for weights) when not None.
    Refused: NaN inside, another rank, text, None, a boolean tensor.
    """

    shape: tuple[int, ...]
    nonneg: bool = False
    forms: tuple[str, ...] = ("float32", "float64", "list")
    extra_invalid: tuple = ()
    any_rank: bool = False  # the function works on any rank (a softmax): another rank is valid
    bool_ok: bool = False  # the function only moves values (a reshape): a bool tensor is valid
    nan_ok: bool = False  # ... and NaN, moved, is the reader's own NaN (no value is computed)

    def _make(self, seed, form="float32", scale=1.0):
        t = _tensor(self.shape, seed, scale, torch.float64 if form == "float64" else torch.float32)
        if self.nonneg:
            t = t.abs()
        return t.tolist() if form == "list" else t

    def valid(self):
        return st.builds(self._make, st.integers(0, 2**16), st.sampled_from(self.forms))

    def invalid(self):
        def with_nan(seed, where):
            t = self._make(seed)
            t.view(-1)[where % t.numel()] = math.nan
            return t

        def wrong_rank(seed, extra):
            t = self._make(seed)
            return t[None] if extra or t.dim() == 0 else t[0]

        options = [st.sampled_from(["x", None, True])]
        if not self.nan_ok:
            options.append(st.builds(with_nan, st.integers(0, 2**16), st.integers(0, 10**6)))
        if not self.any_rank:
            options.append(st.builds(wrong_rank, st.integers(0, 2**16), st.booleans()))
        if not self.bool_ok:
            options.append(st.just(torch.ones(self.shape, dtype=torch.bool)))
        if self.extra_invalid:
            options.append(st.sampled_from(self.extra_invalid))
        return st.one_of(options)

    def edge(self):
        return st.builds(self._make, st.integers(0, 2**16), st.just("float32"),
                         st.sampled_from([1e-30, 1e30]))


@dataclass
class Ids(Arg):
    """Token ids of ``shape`` in ``[0, vocab)``; ``vocab``, -1, 2.5, text and None refused."""

    shape: tuple[int, ...]
    vocab: int
    lo: int = 0

    def _make(self, seed):
        return torch.randint(self.lo, self.vocab, self.shape, generator=torch.Generator().manual_seed(seed))

    def valid(self):
        return st.builds(self._make, st.integers(0, 2**16))

    def invalid(self):
        def poke(seed, where, value):
            t = self._make(seed)
            if isinstance(value, float):
                t = t.double()
            t.view(-1)[where % t.numel()] = value
            return t

        return st.one_of(
            st.builds(poke, st.integers(0, 2**16), st.integers(0, 10**6),
                      st.sampled_from([self.vocab, self.vocab + 50, -1, 2.5])),
            st.sampled_from(["hola", None]),
        )


@dataclass
class Mask(Arg):
    """A boolean mask of ``shape``; 0/1 integers or floats, text and None refused."""

    shape: tuple[int, ...]

    def valid(self):
        return st.builds(lambda seed: torch.rand(self.shape, generator=torch.Generator().manual_seed(seed))
                         > 0.3, st.integers(0, 2**16))

    def invalid(self):
        return st.one_of(st.sampled_from(["causal", None]),
                         st.just(torch.ones(self.shape)), st.just(torch.ones(self.shape, dtype=torch.long)))


@dataclass
class Fixed(Arg):
    """A value the test does not vary (a model, a task), made fresh by ``make``;
    ``bad``: values of that argument that must be refused; ``also``: other
    values that must be accepted (e.g. ``True`` where the signature allows a bool)."""

    make: Callable[[], Any]
    bad: tuple = ()
    also: tuple = ()

    def valid(self):
        if self.also:
            return st.one_of(st.builds(self.make), st.sampled_from(self.also))
        return st.builds(self.make)

    def invalid(self):
        return st.sampled_from(self.bad) if self.bad else None


@dataclass
class Spec:
    """How to call one public function for the property tests.

    ``call(**args)`` makes the call (default: the function itself with the
    arguments as keywords); ``args`` maps each argument to its kind;
    ``check(result)`` is an extra truth about a valid result; ``explorer``:
    the function answers bad input with an explorer that shows a message
    (``.error``) instead of raising; ``slow``: fewer examples per run.
    ``run_valid=False``: a valid call would train a model (minutes), so only
    the refusals are tried (they must come before any work).
    """

    args: dict[str, Arg] = field(default_factory=dict)
    call: Callable[..., Any] | None = None
    check: Callable[[Any], bool] | None = None
    explorer: bool = False
    slow: bool = False
    run_valid: bool = True

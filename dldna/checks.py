"""Small argument checks shared by every public entry point of the package.

Each check either returns the value in the form the code needs (an ``int``, a
``float``, a tensor of the right dtype on the right device) or raises a
``ValueError``/``TypeError`` whose Spanish message says what was wrong and what
was expected. What can be converted safely is converted without fuss: a
float64 tensor made with ``torch.from_numpy`` becomes the layer's dtype, a
NumPy array or a list becomes a tensor, ids and masks move to the model's
device, NumPy integers count as integers. What would be silently misread is
refused: ``"5"`` where an int goes (the message says to drop the quotes),
``"no"`` where a bool goes (it would mean ``True``), a 0/1 mask of integers.

:func:`features`, :func:`ids` and the overflow checks read values only where
:func:`reads_values` says so: in CPU tensors that autograd is not tracing (on a
GPU reading a value makes the program wait for the device at every layer),
and not inside :func:`values_checked`, where the caller checked the values
once at its entry (inside ``torch.func.vmap`` a value cannot be read at all).

A module calls these at its front door and then reads like the idea it
teaches::

    x = checks.features(x, "x", like=self, ndim=3, what="(batch, seq, d_model)")
    mask = checks.mask(mask, scores_shape, device=x.device)
    steps = checks.positive_int(steps, "steps")
    causal = checks.boolean(causal, "causal")
    device = checks.device(device)
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
from collections.abc import Iterable, Iterator

import numpy as np
import torch
from torch import Tensor, nn

__all__ = [
    "integer",
    "positive_int",
    "non_negative_int",
    "real",
    "positive_number",
    "non_negative_number",
    "probability",
    "text",
    "sequence",
    "one_of",
    "device",
    "device_of",
    "module",
    "function",
    "rng",
    "dtype_of",
    "as_tensor",
    "features",
    "ids",
    "id_list",
    "mask",
    "boolean",
    "divides",
    "reads_values",
    "values_checked",
]

_CHECKED_AT_ENTRY = contextvars.ContextVar("dldna_values_checked", default=False)


@contextlib.contextmanager
def values_checked() -> Iterator[None]:
    """A block whose tensors' values were checked at its entry, so the checks
    inside it look at types and shapes only. :mod:`dldna.ensemble` runs each
    training step of several seeds in one: it checks the stacked batch once,
    then calls the models under ``torch.func.vmap``, which cannot read a value."""
    token = _CHECKED_AT_ENTRY.set(True)
    try:
        yield
    finally:
        _CHECKED_AT_ENTRY.reset(token)


def reads_values(t: Tensor) -> bool:
    """Whether a check should read the values of ``t`` (NaN, inf, the range of
    ids): a non-empty CPU tensor that autograd is not tracing (an activation
    with a ``grad_fn`` came from the model's own earlier layer), outside
    :func:`values_checked`."""
    if not isinstance(t, Tensor):
        raise TypeError(f"reads_values espera un tensor de PyTorch; se recibió {_shown(t)}.")
    return (t.device.type == "cpu" and t.grad_fn is None and t.numel() > 0
            and not _CHECKED_AT_ENTRY.get())


def _is_integer(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return isinstance(value, Tensor) and value.numel() == 1 and not value.is_floating_point() \
        and value.dtype != torch.bool


def _hint(value) -> str:
    """A short Spanish hint for the usual slips: a number typed as text, a float for an int."""
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return ""
        return f" Escribe el número sin comillas: {value.strip()}."
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return f" Escríbelo sin decimales: {int(value)}."
    return ""


def positive_int(value, name: str, *, minimum: int = 1) -> int:
    """``value`` as an ``int`` ≥ ``minimum`` (NumPy and 0-d tensor integers accepted)."""
    if not _is_integer(value) or int(value) < minimum:
        what = "un entero positivo" if minimum == 1 else f"un entero mayor o igual que {minimum}"
        raise ValueError(f"{name} debe ser {what}; se recibió {value!r}.{_hint(value)}")
    return int(value)


def integer(value, name: str) -> int:
    """``value`` as an ``int`` of any sign (NumPy and 0-d tensor integers accepted)."""
    if not _is_integer(value):
        raise TypeError(f"{name} debe ser un número entero; se recibió {value!r}.{_hint(value)}")
    return int(value)


def non_negative_int(value, name: str) -> int:
    """``value`` as an ``int`` ≥ 0."""
    return positive_int(value, name, minimum=0)


def _number(value, name: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} debe ser {what}; se recibió {value!r}.{_hint(value)}")
    return float(value)


def real(value, name: str) -> float:
    """``value`` as a finite ``float`` of any sign (the caller checks its range)."""
    return _number(value, name, "un número finito")


def positive_number(value, name: str) -> float:
    """``value`` as a finite ``float`` > 0."""
    number = _number(value, name, "un número positivo")
    if number <= 0:
        raise ValueError(f"{name} debe ser un número positivo; se recibió {value!r}.")
    return number


def non_negative_number(value, name: str) -> float:
    """``value`` as a finite ``float`` ≥ 0."""
    number = _number(value, name, "un número mayor o igual que 0")
    if number < 0:
        raise ValueError(f"{name} debe ser un número mayor o igual que 0; se recibió {value!r}.")
    return number


def probability(value, name: str, *, allow_zero: bool = True, allow_one: bool = True) -> float:
    """``value`` as a ``float`` in ``[0, 1]`` (ends excluded on request)."""
    low = "[0" if allow_zero else "(0"
    high = "1]" if allow_one else "1)"
    number = _number(value, name, f"una probabilidad en {low}, {high}")
    if number < 0 or number > 1 or (number == 0 and not allow_zero) or (number == 1 and not allow_one):
        raise ValueError(f"{name} debe ser una probabilidad en {low}, {high}; se recibió {value!r}.")
    return number


def text(value, name: str, *, allow_empty: bool = False) -> str:
    """``value`` if it is a string (non-empty unless ``allow_empty``)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} debe ser un texto (str); se recibió {type(value).__name__}: {value!r}.")
    if not allow_empty and not value.strip():
        raise ValueError(f"{name} no puede estar vacío.")
    return value


def sequence(values, name: str, each, *, minimum: int = 1) -> list:
    """A list or tuple (or 1-d array) of at least ``minimum`` items, each
    checked by ``each(item, name_of_item)`` (e.g. :func:`positive_int`).

    ``None`` and a single string or number are refused: a slider needs a list of values.
    """
    if isinstance(values, np.ndarray) or (isinstance(values, Tensor) and values.dim() == 1):
        values = values.tolist()
    if not isinstance(values, (list, tuple, range)):
        raise TypeError(f"{name} debe ser una lista de valores, p. ej. [1, 2, 4]; "
                        f"se recibió {type(values).__name__}: {values!r}.")
    if len(values) < minimum:
        raise ValueError(f"{name} debe tener al menos {minimum} valor{'es' if minimum > 1 else ''}; "
                         f"se recibió {list(values)!r}.")
    return [each(v, f"Cada valor de {name}") for v in values]


def boolean(value, name: str) -> bool:
    """``value`` if it is ``True`` or ``False`` (NumPy booleans accepted).

    A truthy string such as ``"no"`` is refused: it would silently mean ``True``.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} debe ser True o False; se recibió {value!r}.")
    return bool(value)


def divides(part, whole, part_name: str, whole_name: str, why: str) -> int:
    """``whole // part`` for positive integers where ``part`` divides ``whole``.

    ``why`` says, in Spanish, what needs the exact division; the error lists
    the values of ``part_name`` that would work.
    """
    part, whole = positive_int(part, part_name), positive_int(whole, whole_name)
    if whole % part:
        valid = [d for d in range(1, whole + 1) if whole % d == 0]
        raise ValueError(f"{part_name}={part} no divide a {whole_name}={whole}: {why} "
                         f"Valores de {part_name} válidos para {whole_name}={whole}: {valid}.")
    return whole // part


def one_of(value, name: str, choices: Iterable):
    """``value`` if it is one of ``choices``."""
    options = list(choices)
    if isinstance(value, bool) and not any(isinstance(c, bool) for c in options):
        _fail(f"{name} debe ser uno de {options}; se recibió {value!r}.")
    try:
        ok = value in options
    except TypeError:
        ok = False
    if not ok:
        _fail(f"{name} debe ser uno de {options}; se recibió {value!r}.")
    return value


def device(value, *, optional: bool = False) -> torch.device | None:
    """A device name or ``torch.device``, checked by :func:`dldna.runtime.get_device`.

    ``None`` means the book's current device, or stays ``None`` with
    ``optional=True`` (for functions whose default is PyTorch's own: the CPU).
    """
    from dldna import runtime

    if value is None and optional:
        return None
    if value is None or isinstance(value, str):
        return runtime.get_device(value)
    if isinstance(value, torch.device):
        return runtime.get_device(str(value))
    raise TypeError(
        f"El dispositivo debe ser un texto ('cpu', 'cuda', 'cuda:N', 'mps') o un torch.device; "
        f"se recibió {type(value).__name__}: {value!r}."
    )


def _module(module) -> nn.Module:
    if not isinstance(module, nn.Module):
        raise TypeError(f"Se esperaba un modelo de PyTorch (nn.Module); se recibió {type(module).__name__}.")
    return module


def _shown(value) -> str:
    """The type of ``value`` and, when short, its text (a whole model's repr is pages long)."""
    text = repr(value)
    return f"{type(value).__name__}: {text}" if len(text) <= 60 else type(value).__name__


def module(value, name: str) -> nn.Module:
    """``value`` if it is a PyTorch module (a model or a layer)."""
    if not isinstance(value, nn.Module):
        raise TypeError(f"{name} debe ser un modelo de PyTorch (nn.Module); se recibió {_shown(value)}.")
    return value


def function(value, name: str, what: str = "una función"):
    """``value`` if it can be called (``what`` says what the function maps, in Spanish)."""
    if not callable(value):
        raise TypeError(f"{name} debe ser {what}; se recibió {_shown(value)}.")
    return value


def rng(value, name: str = "rng"):
    """``value`` if it is a ``random.Random`` (the generator a task draws its examples from)."""
    import random

    if not isinstance(value, random.Random):
        raise TypeError(f"{name} debe ser un generador random.Random, p. ej. random.Random(0); "
                        f"se recibió {_shown(value)}.")
    return value


def device_of(module: nn.Module) -> torch.device:
    """Where ``module``'s parameters live (the CPU for a module without any)."""
    _module(module)
    for p in module.parameters():
        return p.device
    for b in module.buffers():
        return b.device
    return torch.device("cpu")


def dtype_of(module: nn.Module) -> torch.dtype:
    """The floating dtype of ``module``'s parameters (the default dtype if it has none)."""
    _module(module)
    for p in module.parameters():
        if p.is_floating_point():
            return p.dtype
    return torch.get_default_dtype()


def as_tensor(x, name: str) -> Tensor:
    """``x`` as a tensor: NumPy arrays and (nested) lists of numbers are converted."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (np.ndarray, list, tuple, numbers.Number)) and not isinstance(x, bool):
        try:
            array = np.asarray(x)
        except ValueError:  # NumPy refuses lists whose rows have different lengths
            array = None
        if array is None or array.dtype == object:
            raise ValueError(
                f"{name}: las filas de la lista tienen longitudes distintas; un tensor necesita "
                "filas de la misma longitud (rellena las cortas)."
            )
        try:
            return torch.as_tensor(np.ascontiguousarray(array))
        except (TypeError, ValueError, RuntimeError):
            pass
    raise TypeError(
        f"{name} debe ser un tensor de PyTorch (o un array de NumPy o una lista de números); "
        f"se recibió {type(x).__name__}."
    )


def _check_ndim(t: Tensor, name: str, ndim, what: str | None = None) -> None:
    if ndim is None:
        return
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if t.dim() not in allowed:
        want = " o ".join(str(n) for n in allowed)
        form = f"forma {what} ({want} dimensiones)" if what else f"{want} dimensiones"
        raise ValueError(f"{name} debe tener {form}; tiene forma {tuple(t.shape)}.")


def _autocasting(t: Tensor) -> bool:
    try:
        return torch.is_autocast_enabled(t.device.type)
    except TypeError:  # PyTorch older than 2.4: only CUDA's flag exists
        return t.device.type == "cuda" and torch.is_autocast_enabled()


def features(x, name: str, *, like: nn.Module | Tensor | None = None, ndim=None,
             dtype: torch.dtype | None = None, what: str | None = None,
             finite: bool = False) -> Tensor:
    """Real-valued input (vectors, scores, images) as a floating tensor.

    Converted to ``dtype``, or to the dtype and device of ``like`` (a module:
    its parameters; a tensor: itself), or to the default float dtype if it is
    an integer tensor. Inside ``torch.autocast`` a floating input keeps its
    dtype (autocast chooses the precision of each operation). ``ndim`` (an int
    or several) is the allowed rank and ``what`` the shape a message names,
    e.g. ``"(batch, seq, d_model)"``.

    Rejects complex and boolean tensors, NaN, and ``±inf`` when ``finite``
    (scores may hold ``-inf`` for masked positions; layer inputs may not).
    The values are looked at only on the CPU, where a reader's own tensors
    live: on a GPU reading them would make the program wait for the device at
    every call, so there NaN travels on as PyTorch's own layers let it. Nor
    are they looked at in an activation computed under autograd (one with a
    ``grad_fn``): the training loss catches a NaN there, at no cost per layer.
    """
    t = as_tensor(x, name)
    if t.dtype == torch.bool or t.is_complex():
        raise TypeError(f"{name} debe contener números reales; tiene dtype {t.dtype}.")
    target_device = None
    if like is not None:
        if isinstance(like, nn.Module):
            dtype = dtype or dtype_of(like)
            target_device = device_of(like)
        else:
            dtype = dtype or (like.dtype if like.is_floating_point() else None)
            target_device = like.device
    if dtype is None and not t.is_floating_point():
        dtype = torch.get_default_dtype()
    if dtype is not None and t.dtype != dtype and not (t.is_floating_point() and _autocasting(t)):
        t = t.to(dtype)
    if target_device is not None and t.device != target_device:
        t = t.to(target_device)
    _check_ndim(t, name, ndim, what)
    # Values are read only where a reader's own tensor can arrive: on the CPU
    # (see above) and not for an activation that autograd is tracing (grad_fn
    # set), which a model's own earlier layer produced; scanning every
    # activation of every layer at every training step was about 5 % of a
    # step in a profile of chapter 7b's model.
    if reads_values(t):
        bad = ~torch.isfinite(t) if finite else torch.isnan(t)
        if bad.any():
            if torch.isnan(t).any():
                raise ValueError(f"{name} contiene NaN (valores no numéricos): revisa cómo se calcularon.")
            raise ValueError(f"{name} contiene valores infinitos (inf); se esperaban números finitos.")
    return t


def broadcasts_to(shape, target) -> bool:
    """Whether a tensor of ``shape`` broadcasts to exactly ``target`` (a plain
    Python test: ``torch.broadcast_shapes`` is written in Python and slower)."""
    shape, target = tuple(shape), tuple(target)
    return len(shape) <= len(target) and all(
        a in (1, b) for a, b in zip(reversed(shape), reversed(target), strict=False))


def mask(value, target, name: str = "La máscara", *, device: torch.device | None = None) -> Tensor:
    """A boolean mask (``True`` = may attend) that broadcasts to the shape ``target``.

    NumPy boolean arrays and lists of booleans are accepted; the mask moves to
    ``device`` (that of the scores). Integer and float masks are refused: 0/1
    and 0/-inf masks mean different things in different libraries.
    """
    t = as_tensor(value, name)
    if t.dtype != torch.bool:
        raise TypeError(
            f"{name} debe ser un tensor booleano (True = puede atender); se recibió dtype {t.dtype}. "
            "Una máscara de 0 y 1 se convierte con mascara.bool(); una aditiva (0 / -inf), "
            "con dldna.masking.from_additive."
        )
    target = tuple(target)
    if not broadcasts_to(t.shape, target):
        usual = (" Formas habituales: (q, k) para una causal, (batch, 1, 1, k) para una de relleno, "
                 "(batch, 1, q, k) para una por frase.") if len(target) == 4 else ""
        raise ValueError(
            f"{name} de forma {tuple(t.shape)} no se difunde a las puntuaciones {target}.{usual}"
        )
    if device is not None and t.device != device:
        t = t.to(device)
    return t


def ids(x, name: str, *, vocab_size: int | None = None, like: nn.Module | Tensor | None = None,
        ndim=None) -> Tensor:
    """Token ids as a ``long`` tensor, on the device of ``like``, each in ``[0, vocab_size)``.

    The range is checked where a reader's own ids arrive, on the CPU, before
    they move to ``like``'s device. Ids already on a GPU are not read: that
    would make every forward pass wait for the device, and there they come
    from the training loop, which moved batches that the tasks drew.
    """
    t = as_tensor(x, name)
    if t.is_floating_point():
        if t.numel() and not torch.equal(t, t.round()):
            raise TypeError(f"{name} debe contener ids enteros de tókenes; tiene valores con decimales.")
    elif t.dtype == torch.bool or t.is_complex():
        raise TypeError(f"{name} debe contener ids enteros de tókenes; tiene dtype {t.dtype}.")
    t = t.long()
    _check_ndim(t, name, ndim)
    if vocab_size is not None and reads_values(t):
        low, high = int(t.min()), int(t.max())
        if low < 0 or high >= vocab_size:
            bad = low if low < 0 else high
            raise ValueError(
                f"{name} contiene el id {bad}, fuera del vocabulario (ids válidos: 0 a {vocab_size - 1})."
            )
    if like is not None:
        target = device_of(like) if isinstance(like, nn.Module) else like.device
        if t.device != target:
            t = t.to(target)
    return t


def id_list(values, name: str, *, vocab_size: int | None = None) -> list[int]:
    """One sequence of token ids (a list, tuple, 1-d tensor or array) as a list of ``int``.

    A text is refused (its letters are not ids: the message points to
    ``encode``), and so is an id with decimals (``3.7`` is not silently id 3);
    ``3.0`` counts as 3, as in :func:`ids`.
    """
    if isinstance(values, str):
        raise TypeError(
            f"{name} debe ser una secuencia de ids enteros de tókenes; se recibió el texto {values!r} "
            "(para pasar de texto a ids usa encode)."
        )
    if isinstance(values, (Tensor, np.ndarray)):
        return ids(values, name, vocab_size=vocab_size, ndim=1).tolist()
    if not isinstance(values, Iterable) or isinstance(values, (dict, set)):
        raise TypeError(
            f"{name} debe ser una secuencia de ids enteros de tókenes (lista o tensor); "
            f"se recibió {type(values).__name__}: {values!r}."
        )
    out = []
    for value in values:
        if isinstance(value, (list, tuple, Tensor, np.ndarray)) and not (
                isinstance(value, (Tensor, np.ndarray)) and value.ndim == 0):
            raise ValueError(f"{name} debe ser una sola secuencia de ids; tiene una secuencia dentro: "
                             "trata cada una por separado.")
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if not _is_integer(value) and not (isinstance(value, np.integer)):
            raise TypeError(
                f"{name} debe contener ids enteros de tókenes; tiene {value!r} "
                f"({type(value).__name__}).{_hint(value)}"
            )
        value = int(value)
        if value < 0 or (vocab_size is not None and value >= vocab_size):
            top = f" (ids válidos: 0 a {vocab_size - 1})" if vocab_size is not None else ""
            raise ValueError(f"{name} contiene el id {value}, fuera del vocabulario{top}.")
        out.append(value)
    return out


def no_overflow(result: Tensor, name: str) -> Tensor:
    """``result`` unless it holds NaN that finite inputs produced (an overflow of
    its dtype: values near 1e30 squared, say). Read on the CPU, outside autograd,
    as :func:`features` reads inputs."""
    if isinstance(result, Tensor) and result.is_floating_point() and reads_values(result) \
            and bool(torch.isnan(result).any()):
        raise ValueError(
            f"{name}: los valores de entrada son tan grandes que el cálculo desborda {result.dtype} "
            "(el resultado sería NaN); usa valores de un tamaño razonable (p. ej. |x| < 1e15)."
        )
    return result


def _fail(message: str):
    raise ValueError(message)

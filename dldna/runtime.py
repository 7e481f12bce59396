"""Where and how the book's code runs: device, seeds, Colab.

Every notebook and every training loop asks this module for its device and
seeds through it, so a reader can change the behaviour of the whole book from
one place:

* ``DLDNA_DEVICE`` (environment variable): ``auto`` (default), ``cpu``,
  ``cuda``, ``cuda:N`` or ``mps``. A reader with a GPU can force the CPU path
  that the stored outputs and the tests use.
* :func:`seed_everything` seeds Python, NumPy and PyTorch (CPU and CUDA).

No setting of the book depends on the device: every cell runs the same
experiment on a CPU, a CUDA GPU or Apple's MPS; a GPU's own kernels may move
the last digits of a training run (how fast it runs there was never measured).
"""

from __future__ import annotations

import os
import platform
import random
import sys

import numpy as np
import torch

from dldna import checks

ENV_DEVICE = "DLDNA_DEVICE"
_KINDS = ("auto", "cpu", "cuda", "mps")


class DeviceError(ValueError):
    """A device was asked for that does not exist or is not available."""


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def _parse(name: str) -> tuple[str, int | None]:
    text = name.strip().lower()
    kind, _, index = text.partition(":")
    if kind not in _KINDS or (index and (kind != "cuda" or not index.isdigit())):
        raise DeviceError(
            f"Dispositivo desconocido: {name!r}. Los valores válidos son "
            "'auto', 'cpu', 'cuda', 'cuda:N' (N = número de GPU) y 'mps'."
        )
    return kind, int(index) if index else None


def get_device(name: str | torch.device | None = None) -> torch.device:
    """Return the device the book's code should use.

    Order of choice: the ``name`` argument (a name or a ``torch.device``), then
    the ``DLDNA_DEVICE`` environment variable, then ``auto`` (cuda > mps > cpu).

    Raises:
        DeviceError: the name is unknown, or it names a GPU that this machine
            does not have (the message says which devices there are).
    """
    if isinstance(name, torch.device):
        name = str(name)
    if name is not None and not isinstance(name, str):
        raise DeviceError(
            f"El dispositivo debe ser un texto ('auto', 'cpu', 'cuda', 'cuda:N', 'mps') o un "
            f"torch.device; se recibió {type(name).__name__}: {name!r}."
        )
    requested = name if name is not None else os.environ.get(ENV_DEVICE, "auto")
    source = "el argumento" if name is not None else f"la variable {ENV_DEVICE}"
    kind, index = _parse(requested)
    if kind == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    if kind == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise DeviceError(
                f"Se pidió la GPU CUDA ({source} dice {requested!r}), pero esta máquina "
                f"no tiene ninguna disponible. Dispositivos disponibles: {available_devices()}. "
                f"Usa 'auto' o 'cpu'."
            )
        if index is not None and index >= count:
            raise DeviceError(
                f"Se pidió la GPU {index}, pero solo hay {count} (índices 0 a {count - 1})."
            )
        return torch.device("cuda", index) if index is not None else torch.device("cuda")
    if kind == "mps" and not _mps_available():
        raise DeviceError(
            f"Se pidió 'mps' ({source}), pero MPS (GPU de Apple) no está disponible aquí. "
            f"Dispositivos disponibles: {available_devices()}."
        )
    return torch.device(kind)


def available_devices() -> list[str]:
    """Names of the devices PyTorch can use on this machine, best first."""
    names = []
    if torch.cuda.is_available():
        names += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if _mps_available():
        names.append("mps")
    return names + ["cpu"]


def is_accelerated(device: torch.device | str | None = None) -> bool:
    """True when ``device`` (default: :func:`get_device`) is a GPU (CUDA or MPS).

    It says where a cell runs, never what it runs: no setting depends on it.
    """
    if device is None:
        return get_device().type in ("cuda", "mps")
    if isinstance(device, torch.device):
        return device.type in ("cuda", "mps")
    if not isinstance(device, str):
        raise DeviceError(f"El dispositivo debe ser un texto o un torch.device; se recibió {device!r}.")
    return _parse(device)[0] in ("cuda", "mps")


def seed_everything(seed: int = 0) -> int:
    """Seed Python's ``random``, NumPy and PyTorch (CPU and every CUDA device).

    ``seed`` is an integer in ``[0, 2⁶⁴)`` (Python or NumPy). Returns it as a
    Python ``int``, so a cell can print what it used.
    """
    seed = checks.non_negative_int(seed, "La semilla")
    if seed >= 2**64:
        raise ValueError(f"La semilla debe ser menor que 2**64 (lo que admite PyTorch); se recibió {seed}.")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds every CUDA device
    return seed


def in_colab() -> bool:
    """True when the code runs inside Google Colab."""
    return "google.colab" in sys.modules


def describe(device: torch.device | str | None = None) -> str:
    """A short Spanish report of the environment, for a notebook to print."""
    dev = get_device(device)
    where = "Google Colab" if in_colab() else "Jupyter local (o pruebas)"
    lines = [
        f"Entorno: {where}",
        f"Python {platform.python_version()} · PyTorch {torch.__version__.split('+')[0]}",
        f"Dispositivo de entrenamiento: {dev.type}"
        + (" (GPU: los mismos experimentos que en CPU)" if is_accelerated(dev) else
           " (CPU: los mismos experimentos que con GPU)"),
    ]
    return "\n".join(lines)

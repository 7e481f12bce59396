"""Positional encodings.

Sinusoidal encoding (Vaswani et al., 2017): for position ``p`` and dimension
pair ``i`` (columns ``2i`` and ``2i+1``)::

    PE[p, 2i]   = sin(p / base^(2i/d))
    PE[p, 2i+1] = cos(p / base^(2i/d))

so pair ``i`` is a wave of wavelength ``2π·base^(2i/d)`` positions.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor


def _check_sinusoidal_args(d_model: int, base: float) -> None:
    if isinstance(d_model, bool) or not isinstance(d_model, int) or d_model < 2 or d_model % 2:
        raise ValueError(
            f"d_model debe ser un entero par mayor o igual que 2 (cada par de dimensiones es un "
            f"seno y un coseno); se recibió {d_model!r}."
        )
    if not isinstance(base, (int, float)) or not math.isfinite(base) or base <= 1:
        raise ValueError(
            f"La base debe ser un número mayor que 1 (el artículo original usa 10000); "
            f"se recibió {base!r}."
        )


def wavelengths(d_model: int, base: float = 10000.0) -> Tensor:
    """Wavelength, in positions, of each dimension pair: ``2π·base^(2i/d)``. Shape ``(d/2,)``."""
    _check_sinusoidal_args(d_model, base)
    i = torch.arange(d_model // 2, dtype=torch.float64)
    return (2 * math.pi * base ** (2 * i / d_model)).float()


def sinusoidal(n_positions: int, d_model: int, base: float = 10000.0) -> Tensor:
    """Sinusoidal encoding table of shape ``(n_positions, d_model)``."""
    _check_sinusoidal_args(d_model, base)
    if isinstance(n_positions, bool) or not isinstance(n_positions, int) or n_positions < 1:
        raise ValueError(
            f"El número de posiciones debe ser un entero positivo; se recibió {n_positions!r}."
        )
    pos = torch.arange(n_positions, dtype=torch.float64)[:, None]
    i = torch.arange(d_model // 2, dtype=torch.float64)[None, :]
    angles = pos / base ** (2 * i / d_model)
    table = torch.empty(n_positions, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.float()

"""One instruction set for PyTorch's CPU kernels, so that every x86 reader gets the book's numbers.

PyTorch chooses its CPU kernels by the instructions the processor offers
(``torch.backends.cpu.get_cpu_capability()``): AVX-512 on recent server CPUs,
AVX2 on almost every x86-64 machine of the last decade. The two sets of kernels
round the last bit of some sums differently, and training amplifies those bits
over hundreds of steps, so the same notebook prints slightly different
accuracies on two machines. The matrix products go through Intel's MKL and
oneDNN, which dispatch on the processor by themselves (and differently on Intel
and AMD). Three variables, set *before* PyTorch is imported, make every x86-64
CPU compute the same way, the setting the stored outputs were computed with:

* ``ATEN_CPU_CAPABILITY=avx2``: PyTorch's own vectorised kernels;
* ``MKL_CBWR=COMPATIBLE``: MKL's conditional numerical reproducibility on its
  SSE2 code path. It is the one branch that MKL honours on AMD processors as
  well: there it treats ``MKL_CBWR=AVX2`` (or ``AVX512``) as ``AUTO`` and
  picks its own kernels (``MKL_VERBOSE=1`` prints ``CNR:AUTO``), so an Intel
  and an AMD machine pinned to AVX2 differ in the last bits. It costs speed:
  chapter 7b's model trains at 27 to 31 steps/s instead of 40 to 44 (measured
  on a 2-core AMD EPYC, 2 threads);
* ``ONEDNN_MAX_CPU_ISA=AVX2``: oneDNN's kernels (convolutions).

Other architectures (Apple silicon, ARM servers) and GPUs have kernels of
their own: there the book's conclusions hold, but the last digits may differ.

The number of threads matters too: a parallel sum is split among the threads,
and another split rounds differently. The stored outputs were computed with
:data:`BOOK_THREADS` threads (a 2-core machine; Colab's CPU runtime has 2 virtual
CPUs, but how many threads PyTorch uses there was not checked);
:func:`describe` says so when the session uses another number.
"""

from __future__ import annotations

import os
import platform
import sys

ENV_CAPABILITY = "ATEN_CPU_CAPABILITY"
PINNED = "avx2"
#: Every variable of the pin and its value.
PIN: dict[str, str] = {ENV_CAPABILITY: PINNED, "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "AVX2"}
#: Threads the stored outputs were computed with (``torch.get_num_threads()``).
BOOK_THREADS = 2
_X86 = ("x86_64", "amd64", "i386", "i686", "x86")


def is_x86() -> bool:
    return platform.machine().lower() in _X86


def pin_cpu_kernels() -> bool:
    """Ask PyTorch for the AVX2 kernels on x86-64, unless the reader chose otherwise.

    Returns True when the pin is in force for this process: the variable says
    ``avx2`` and PyTorch had not been imported yet (the variable is read once,
    when PyTorch loads). A value set by the reader (``ATEN_CPU_CAPABILITY=default``
    or ``avx512``) is kept.
    """
    if not is_x86():
        return False
    if "torch" not in sys.modules and ENV_CAPABILITY not in os.environ:
        for name, value in PIN.items():
            os.environ.setdefault(name, value)
    return os.environ.get(ENV_CAPABILITY) == PINNED and _loaded_capability() in (None, "AVX2")


def _loaded_capability() -> str | None:
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        return torch.backends.cpu.get_cpu_capability()
    except AttributeError:  # PyTorch older than 2.1
        return None


def describe() -> str:
    """Spanish lines on the CPU kernels in use (and the threads, when they are
    not :data:`BOOK_THREADS`), for chapter 0 to print."""
    import torch

    capability = torch.backends.cpu.get_cpu_capability()
    if not is_x86():
        text = (f"Rutinas de cálculo (kernels) de PyTorch en la CPU: {capability} (procesador "
                f"{platform.machine()}; las últimas cifras pueden diferir de las del libro).")
    elif capability == "AVX2":
        text = ("Rutinas de cálculo (kernels) de PyTorch en la CPU: AVX2 (las mismas con que se "
                "calcularon las salidas del libro).")
    elif capability == "AVX512":  # the processor has AVX2 too: PyTorch was loaded before the pin
        text = ("Rutinas de cálculo (kernels) de PyTorch en la CPU: AVX512, no AVX2: importa "
                "dldna antes que torch (o reinicia el kernel de Jupyter) para obtener las cifras "
                "exactas del libro.")
    else:  # no AVX2 on this processor, or the reader chose other kernels
        text = (f"Rutinas de cálculo (kernels) de PyTorch en la CPU: {capability}, no AVX2 (este "
                "procesador no lo ofrece, o ATEN_CPU_CAPABILITY pide otras): las últimas cifras "
                "pueden diferir de las del libro.")
    threads = torch.get_num_threads()
    if threads != BOOK_THREADS:
        text += (f"\nHilos de cálculo: {threads}; el libro usó {BOOK_THREADS}, y con otro número las "
                 "sumas se reparten de otra forma y las últimas cifras de un entrenamiento pueden "
                 f"cambiar. torch.set_num_threads({BOOK_THREADS}) calcula como el libro.")
    return text

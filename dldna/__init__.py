"""Helper package for the Spanish course «Atención y Transformers».

Modules are organised by concept (``attention``, ``masking``, ``positional``,
``transformer``, ...), never by chapter, so that every chapter reuses the same
implementation. Import the submodule you need, e.g. ``from dldna import runtime``.

Importing the package pins PyTorch's CPU kernels to AVX2 on x86-64 machines
(see :mod:`dldna.cpu`), so that a reader's CPU prints the numbers stored in the
book. It must therefore be imported before ``torch``, as every chapter's
set-up cell does.
"""

from dldna.cpu import pin_cpu_kernels

pin_cpu_kernels()

__version__ = "0.1.0"

"""Helper package for the Spanish course «Atención y Transformers».

Modules are organised by concept (``attention``, ``masking``, ``positional``,
``transformer``, ...), never by chapter, so that every chapter reuses the same
implementation. Import the submodule you need, e.g. ``from dldna import runtime``.
"""

__version__ = "0.1.0"

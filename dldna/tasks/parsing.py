"""Parsing task (chapter 7c): arithmetic assignments to syntax trees in prefix form.

The source is an assignment such as ``x=(3+y)*2-z``, read one character at a
time; the target is its syntax tree, linearised in prefix (Polish) order and
ended by EOS::

    x=(3+y)*2-z   →   ASSIGN x SUB MUL ADD 3 y 2 z

Compared with the fixed ``var = d op d`` of the original example, the
expressions here have a variable number of operators (0 to ``max_ops``),
operator precedence (``*`` and ``/`` bind tighter than ``+`` and ``-``),
left associativity (``8-3-1`` is ``(8-3)-1``) and parentheses, some of them
redundant, which change nothing in the tree.

Trees are nested tuples: a leaf is a string (a digit or a variable), a node
is ``(label, left, right)``. The pieces:

* :func:`parse`: the reference recursive-descent parser (the ground truth);
* :func:`to_prefix` / :func:`from_prefix`: tree ↔ token list (exact inverses;
  ``from_prefix`` returns ``None`` for a token list that is not a tree);
* :func:`to_infix`: tree → source text with the fewest parentheses;
* :func:`draw`: the tree as indented text, to print.

>>> tree = parse("x=(3+y)*2-z")
>>> " ".join(to_prefix(tree))
'ASSIGN x SUB MUL ADD 3 y 2 z'
>>> from_prefix(to_prefix(tree)) == tree
True
>>> print(draw(tree))
ASSIGN (=)
├── x
└── SUB (-)
    ├── MUL (*)
    │   ├── ADD (+)
    │   │   ├── 3
    │   │   └── y
    │   └── 2
    └── z
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from dldna import checks
from dldna.tasks.base import BenchResult, Example, Task, Tokenizer, benchmark_task
from dldna.training import Recipe
from dldna.transformer import TransformerConfig

__all__ = [
    "OPERATORS",
    "VARIABLES",
    "DIGITS",
    "ParsingTask",
    "ParseError",
    "parse",
    "to_prefix",
    "from_prefix",
    "to_infix",
    "draw",
    "random_tree",
]

#: Symbol → node label, with its precedence (higher binds tighter).
OPERATORS: dict[str, str] = {"+": "ADD", "-": "SUB", "*": "MUL", "/": "DIV"}
SYMBOLS: dict[str, str] = {v: k for k, v in OPERATORS.items()} | {"ASSIGN": "="}
PRECEDENCE: dict[str, int] = {"ADD": 1, "SUB": 1, "MUL": 2, "DIV": 2}
VARIABLES = "xyz"
DIGITS = "0123456789"

Tree = str | tuple


class ParseError(ValueError):
    """The text is not an assignment of the task's grammar."""


# ---------------------------------------------------------------------------
# Reference parser
# ---------------------------------------------------------------------------


def parse(text: str | Sequence[str]) -> Tree:
    """Parse ``var=expression`` into a tree (grammar in the module docstring).

    Grammar::

        assignment := VAR "=" expr
        expr       := term (("+" | "-") term)*        left-associative
        term       := factor (("*" | "/") factor)*    left-associative
        factor     := DIGIT | VAR | "(" expr ")"
    """
    if isinstance(text, str):
        tokens = [c for c in text if not c.isspace()]
    elif isinstance(text, Sequence) and all(isinstance(t, str) for t in text):
        tokens = list(text)
    else:
        raise TypeError(
            "parse espera un texto como «x=1+2*y» o una lista de símbolos; "
            f"se recibió {type(text).__name__}: {text!r}."
        )
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take(expected: str | None = None) -> str:
        nonlocal pos
        tok = peek()
        if tok is None or (expected is not None and tok != expected):
            where = f"en la posición {pos}" if tok is not None else "al final"
            want = f"«{expected}»" if expected else "un símbolo"
            raise ParseError(f"Se esperaba {want} {where} de «{''.join(tokens)}».")
        pos += 1
        return tok

    def factor() -> Tree:
        tok = peek()
        if tok == "(":
            take("(")
            node = expr()
            take(")")
            return node
        if tok is not None and (tok in DIGITS or tok in VARIABLES):
            return take()
        raise ParseError(
            f"Se esperaba un dígito, una variable o «(» en la posición {pos} de «{''.join(tokens)}»."
        )

    def binary(operand, symbols: str):
        def rule() -> Tree:
            node = operand()
            while peek() is not None and peek() in symbols:
                op = OPERATORS[take()]
                node = (op, node, operand())
            return node
        return rule

    term = binary(factor, "*/")
    expr = binary(term, "+-")

    var = take()
    if var not in VARIABLES:
        raise ParseError(f"Una asignación empieza por una variable ({', '.join(VARIABLES)}); "
                         f"«{''.join(tokens)}» empieza por «{var}».")
    take("=")
    tree = ("ASSIGN", var, expr())
    if pos != len(tokens):
        raise ParseError(f"Sobra texto desde la posición {pos} de «{''.join(tokens)}».")
    return tree


# ---------------------------------------------------------------------------
# Linearisation
# ---------------------------------------------------------------------------


def _check_tree(tree, name: str = "tree (árbol)") -> Tree:
    """``tree`` if it is a leaf (a text) or a node ``(label, left, right)`` of :data:`SYMBOLS`."""
    stack = [tree]
    while stack:
        t = stack.pop()
        if isinstance(t, str) and t:
            continue
        if not (isinstance(t, tuple) and len(t) == 3 and t[0] in SYMBOLS):
            raise TypeError(
                f"{name} debe ser una hoja (un texto como 'x' o '3') o un nodo (etiqueta, izquierdo, "
                f"derecho) con una etiqueta de {sorted(SYMBOLS)}, como lo devuelve parse; "
                f"se recibió {t!r}."
            )
        stack.extend(t[1:])
    return tree


def to_prefix(tree: Tree) -> list[str]:
    """Prefix (Polish) order: the label of a node, then its left and right subtrees."""
    _check_tree(tree)
    return _to_prefix(tree)


def _to_prefix(tree: Tree) -> list[str]:
    if isinstance(tree, str):
        return [tree]
    label, left, right = tree
    return [label, *_to_prefix(left), *_to_prefix(right)]


def from_prefix(tokens: Sequence[str]) -> Tree | None:
    """Inverse of :func:`to_prefix`; ``None`` if ``tokens`` is not exactly one tree.

    Every label of :data:`SYMBOLS` (``ASSIGN``, ``ADD``...) takes two subtrees;
    any other token is a leaf. Prefix order needs no parentheses because the
    arity of every token is known.
    """
    if isinstance(tokens, str) or not isinstance(tokens, (list, tuple)) \
            or not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"tokens debe ser una lista de símbolos (textos) en orden prefijo, como la de "
                        f"to_prefix; se recibió {tokens!r}.")
    tokens = list(tokens)
    pos = 0

    def node() -> Tree:
        nonlocal pos
        if pos >= len(tokens):
            raise IndexError
        tok = tokens[pos]
        pos += 1
        if tok in SYMBOLS:
            left = node()
            right = node()
            return (tok, left, right)
        return tok

    try:
        tree = node()
    except IndexError:
        return None
    return tree if pos == len(tokens) else None


def _needs_parens(child: Tree, parent: str, side: str) -> bool:
    if isinstance(child, str):
        return False
    p_child, p_parent = PRECEDENCE[child[0]], PRECEDENCE[parent]
    # Left-associative: a right child of the same precedence needs parentheses
    # to keep its shape (a-(b-c) is not a-b-c; for + and * the value is the
    # same but the tree is not).
    return p_child < p_parent or (side == "right" and p_child == p_parent)


def to_infix(tree: Tree, rng: random.Random | None = None, extra_parens: float = 0.0) -> str:
    """Source text of ``tree`` with the parentheses it needs (and, with ``rng``,
    redundant ones around a sub-expression with probability ``extra_parens``)."""
    _check_tree(tree)
    if rng is not None:
        checks.rng(rng)
    extra_parens = checks.probability(extra_parens, "extra_parens (probabilidad de paréntesis de más)")

    def render(t: Tree, top: bool = False) -> str:
        if isinstance(t, str):
            return t
        label, left, right = t
        if label == "ASSIGN":
            return f"{left}={render(right, top=True)}"
        parts = []
        for child, side in ((left, "left"), (right, "right")):
            text = render(child)
            needed = _needs_parens(child, label, side)
            extra = (rng is not None and not isinstance(child, str)
                     and rng.random() < extra_parens)
            parts.append(f"({text})" if needed or extra else text)
        return SYMBOLS[label].join(parts)

    return render(tree)


def draw(tree: Tree) -> str:
    """The tree as indented text (``├──``/``└──``), operators with their symbol."""
    _check_tree(tree)

    def label(t: Tree) -> str:
        return t if isinstance(t, str) else f"{t[0]} ({SYMBOLS[t[0]]})"

    lines = [label(tree)]

    def walk(t: Tree, prefix: str) -> None:
        if isinstance(t, str):
            return
        children = t[1:]
        for i, child in enumerate(children):
            last = i == len(children) - 1
            lines.append(prefix + ("└── " if last else "├── ") + label(child))
            walk(child, prefix + ("    " if last else "│   "))

    walk(tree, "")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Random trees and the task
# ---------------------------------------------------------------------------


def random_tree(rng: random.Random, n_ops: int, leaf_var: float = 0.3) -> Tree:
    """A random expression tree with exactly ``n_ops`` operators (uniform
    shapes by recursive splitting); leaves are variables with probability
    ``leaf_var``, digits otherwise."""
    checks.rng(rng)
    n_ops = checks.non_negative_int(n_ops, "n_ops (número de operadores)")
    if n_ops > 500:  # one level of recursion per operator: Python's stack would overflow
        raise ValueError(f"n_ops debe estar entre 0 y 500; se recibió {n_ops}.")
    leaf_var = checks.probability(leaf_var, "leaf_var (probabilidad de una variable en una hoja)")
    return _random_tree(rng, n_ops, leaf_var)


def _random_tree(rng: random.Random, n_ops: int, leaf_var: float) -> Tree:
    if n_ops == 0:
        return rng.choice(VARIABLES) if rng.random() < leaf_var else rng.choice(DIGITS)
    left = rng.randint(0, n_ops - 1)
    op = rng.choice(list(PRECEDENCE))
    return (op, _random_tree(rng, left, leaf_var), _random_tree(rng, n_ops - 1 - left, leaf_var))


class ParsingTask(Task):
    """Assignments with ``min_ops`` to ``max_ops`` operators → prefix trees.

    ``extra_parens``: probability of a redundant pair of parentheses around
    each compound sub-expression (the tree does not change).
    """

    name = "análisis sintáctico"

    def __init__(self, max_ops: int = 4, min_ops: int = 1, extra_parens: float = 0.1):
        super().__init__()
        max_ops = checks.non_negative_int(max_ops, "max_ops (máximo de operadores)")
        min_ops = checks.non_negative_int(min_ops, "min_ops (mínimo de operadores)")
        extra_parens = checks.probability(extra_parens, "extra_parens (probabilidad de paréntesis de más)")
        if not 0 <= min_ops <= max_ops:
            raise ValueError(f"Hace falta 0 ≤ min_ops ≤ max_ops; se recibió {min_ops}, {max_ops}.")
        self.max_ops, self.min_ops, self.extra_parens = max_ops, min_ops, extra_parens
        self.src_tokenizer = Tokenizer(list(VARIABLES + DIGITS + "=+-*/()"), separator="")
        self.tgt_tokenizer = Tokenizer(["ASSIGN", *PRECEDENCE, *VARIABLES, *DIGITS], separator=" ")

    @property
    def max_target_len(self) -> int:
        return 2 * self.max_ops + 3 + 1  # ASSIGN var, 2n+1 for the expression, EOS

    def make(self, text: str) -> Example:
        """The example of an assignment written by hand, e.g. ``"x=2*(y+1)"``."""
        tree = parse(text)
        return Example(tuple(c for c in text if not c.isspace()), tuple(to_prefix(tree)))

    def sample(self, rng: random.Random) -> Example:
        n_ops = rng.randint(self.min_ops, self.max_ops)
        tree = ("ASSIGN", rng.choice(VARIABLES), random_tree(rng, n_ops))
        return self.make(to_infix(tree, rng, self.extra_parens))

    def tree(self, tokens: Sequence[str]) -> Tree | None:
        """The tree of a (predicted) prefix token list, or ``None`` if malformed."""
        return from_prefix(tokens)


def setup(task: ParsingTask | None = None) -> tuple[TransformerConfig, Recipe]:
    """The chapter's model and recipe for ``task``: ``(TransformerConfig, Recipe)``.

    Two encoder and two decoder layers of width 64, 1000 steps of 128 fresh
    expressions, peak rate 3·10⁻³ after 100 warm-up steps, linear decay. The
    same on every device (:mod:`dldna.runtime`).
    """
    task = task or ParsingTask()
    src, tgt = len(task.src_tokenizer), len(task.tgt_tokenizer)
    return (TransformerConfig(src_vocab=src, tgt_vocab=tgt, d_model=64, n_heads=4, n_encoder_layers=2,
                              n_decoder_layers=2, d_ff=256, dropout=0.0, max_len=64),
            Recipe(steps=1000, batch_size=128, lr=3e-3, warmup=100, eval_every=100))


def benchmark(device=None, quick: bool = False) -> BenchResult:
    """Row of ``make bench``: exact match of the prefix tree on 1,000 fresh expressions."""
    task = ParsingTask()
    config, recipe = setup(task)
    return benchmark_task(task, config, recipe, device=device, quick=quick, claim=0.99)

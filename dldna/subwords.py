"""Subwords: byte-pair encoding (Sennrich, Haddow and Birch, 2016), written from scratch.

A word-level vocabulary (chapter 9) has no id for a word it never saw.
Byte-pair encoding (BPE) starts from the characters of the training words
and learns, one at a time, which adjacent pair of symbols to merge into a new
symbol: always the pair that occurs most often in the corpus (each word
weighted by its count). Any word can then be written with the learned
symbols, a new one included, as long as its characters are known.

* :func:`word_counts` counts the words of a corpus (split on whitespace);
* :func:`train_bpe` learns the merges, in order;
* :func:`encode_word` / :func:`encode` apply them to a word / a text;
* :func:`vocabulary` lists the symbols (alphabet + one per merge);
* :func:`train_tokenizers_bpe` trains Hugging Face's ``tokenizers`` BPE on
  the same words and returns its merges, which a test shows equal to ours.

Ties. When several pairs occur equally often, :func:`train_bpe` takes the
pair whose symbols were created first (the characters in code-point order
come first, then each merged symbol in the order it was made), comparing the
left symbol, then the right one. This is the rule of the ``tokenizers``
library (its trainer orders equal counts by the pair of symbol ids), so both
learn the same merges in the same order. Words are not marked at their end
(no ``</w>``): a symbol can sit anywhere in a word.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from dldna import checks

__all__ = [
    "word_counts",
    "train_bpe",
    "encode_word",
    "encode",
    "vocabulary",
    "train_tokenizers_bpe",
]


def word_counts(texts: Iterable[str | Sequence[str]]) -> Counter:
    """How often each word occurs in ``texts`` (strings split on whitespace, or lists of words)."""
    if isinstance(texts, str) or not isinstance(texts, Iterable):
        raise TypeError("texts debe ser una lista de frases (textos o listas de palabras); "
                        f"se recibió {type(texts).__name__}: {texts!r}.")
    counts: Counter = Counter()
    for text in texts:
        counts.update(_words(text, "Cada frase de texts"))
    if not counts:
        raise ValueError("El corpus no tiene ninguna palabra: hace falta al menos una para aprender BPE.")
    return counts


def _words(text, name: str) -> list[str]:
    """A text split on whitespace, or a list of words, as a list of words."""
    if isinstance(text, str):
        return text.split()
    if isinstance(text, (list, tuple)) and all(isinstance(w, str) for w in text):
        return list(text)
    raise TypeError(f"{name} debe ser un texto o una lista de palabras; se recibió "
                    f"{type(text).__name__}: {text!r}.")


def _check_counts(counts) -> dict[str, int]:
    if not isinstance(counts, dict) or not counts:
        raise TypeError("counts debe ser un diccionario no vacío palabra → número de apariciones, "
                        f"como el que da word_counts; se recibió {type(counts).__name__}.")
    for word, n in counts.items():
        if not isinstance(word, str) or not word or any(ch.isspace() for ch in word):
            raise ValueError(f"Cada palabra debe ser un texto no vacío y sin espacios; se recibió {word!r}.")
        checks.positive_int(n, f"el número de apariciones de {word!r}")
    return dict(counts)


def _pairs(words: dict[tuple[str, ...], int]) -> Counter:
    pairs: Counter = Counter()
    for symbols, n in words.items():
        for pair in zip(symbols, symbols[1:], strict=False):
            pairs[pair] += n
    return pairs


def _merge(symbols: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:
    """Replace each occurrence of ``pair`` in ``symbols``, left to right, by its merge."""
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def train_bpe(counts: dict[str, int], num_merges: int) -> list[tuple[str, str]]:
    """Learn up to ``num_merges`` merges from ``counts`` (word → occurrences).

    Each step counts every adjacent pair of symbols (a word counts as many
    times as it occurs), merges the most frequent pair everywhere and records
    it. Ties: see the module docstring. It stops early when no word has two
    symbols left (every word is one symbol). Returns the merges in order.
    """
    counts = _check_counts(counts)
    num_merges = checks.non_negative_int(num_merges, "num_merges")
    words = {tuple(word): n for word, n in counts.items()}
    # Creation order of the symbols: the tie-break of the `tokenizers` trainer.
    order = {ch: i for i, ch in enumerate(sorted({ch for word in counts for ch in word}))}
    merges: list[tuple[str, str]] = []
    for _ in range(num_merges):
        pairs = _pairs(words)
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], -order[p[0]], -order[p[1]]))
        merges.append(best)
        order.setdefault(best[0] + best[1], len(order))
        words = {_merge(symbols, best): n for symbols, n in words.items()}
    return merges


def _check_merges(merges) -> list[tuple[str, str]]:
    try:
        out = [(str(a), str(b)) for a, b in merges]
    except (TypeError, ValueError):
        raise TypeError("merges debe ser una lista de pares (símbolo, símbolo), como la que da "
                        "train_bpe.") from None
    return out


def encode_word(word: str, merges: Sequence[tuple[str, str]]) -> list[str]:
    """The symbols of ``word`` after applying ``merges`` in the order they were learned.

    A character never seen in training stays a symbol of its own (a real
    tokenizer would map it to an unknown id or, byte-level, to its bytes).
    """
    if not isinstance(word, str) or not word or any(ch.isspace() for ch in word):
        raise ValueError(f"La palabra debe ser un texto no vacío y sin espacios; se recibió {word!r}.")
    symbols = tuple(word)
    for pair in _check_merges(merges):
        if len(symbols) == 1:
            break
        symbols = _merge(symbols, pair)
    return list(symbols)


def encode(text: str | Sequence[str], merges: Sequence[tuple[str, str]]) -> list[str]:
    """The symbols of every word of ``text`` (split on whitespace), one list."""
    words = _words(text, "text")
    merges = _check_merges(merges)
    return [symbol for word in words for symbol in encode_word(word, merges)]


def vocabulary(counts: dict[str, int], merges: Sequence[tuple[str, str]]) -> list[str]:
    """The symbols of the model: the characters of ``counts`` (sorted), then one per merge."""
    alphabet = sorted({ch for word in _check_counts(counts) for ch in word})
    return alphabet + [a + b for a, b in _check_merges(merges)]


def train_tokenizers_bpe(counts: dict[str, int], num_merges: int) -> list[tuple[str, str]]:
    """The merges that Hugging Face's ``tokenizers`` learns from the same words.

    A ``BPE`` model trained with ``BpeTrainer`` on ``counts`` (each word
    repeated as often as it occurs, split on whitespace), with a vocabulary
    of the alphabet plus ``num_merges`` symbols and no special tokens. Needs
    the ``tokenizers`` package (preinstalled in Colab; in ``requirements.txt``).
    """
    counts = _check_counts(counts)
    num_merges = checks.non_negative_int(num_merges, "num_merges")
    try:
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("Hace falta el paquete tokenizers: pip install tokenizers") from None
    import json

    alphabet = {ch for word in counts for ch in word}
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.BpeTrainer(vocab_size=len(alphabet) + num_merges, min_frequency=0,
                                  show_progress=False, special_tokens=[])
    tokenizer.train_from_iterator(_repeat(counts), trainer=trainer)
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    return [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in merges]


def _repeat(counts: dict[str, int]):
    for word, n in counts.items():
        for _ in range(n):
            yield word

"""A generated Spanish corpus for the language models of chapter 9.

Short sentences from a small grammar, the same on every machine (each call
uses its own ``random.Random``), so that a language model trains in seconds
and every claim about it can be checked. Four kinds of sentence
(:data:`KINDS`):

* ``"ocio"``: «ana va al cine a ver una nueva película» — the show depends on
  the place (cine → película, teatro → obra, estadio → partido...), several
  words back, and the article and the adjective agree with it;
* ``"dinero"`` and ``"asiento"``: the two senses of *banco*, the bank where
  money is kept («marta saca dinero del banco») and the bench in a park
  («hugo se sienta en un banco del parque»). The word *banco* is the same
  token in both; only its context tells them apart;
* ``"comida"``: people eat and drink things in places (filler, so that not
  every sentence is about *banco*).

:func:`tokenizer` gives the word vocabulary, with the three special ids of
:mod:`dldna.tasks` (PAD, BOS, EOS) and :data:`MASK` as the first data token.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from dldna import checks
from dldna.tasks.base import Tokenizer

__all__ = [
    "KINDS",
    "MASK",
    "PEOPLE",
    "SHOWS",
    "MONEY_ACTIONS",
    "SEAT_ACTIONS",
    "Sentence",
    "sentence",
    "generate",
    "split_held_out",
    "with_word_at",
    "tokenizer",
]

#: The token that replaces a hidden word in masked language modelling.
MASK = "[MASK]"

PEOPLE = ("ana", "luis", "marta", "pablo", "sara", "hugo", "elena", "jorge")
#: place → (article, masculine/feminine «nuevo», show).
SHOWS = {
    "cine": ("una", "nueva", "película"),
    "teatro": ("una", "nueva", "obra"),
    "museo": ("una", "nueva", "exposición"),
    "estadio": ("un", "nuevo", "partido"),
    "auditorio": ("un", "nuevo", "concierto"),
}
#: What is done with money at the bank (each a list of words around «banco»).
MONEY_ACTIONS = (
    ("saca", "dinero", "del", "banco"),
    ("ingresa", "dinero", "en", "el", "banco"),
    ("guarda", "sus", "ahorros", "en", "el", "banco"),
    ("pide", "un", "préstamo", "al", "banco"),
    ("abre", "una", "cuenta", "en", "el", "banco"),
    ("cobra", "el", "sueldo", "en", "el", "banco"),
)
#: What is done on a bench; the place of the bench is appended.
SEAT_ACTIONS = (
    ("se", "sienta", "en", "un", "banco", "del"),
    ("descansa", "en", "un", "banco", "del"),
    ("lee", "en", "un", "banco", "del"),
    ("pinta", "el", "banco", "del"),
    ("espera", "en", "el", "banco", "del"),
)
SEAT_PLACES = ("parque", "jardín", "paseo")
FOODS = (("come", ("pan", "fruta", "sopa", "pescado")), ("bebe", ("agua", "café", "zumo", "leche")))
EAT_PLACES = (("en", "casa"), ("en", "el", "bar"), ("en", "la", "escuela"))

#: An optional ending, so that held-out sentences can be new ones.
WHEN = ("hoy", "ayer", "el", "lunes", "por", "la", "tarde")
ENDINGS = (("hoy",), ("ayer",), ("el", "lunes"), ("por", "la", "tarde"))

KINDS = ("ocio", "dinero", "asiento", "comida")


@dataclass(frozen=True)
class Sentence:
    """One sentence: its ``words`` and its ``kind`` (one of :data:`KINDS`)."""

    words: tuple[str, ...]
    kind: str

    @property
    def text(self) -> str:
        return " ".join(self.words)


def sentence(rng: random.Random, kind: str | None = None) -> Sentence:
    """Draw one sentence of ``kind`` (default: a kind at random, equally likely)."""
    checks.rng(rng)
    kind = rng.choice(KINDS) if kind is None else checks.one_of(kind, "kind", KINDS)
    person = rng.choice(PEOPLE)
    if kind == "ocio":
        place = rng.choice(tuple(SHOWS))
        article, new, show = SHOWS[place]
        middle = (article, new, show) if rng.random() < 0.5 else (article, show)
        company = ("con", rng.choice(PEOPLE)) if rng.random() < 0.5 else ()
        words = (person, "va", "al", place) + company + ("a", "ver") + middle
    elif kind == "dinero":
        words = (person,) + rng.choice(MONEY_ACTIONS)
    elif kind == "asiento":
        words = (person,) + rng.choice(SEAT_ACTIONS) + (rng.choice(SEAT_PLACES),)
    else:
        verb, things = rng.choice(FOODS)
        words = (person, verb, rng.choice(things)) + rng.choice(EAT_PLACES)
    if rng.random() < 0.5:
        words += rng.choice(ENDINGS)
    return Sentence(words, kind)


def generate(n: int, seed: int = 0, kinds: tuple[str, ...] | None = None) -> list[Sentence]:
    """``n`` sentences, deterministically from ``seed``; ``kinds`` restricts
    them to some kinds (drawn equally often)."""
    checks.positive_int(n, "n")
    # random.Random would take any text or float as a seed without a word.
    rng = random.Random(checks.non_negative_int(seed, "seed (semilla)"))
    if kinds is not None:
        if isinstance(kinds, str):  # one kind written alone: its letters are not kinds
            raise TypeError(f"kinds debe ser una lista de tipos de frase, p. ej. ({kinds!r},); "
                            f"se recibió el texto {kinds!r}.")
        kinds = checks.sequence(kinds, "kinds", lambda k, name: checks.one_of(k, name, KINDS))
    return [sentence(rng, rng.choice(kinds) if kinds else None) for _ in range(n)]


def split_held_out(train: list[Sentence], candidates: list[Sentence]) -> list[Sentence]:
    """The ``candidates`` whose words never occur as a training sentence
    (held-out sentences that are new, not repeats of training ones)."""
    train = _sentences(train, "train")
    candidates = _sentences(candidates, "candidates")
    seen = {s.words for s in train}
    return [s for s in candidates if s.words not in seen]


def _longest_sentence() -> int:
    """Words in the longest sentence :func:`sentence` can draw: each kind's
    longest form, plus the longest ending."""
    ocio = 1 + 3 + 2 + 2 + 3  # person va al place, con person, a ver, article new show
    dinero = 1 + max(len(a) for a in MONEY_ACTIONS)
    asiento = 1 + max(len(a) for a in SEAT_ACTIONS) + 1
    comida = 3 + max(len(p) for p in EAT_PLACES)
    return max(ocio, dinero, asiento, comida) + max(len(e) for e in ENDINGS)


def with_word_at(sentences: list[Sentence], word: str, index: int) -> list[Sentence]:
    """The sentences whose word number ``index`` (from 0) is ``word``: to compare
    a word in two contexts at the same position (a control for position).

    An ``index`` beyond the longest sentence (of the grammar, or of
    ``sentences`` if one is longer) is refused: no sentence could match it.
    A reachable position where ``word`` happens not to be gives ``[]``."""
    sentences = _sentences(sentences, "sentences")
    word = checks.text(word, "word")
    index = checks.non_negative_int(index, "index (posición de la palabra, desde 0)")
    longest = max([_longest_sentence(), *(len(s.words) for s in sentences)])
    if index >= longest:
        raise ValueError(f"index ({index}) está más allá de la frase más larga posible ({longest} "
                         f"palabras): la última posición es {longest - 1} (se cuenta desde 0).")
    return [s for s in sentences if len(s.words) > index and s.words[index] == word]


def _sentences(value, name: str) -> list[Sentence]:
    """A list of :class:`Sentence` (as :func:`generate` returns), or a Spanish refusal."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)) \
            or not all(isinstance(s, Sentence) for s in value):
        raise TypeError(f"{name} debe ser una lista de frases (Sentence), como las que devuelve "
                        f"generate; se recibió {type(value).__name__}.")
    return list(value)


def tokenizer() -> Tokenizer:
    """The word vocabulary of the corpus: PAD, BOS, EOS, then :data:`MASK`, then
    every word the grammar can produce (in a fixed order)."""
    words: list[str] = [MASK]

    def add(*groups) -> None:
        for group in groups:
            for word in group:
                if word not in words:
                    words.append(word)

    add(PEOPLE, ("va", "al", "con", "a", "ver"))
    for place, show in SHOWS.items():
        add((place,), show)
    for action in MONEY_ACTIONS + SEAT_ACTIONS:
        add(action)
    add(SEAT_PLACES)
    for verb, things in FOODS:
        add((verb,), things)
    for place in EAT_PLACES:
        add(place)
    add(WHEN)
    return Tokenizer(words)

"""Word vectors: a generated Spanish corpus, one-hot vectors and word2vec.

The corpus is produced by a small grammar (:func:`generate_corpus`), so every
reader gets the same sentences without downloading anything. Its words belong
to a few semantic groups (people, animals, food, places, verbs, ...), which
makes the clusters learned by word2vec visible in a 2-D projection.

The model is skip-gram with negative sampling (Mikolov et al., 2013): each
word predicts the words around it, and it learns to tell the true neighbours
from ``negatives`` words drawn at random from the unigram distribution raised
to 3/4.

Shapes: a vocabulary of ``V`` words and vectors of ``d`` dimensions give an
embedding matrix ``E`` of shape ``(V, d)``; the vector of word ``i`` is row
``E[i]``, which equals ``one_hot(i) @ E``.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from dldna import checks, runtime

# ---------------------------------------------------------------------------
# The grammar
# ---------------------------------------------------------------------------

#: People and animals come in masculine/feminine pairs that differ only in
#: the agreement of the words around them (el/la, pequeño/pequeña, ...).
PEOPLE = (("niño", "niña"), ("abuelo", "abuela"), ("vecino", "vecina"), ("médico", "médica"))
ANIMALS = (("perro", "perra"), ("gato", "gata"), ("lobo", "loba"), ("conejo", "coneja"))
#: What each animal prefers to eat (people eat anything). Milk is drunk, not
#: eaten: it appears only after «bebe».
ANIMAL_FOOD = {
    "perro": ("carne", "pan"),
    "gato": ("pescado",),
    "lobo": ("carne",),
    "conejo": ("zanahoria", "lechuga"),
}
FOODS = ("pan", "queso", "arroz", "sopa", "fruta", "pescado", "carne", "zanahoria",
         "lechuga")
#: Indoor/town places (people) and outdoor places (animals); the park is shared.
TOWN_PLACES = ("casa", "escuela", "mercado", "ciudad")
WILD_PLACES = ("bosque", "campo", "río", "montaña")
SHARED_PLACES = ("parque",)
MOTION_VERBS = ("corre", "camina", "juega", "duerme")
PERSON_VERBS = ("lee", "escribe", "cocina", "trabaja")
#: Inherent properties take «ser» (es pequeño), passing states «estar» (está cansado).
TRAITS = (("pequeño", "pequeña"), ("blanco", "blanca"))
STATES = (("contento", "contenta"), ("cansado", "cansada"))
ADJECTIVES = TRAITS + STATES
FEMININE_PLACES = {"casa", "escuela", "ciudad", "montaña"}
FEMININE_FOODS = {"sopa", "fruta", "carne", "zanahoria", "lechuga"}

#: The semantic group of each content word, for colouring plots.
CATEGORIES: dict[str, str] = {}
for _pair in PEOPLE:
    CATEGORIES.update(dict.fromkeys(_pair, "personas"))
for _pair in ANIMALS:
    CATEGORIES.update(dict.fromkeys(_pair, "animales"))
CATEGORIES.update(dict.fromkeys(FOODS + ("leche", "agua"), "comida"))
CATEGORIES.update(dict.fromkeys(TOWN_PLACES + WILD_PLACES + SHARED_PLACES, "lugares"))
CATEGORIES.update(dict.fromkeys(
    MOTION_VERBS + PERSON_VERBS + ("come", "bebe", "descansa", "guarda", "saca"), "verbos"))
for _pair in ADJECTIVES:
    CATEGORIES.update(dict.fromkeys(_pair, "adjetivos"))
CATEGORIES["banco"] = "ambigua"
CATEGORIES["dinero"] = "dinero"
del _pair


def _article(feminine: bool) -> str:
    return "la" if feminine else "el"


def _place(rng: random.Random, places: tuple[str, ...]) -> list[str]:
    place = rng.choice(places)
    return [_article(place in FEMININE_PLACES), place]


def _food(rng: random.Random, foods: tuple[str, ...]) -> list[str]:
    food = rng.choice(foods)
    if rng.random() < 0.5:
        return [food]
    return [_article(food in FEMININE_FOODS), food]


def _sentence(rng: random.Random) -> list[str]:
    """One sentence of the grammar (a list of lower-case tokens)."""
    kind = rng.random()
    is_animal = rng.random() < 0.5
    pairs = ANIMALS if is_animal else PEOPLE
    pair = rng.choice(pairs)
    feminine = rng.random() < 0.5
    noun = pair[1] if feminine else pair[0]
    subject = [_article(feminine), noun]
    home = WILD_PLACES + SHARED_PLACES if is_animal else TOWN_PLACES + SHARED_PLACES

    if kind < 0.30:  # eating
        foods = ANIMAL_FOOD[pair[0]] if is_animal else FOODS
        return subject + ["come"] + _food(rng, foods) + ["en"] + _place(rng, home)
    if kind < 0.50:  # moving around
        return subject + [rng.choice(MOTION_VERBS), "en"] + _place(rng, home)
    if kind < 0.65:  # describing, with gender agreement
        pair_adj = rng.choice(ADJECTIVES)
        verb = "es" if pair_adj in TRAITS else "está"
        return subject + [verb, pair_adj[1 if feminine else 0]]
    if kind < 0.75:  # drinking
        drink = "leche" if not is_animal or pair[0] == "gato" else "agua"
        return subject + ["bebe", drink, "en"] + _place(rng, home)
    if kind < 0.87 and not is_animal:  # what only people do
        return subject + [rng.choice(PERSON_VERBS), "en"] + _place(rng, TOWN_PLACES)
    if kind < 0.93:  # the ambiguous word: a bench in the park ...
        return subject + ["descansa", "en", "el", "banco", "del", "parque"]
    # ... and a bank with money
    if is_animal:
        return subject + ["duerme", "en"] + _place(rng, home)
    if rng.random() < 0.5:
        return subject + ["guarda", "dinero", "en", "el", "banco"]
    return subject + ["saca", "dinero", "del", "banco"]


def generate_corpus(n_sentences: int = 6000, seed: int = 0) -> list[list[str]]:
    """Generate ``n_sentences`` Spanish sentences from the grammar, deterministically.

    The same ``(n_sentences, seed)`` always gives the same corpus, on every
    machine (it uses its own ``random.Random``, not the global generator).
    """
    n_sentences = checks.positive_int(n_sentences, "n_sentences (el número de frases)")
    rng = random.Random(checks.non_negative_int(seed, "seed (semilla)"))
    return [_sentence(rng) for _ in range(n_sentences)]


# ---------------------------------------------------------------------------
# Vocabulary and one-hot vectors
# ---------------------------------------------------------------------------


class UnknownWordError(KeyError, ValueError):
    """A word that is not in the vocabulary (a ``KeyError`` with a Spanish message).

    Also a ``ValueError``: like every refusal of a reader's input in the book."""

    def __str__(self) -> str:  # KeyError would print the message between quotes
        return str(self.args[0]) if self.args else ""


def tokenize(text: str) -> list[str]:
    """Split a sentence into lower-case words; punctuation is dropped.

    Raises:
        ValueError: ``text`` is not a string or has no words.
    """
    if not isinstance(text, str):
        raise ValueError(f"Se esperaba una frase (str); se recibió {type(text).__name__}.")
    cleaned = "".join(ch if ch.isalnum() or ch.isspace() else " " for ch in text.lower())
    words = cleaned.split()
    if not words:
        raise ValueError(
            "La frase está vacía: escribe al menos una palabra, p. ej. 'el gato come pescado'."
        )
    return words


@dataclass
class Vocabulary:
    """Words sorted by frequency (ties alphabetically), with their counts."""

    words: list[str]
    counts: list[int]
    _index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.words, (list, tuple)) or not all(isinstance(w, str) for w in self.words):
            raise TypeError(f"words debe ser una lista de palabras (textos); se recibió {self.words!r:.80}.")
        self.words = list(self.words)
        self.counts = checks.sequence(self.counts, "counts", checks.non_negative_int, minimum=0)
        if len(self.words) != len(self.counts):
            raise ValueError("words y counts deben tener la misma longitud.")
        # A repeated word would own two rows, and index() would silently pick the last one.
        repeated = sorted(w for w, n in Counter(self.words).items() if n > 1)
        if repeated:
            raise ValueError(f"words no puede repetir palabras (cada una es una fila de la matriz); se "
                             f"repiten: {', '.join(repeated[:5])}. Suma sus cuentas en una sola entrada.")
        self._index = {w: i for i, w in enumerate(self.words)}

    @classmethod
    def from_sentences(cls, sentences: list[list[str]]) -> Vocabulary:
        sentences = _sentences(sentences)
        counter = Counter(w for s in sentences for w in s)
        if not counter:
            raise ValueError("El corpus está vacío: no hay ninguna palabra con la que formar "
                             "el vocabulario.")
        ordered = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
        return cls([w for w, _ in ordered], [c for _, c in ordered])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self._index

    def index(self, word: str) -> int:
        """Row of ``word`` in the embedding matrix.

        Raises:
            UnknownWordError: the word is not in the vocabulary.
        """
        if not isinstance(word, str):
            raise TypeError(f"Una palabra debe ser un texto (str); se recibió "
                            f"{type(word).__name__}: {word!r:.60}.")
        try:
            return self._index[word]
        except KeyError:
            close = [w for w in self.words if w[:3] == str(word)[:3]][:3]
            hint = f" ¿Quizá quisiste decir {', '.join(close)}?" if close else ""
            raise UnknownWordError(
                f"La palabra {word!r} no está en el vocabulario ({len(self)} palabras, "
                f"p. ej. {', '.join(self.words[:5])}).{hint} La lista completa está en "
                "vocab.words."
            ) from None

    def encode(self, words: list[str]) -> list[int]:
        return [self.index(w) for w in _words(words)]


def _words(words) -> list[str]:
    """A list of words (a text is not: its letters are not words)."""
    if isinstance(words, str):
        raise TypeError(f"Se esperaba una lista de palabras; se recibió el texto {words!r:.60} "
                        "(para partir una frase en palabras usa tokenize).")
    if not isinstance(words, (list, tuple)) or not all(isinstance(w, str) for w in words):
        raise TypeError(f"Se esperaba una lista de palabras (textos); se recibió {words!r:.80}.")
    return list(words)


def _sentences(sentences) -> list[list[str]]:
    """A corpus: a list of sentences, each a list of words (as :func:`generate_corpus` returns)."""
    if isinstance(sentences, str) or not isinstance(sentences, (list, tuple)):
        raise TypeError("sentences debe ser una lista de frases, cada una una lista de palabras "
                        f"(como devuelve generate_corpus); se recibió {type(sentences).__name__}.")
    return [_words(s) for s in sentences]


def _vocabulary(vocab) -> Vocabulary:
    if not isinstance(vocab, Vocabulary):
        raise TypeError(f"vocab debe ser un Vocabulary (p. ej. Vocabulary.from_sentences(corpus)); "
                        f"se recibió {type(vocab).__name__}.")
    return vocab


def one_hot(words: list[str], vocab: Vocabulary) -> Tensor:
    """One-hot vectors of ``words``: shape ``(len(words), len(vocab))``."""
    words = _words(words)
    vocab = _vocabulary(vocab)
    if len(words) == 0:
        raise ValueError("La lista de palabras está vacía: se necesita al menos una.")
    idx = torch.tensor(vocab.encode(words))
    return nn.functional.one_hot(idx, num_classes=len(vocab)).float()


# ---------------------------------------------------------------------------
# Skip-gram with negative sampling
# ---------------------------------------------------------------------------


def skipgram_pairs(sentences: list[list[str]], vocab: Vocabulary, window: int = 2) -> Tensor:
    """(center, context) index pairs within ``window`` words: shape ``(n_pairs, 2)``."""
    window = checks.positive_int(window, "window (la ventana)")
    sentences = _sentences(sentences)
    vocab = _vocabulary(vocab)
    pairs = []
    for sentence in sentences:
        ids = vocab.encode(sentence)
        for i, center in enumerate(ids):
            for j in range(max(0, i - window), min(len(ids), i + window + 1)):
                if j != i:
                    pairs.append((center, ids[j]))
    if not pairs:
        raise ValueError("No hay pares (centro, contexto): las frases tienen una sola palabra.")
    return torch.tensor(pairs, dtype=torch.long)


class SkipGramNegativeSampling(nn.Module):
    """word2vec's skip-gram with negative sampling.

    Two tables of shape ``(V, d)``: ``center`` (the word vectors we keep) and
    ``context``. For a center word ``c``, a true context word ``o`` and
    negatives ``n_1..n_k``, the loss is
    ``-log σ(u_o·v_c) - Σ_j log σ(-u_{n_j}·v_c)``.
    """

    def __init__(self, vocab_size: int, dim: int):
        super().__init__()
        vocab_size = checks.positive_int(vocab_size, "vocab_size")
        dim = checks.positive_int(dim, "dim")
        self.center = nn.Embedding(vocab_size, dim)
        self.context = nn.Embedding(vocab_size, dim)
        nn.init.uniform_(self.center.weight, -0.5 / dim, 0.5 / dim)
        nn.init.zeros_(self.context.weight)

    def forward(self, center: Tensor, context: Tensor, negatives: Tensor) -> Tensor:
        """Mean loss. Shapes: center ``(B,)``, context ``(B,)``, negatives ``(B, k)``."""
        vocab = self.center.num_embeddings
        center = checks.ids(center, "center", vocab_size=vocab, like=self, ndim=1)
        context = checks.ids(context, "context", vocab_size=vocab, like=self, ndim=1)
        negatives = checks.ids(negatives, "negatives", vocab_size=vocab, like=self, ndim=2)
        if not (len(center) == len(context) == len(negatives)):
            raise ValueError(f"center, context y negatives deben tener el mismo número de filas; "
                             f"tienen {len(center)}, {len(context)} y {len(negatives)}.")
        v = self.center(center)  # (B, d)
        pos = (self.context(context) * v).sum(-1)  # (B,)
        neg = torch.einsum("bkd,bd->bk", self.context(negatives), v)  # (B, k)
        loss = -nn.functional.logsigmoid(pos) - nn.functional.logsigmoid(-neg).sum(-1)
        return loss.mean()


@dataclass
class Word2VecConfig:
    """Settings of a word2vec run: the same on every device.

    Raises:
        ValueError: a field that is not a positive integer (``lr``: a positive number).
    """

    dim: int = 16
    window: int = 4
    negatives: int = 5
    epochs: int = 4
    batch_size: int = 512
    lr: float = 0.01
    n_sentences: int = 6000

    def __post_init__(self) -> None:
        for name in ("dim", "window", "negatives", "epochs", "batch_size", "n_sentences"):
            setattr(self, name, checks.positive_int(getattr(self, name), name))
        self.lr = checks.positive_number(self.lr, "lr")


class WordVectors:
    """Trained word vectors with look-ups, neighbours and analogies.

    ``vectors`` has shape ``(V, d)`` (on the CPU); row ``i`` belongs to
    ``vocab.words[i]``.
    """

    def __init__(self, vocab: Vocabulary, vectors: Tensor, losses: list[float] | None = None,
                 seconds: float = 0.0):
        vocab = _vocabulary(vocab)
        vectors = checks.features(vectors, "vectors", finite=True)
        if vectors.ndim != 2 or vectors.shape[0] != len(vocab):
            raise ValueError(
                f"Se esperaba una matriz de forma ({len(vocab)}, d); "
                f"se recibió {tuple(vectors.shape)}."
            )
        self.vocab = vocab
        self.vectors = vectors.detach().float().cpu()
        self.losses = [] if losses is None else checks.sequence(losses, "losses", checks.real, minimum=0)
        self.seconds = checks.non_negative_number(seconds, "seconds")

    @property
    def dim(self) -> int:
        return self.vectors.shape[1]

    def __getitem__(self, word: str) -> Tensor:
        return self.vectors[self.vocab.index(word)]

    def matrix(self, words: list[str] | str) -> Tensor:
        """Stack the vectors of ``words`` (a list or a sentence): shape ``(n, d)``."""
        if isinstance(words, str):
            words = tokenize(words)
        words = _words(words)
        if len(words) == 0:
            raise ValueError("La frase está vacía: se necesita al menos una palabra.")
        return self.vectors[torch.tensor(self.vocab.encode(words))]

    def _unit(self) -> Tensor:
        return self.vectors / self.vectors.norm(dim=1, keepdim=True).clamp_min(1e-12)

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of two words."""
        u, v = self[a], self[b]
        return float(u @ v / (u.norm() * v.norm()).clamp_min(1e-12))

    def nearest(self, query: str | Tensor, k: int = 5,
                exclude: tuple[str, ...] | list[str] = ()) -> list[tuple[str, float]]:
        """The ``k`` words with highest cosine similarity to ``query`` (a word or a vector).

        A word query is excluded from its own neighbours. ``k`` larger than the
        words left (the vocabulary less the excluded ones) is refused rather
        than silently answered with fewer.
        """
        k = checks.positive_int(k, "k")
        exclude = _words(exclude)
        if isinstance(query, str):
            exclude = [*exclude, query]
            query = self[query]
        query = checks.features(query, "query (la consulta)", dtype=torch.float32, finite=True)
        if query.shape != (self.dim,):
            raise ValueError(
                f"El vector de consulta debe tener {self.dim} dimensiones; "
                f"tiene forma {tuple(query.shape)}."
            )
        for word in exclude:
            self.vocab.index(word)  # unknown words raise a clear error
        sims = self._unit() @ (query / query.norm().clamp_min(1e-12))
        banned = {self.vocab.index(w) for w in exclude}
        available = len(self.vocab) - len(banned)
        if k > available:
            raise ValueError(f"k ({k}) es mayor que las palabras que se pueden dar ({available}: "
                             f"{len(self.vocab)} del vocabulario menos {len(banned)} excluidas); "
                             f"usa k ≤ {available}.")
        order = [int(i) for i in torch.argsort(sims, descending=True) if int(i) not in banned]
        return [(self.vocab.words[i], float(sims[i])) for i in order[:k]]

    def analogy(self, a: str, b: str, c: str, k: int = 1) -> list[tuple[str, float]]:
        """«a es a b como c es a ?»: nearest words to ``b - a + c`` (excluding a, b, c)."""
        target = self[b] - self[a] + self[c]
        return self.nearest(target, k=k, exclude=(a, b, c))


def train_word2vec(
    sentences: list[list[str]] | None = None,
    config: Word2VecConfig | None = None,
    seed: int = 0,
    device: torch.device | str | None = None,
) -> WordVectors:
    """Train skip-gram with negative sampling and return the center vectors.

    ``sentences`` defaults to :func:`generate_corpus` with ``config.n_sentences``;
    ``config`` to :class:`Word2VecConfig` (the same on every device). Seeded through
    :func:`dldna.runtime.seed_everything`, so a CPU run is reproducible.
    """
    dev = checks.device(device)
    seed = checks.non_negative_int(seed, "seed (semilla)")
    if sentences is not None:
        sentences = _sentences(sentences)
    if config is not None and not isinstance(config, Word2VecConfig):
        raise TypeError(f"config debe ser un Word2VecConfig; se recibió {type(config).__name__}.")
    cfg = config or Word2VecConfig()
    if sentences is None:
        sentences = generate_corpus(cfg.n_sentences, seed=seed)
    # One thread on a CPU: the same numbers on every machine, whatever its core count. With
    # batches this tiny it costs nothing (measured on 2 cores: 1.8 s with one thread, 1.9 s with two).
    threads = torch.get_num_threads()
    if dev.type == "cpu":
        torch.set_num_threads(1)
    try:
        return _train(sentences, cfg, seed, dev)
    finally:
        torch.set_num_threads(threads)


def _train(sentences: list[list[str]], cfg: Word2VecConfig, seed: int,
           dev: torch.device) -> WordVectors:
    runtime.seed_everything(seed)
    start = time.perf_counter()
    vocab = Vocabulary.from_sentences(sentences)
    pairs = skipgram_pairs(sentences, vocab, cfg.window).to(dev)
    noise = torch.tensor(vocab.counts, dtype=torch.float) ** 0.75
    noise = (noise / noise.sum()).to(dev)
    model = SkipGramNegativeSampling(len(vocab), cfg.dim).to(dev)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    generator = torch.Generator(device="cpu").manual_seed(seed)
    losses = []
    for _ in range(cfg.epochs):
        order = torch.randperm(len(pairs), generator=generator).to(dev)
        total, batches = 0.0, 0
        for start_i in range(0, len(pairs), cfg.batch_size):
            batch = pairs[order[start_i:start_i + cfg.batch_size]]
            negatives = torch.multinomial(
                noise, batch.shape[0] * cfg.negatives, replacement=True
            ).view(batch.shape[0], cfg.negatives)
            loss = model(batch[:, 0], batch[:, 1], negatives)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach())
            batches += 1
        losses.append(total / batches)
    return WordVectors(vocab, model.center.weight, losses, time.perf_counter() - start)


def _matrix(vectors) -> Tensor:
    """``vectors`` as a float64 ``(n, d)`` matrix with n, d ≥ 2, finite, not all rows equal."""
    x = checks.features(vectors, "Los vectores", dtype=torch.float64, finite=True)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        raise ValueError(
            f"Se esperaba una matriz (n, d) con n ≥ 2 y d ≥ 2; se recibió {tuple(x.shape)}."
        )
    if bool((x == x[0]).all()):
        raise ValueError("Todas las filas son iguales: no hay varianza que proyectar en dos ejes "
                         "(hacen falta al menos dos vectores distintos).")
    return x


def pca_2d(vectors: Tensor) -> tuple[Tensor, float]:
    """Project rows onto their first two principal components.

    Returns ``(coords, explained)``: coordinates of shape ``(n, 2)`` and the
    fraction of the variance the two components keep. The sign of each axis is
    fixed (its largest coordinate positive) so the picture is reproducible.
    The projection is an affine map, so it keeps weighted averages: the
    projection of a convex combination is the same combination of projections.
    """
    x = _matrix(vectors)
    centered = x - x.mean(0)
    _, s, vt = torch.linalg.svd(centered, full_matrices=False)
    axes = vt[:2]
    signs = torch.sign(axes[torch.arange(2), axes.abs().argmax(1)])
    axes = axes * signs[:, None]
    explained = float((s[:2] ** 2).sum() / (s**2).sum())
    return (centered @ axes.T).float(), explained


def projector_2d(vectors: Tensor):
    """Fit :func:`pca_2d` on ``vectors`` and return a function that projects new rows."""
    x = _matrix(vectors)
    mean = x.mean(0)
    _, _, vt = torch.linalg.svd(x - mean, full_matrices=False)
    axes = vt[:2]
    axes = axes * torch.sign(axes[torch.arange(2), axes.abs().argmax(1)])[:, None]

    def project(rows: Tensor) -> Tensor:
        rows = checks.features(rows, "Los vectores", dtype=torch.float64, finite=True)
        if rows.dim() == 0 or rows.shape[-1] != x.shape[1]:
            raise ValueError(
                f"Los vectores deben tener {x.shape[1]} dimensiones; tienen {rows.shape[-1]}."
            )
        return ((rows - mean) @ axes.T).float()

    return project


def category_of(word: str) -> str:
    """Semantic group of a word of the grammar ('función' for articles and the like)."""
    checks.text(word, "word (la palabra)")
    return CATEGORIES.get(word, "función")


__all__ = [
    "CATEGORIES", "UnknownWordError", "Vocabulary", "SkipGramNegativeSampling",
    "Word2VecConfig", "WordVectors", "category_of", "generate_corpus",
    "one_hot", "pca_2d", "projector_2d", "skipgram_pairs", "tokenize", "train_word2vec",
]

"""A tiny GRU encoder-decoder, with or without Bahdanau's additive attention.

Chapter 1 trains both to reverse digit strings and compares them as the
strings grow (Sutskever et al., 2014; Bahdanau et al., 2015): without
attention the decoder sees the source only through the encoder's last state,
a vector of ``hidden`` numbers; with attention, at each step ``t`` it scores
every encoder state ``h_k`` against its previous state ``s_{t-1}``,
``e_{t,k} = vᵀ tanh(W_s s_{t-1} + W_h h_k + b)``, and reads the average
``c_t = Σ_k α_{t,k} h_k``.

Shapes (batch first): ``src`` ``(B, S)`` and ``tgt`` ``(B, T)`` of token ids;
logits ``(B, T, V)``; attention weights ``(B, T, S)``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from dldna import checks, runtime
from dldna.attention import AdditiveScore
from dldna.training import train_steps

#: Digits 0-9 are their own ids; the decoder starts from ``BOS``.
BOS = 10
VOCAB_SIZE = 11


class GRUSeq2Seq(nn.Module):
    """GRU encoder and GRU-cell decoder; ``attention=True`` adds Bahdanau's additive score.

    Without attention the decoder starts from the encoder's last state and
    never sees the source again; with attention its input at step ``t`` is
    ``[embedding(y_{t-1}); c_t]`` and the output layer reads ``[s_t; c_t]``.
    """

    def __init__(self, hidden: int = 32, attention: bool = True, vocab_size: int = VOCAB_SIZE):
        super().__init__()
        self.hidden = checks.positive_int(hidden, "hidden")
        self.vocab_size = checks.positive_int(vocab_size, "vocab_size", minimum=2)
        self.attention = checks.boolean(attention, "attention")
        self.embed = nn.Embedding(self.vocab_size, self.hidden)
        # Bidirectional, as in Bahdanau et al.: each state knows both ends of the
        # string. Half the units per direction keeps ``hidden`` numbers per state.
        if self.hidden % 2:
            raise ValueError(f"hidden debe ser par (mitad por dirección); se recibió {hidden}.")
        self.encoder = nn.GRU(self.hidden, self.hidden // 2, batch_first=True, bidirectional=True)
        extra = self.hidden if self.attention else 0
        self.decoder = nn.GRUCell(self.hidden + extra, self.hidden)
        self.score = AdditiveScore(self.hidden) if self.attention else None
        self.out = nn.Linear(self.hidden + extra, self.vocab_size)

    def _encode(self, src: Tensor) -> tuple[Tensor, Tensor]:
        states, last = self.encoder(self.embed(src))  # (B, S, H), (2, B, H/2)
        return states, torch.cat([last[0], last[1]], -1)  # the bottleneck: H numbers in all

    def _step(self, token: Tensor, s: Tensor, states: Tensor) -> tuple[Tensor, Tensor, Tensor | None]:
        """One decoder step from ``s = s_{t-1}``: logits ``(B, V)``, ``s_t`` and weights ``(B, S)``."""
        x = self.embed(token)
        if self.score is None:
            s = self.decoder(x, s)
            return self.out(s), s, None
        alpha = torch.softmax(self.score(s[:, None], states)[:, 0], dim=-1)  # scored with s_{t-1}
        context = (alpha[:, :, None] * states).sum(1)
        s = self.decoder(torch.cat([x, context], -1), s)
        return self.out(torch.cat([s, context], -1)), s, alpha

    def forward(self, src: Tensor, tgt_in: Tensor) -> tuple[Tensor, Tensor | None]:
        """Teacher-forced logits ``(B, T, V)`` and attention weights ``(B, T, S)`` (or ``None``).

        ``tgt_in`` is the target shifted right: ``BOS`` then the first ``T-1`` tokens.
        """
        src = checks.ids(src, "src", vocab_size=self.vocab_size, like=self, ndim=2)
        tgt_in = checks.ids(tgt_in, "tgt_in", vocab_size=self.vocab_size, like=self, ndim=2)
        if len(src) != len(tgt_in) or 0 in src.shape or 0 in tgt_in.shape:
            raise ValueError(f"src {tuple(src.shape)} y tgt_in {tuple(tgt_in.shape)} deben tener las mismas "
                             "frases (la primera dimensión) y al menos un tóken cada una.")
        states, s = self._encode(src)
        logits, weights = [], []
        for t in range(tgt_in.shape[1]):
            step_logits, s, alpha = self._step(tgt_in[:, t], s, states)
            logits.append(step_logits)
            if alpha is not None:
                weights.append(alpha)
        return torch.stack(logits, 1), (torch.stack(weights, 1) if weights else None)

    @torch.no_grad()
    def generate(self, src: Tensor, length: int) -> tuple[Tensor, Tensor | None]:
        """Greedy decoding of ``length`` tokens: ids ``(B, length)`` and weights ``(B, length, S)``."""
        length = checks.positive_int(length, "length")
        src = checks.ids(src, "src", vocab_size=self.vocab_size, like=self, ndim=2)
        if 0 in src.shape:
            raise ValueError(f"src debe tener al menos una frase con un tóken; "
                             f"tiene forma {tuple(src.shape)}.")
        states, s = self._encode(src)
        token = torch.full((src.shape[0],), BOS, dtype=torch.long, device=src.device)
        out, weights = [], []
        for _ in range(length):
            logits, s, alpha = self._step(token, s, states)
            token = logits.argmax(-1)
            out.append(token)
            if alpha is not None:
                weights.append(alpha)
        return torch.stack(out, 1), (torch.stack(weights, 1) if weights else None)


def reversal_batch(batch_size: int, length: int, rng: random.Random) -> tuple[Tensor, Tensor]:
    """Random digit strings ``(B, length)`` and their reversals ``(B, length)``."""
    batch_size = checks.positive_int(batch_size, "batch_size")
    length = checks.positive_int(length, "length")
    checks.rng(rng)
    src = torch.tensor([[rng.randrange(10) for _ in range(length)] for _ in range(batch_size)])
    return src, src.flip(1)


def _loss(model: GRUSeq2Seq, batch: tuple[Tensor, Tensor]) -> Tensor:
    src, tgt = batch
    tgt_in = torch.cat([torch.full_like(tgt[:, :1], BOS), tgt[:, :-1]], 1)
    logits, _ = model(src, tgt_in)
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1))


@dataclass
class ReversalResult:
    """A trained model and its digit accuracy on fresh strings of each length."""

    model: GRUSeq2Seq
    accuracy: dict[int, float]
    losses: list[float]


def train_reversal(attention: bool, *, lengths: tuple[int, ...] = (4, 8, 12, 16),
                   hidden: int = 32, steps: int = 300, batch_size: int = 32, lr: float = 0.01,
                   seed: int = 0, test_size: int = 200) -> ReversalResult:
    """Train a :class:`GRUSeq2Seq` to reverse digit strings and measure it per length.

    Every step draws a batch of one length, cycling through ``lengths``; the
    accuracy is the fraction of digits right under greedy decoding on
    ``test_size`` fresh strings of each length. Runs on the CPU (the model is
    tiny: its steps are bound by Python, not arithmetic) with one thread, so
    the numbers are the same on every machine.
    """
    if isinstance(lengths, (str, bytes)) or not hasattr(lengths, "__len__") or not lengths:
        raise ValueError(
            f"lengths debe ser una lista no vacía de enteros positivos; se recibió {lengths!r}.")
    lengths = tuple(checks.positive_int(n, "cada longitud de lengths") for n in lengths)
    steps = checks.positive_int(steps, "steps")
    lr = checks.positive_number(lr, "lr")
    batch_size = checks.positive_int(batch_size, "batch_size")
    test_size = checks.positive_int(test_size, "test_size")
    runtime.seed_everything(seed)
    rng = random.Random(seed)
    model = GRUSeq2Seq(hidden, attention)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        history = train_steps(
            model, lambda step: reversal_batch(batch_size, lengths[step % len(lengths)], rng),
            optimizer, steps=steps, loss_fn=_loss, grad_clip=1.0)
        model.eval()
        test_rng = random.Random(10_000 + seed)
        accuracy = {}
        for n in lengths:
            src, tgt = reversal_batch(test_size, n, test_rng)
            pred, _ = model.generate(src, n)
            accuracy[n] = float((pred == tgt).float().mean())
    finally:
        torch.set_num_threads(threads)
    return ReversalResult(model, accuracy, history.loss)


__all__ = ["BOS", "VOCAB_SIZE", "GRUSeq2Seq", "ReversalResult", "reversal_batch", "train_reversal"]

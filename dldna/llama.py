"""The Llama block (Touvron et al., 2023), built from the book's pieces, and its map to Hugging Face.

What changes from the GPT block of chapter 9 (:class:`dldna.language_models.LanguageModel`):

* :class:`RMSNorm` (Zhang & Sennrich, 2019) instead of LayerNorm: no mean is
  subtracted and there is no bias, ``x / √(mean(x²) + ε) · g``;
* :class:`SwiGLU` (Shazeer, 2020) instead of the ReLU network: three matrices,
  ``down(silu(gate(x)) ⊙ up(x))``, of width :func:`swiglu_width` so that the
  parameters match the two-matrix network it replaces;
* RoPE (:class:`dldna.positional.RotaryEmbedding`) inside every attention
  instead of a learned table added to the embeddings;
* no biases in any linear layer; optionally grouped-query attention
  (``num_kv_heads``).

Pre-norm and the residual connections are those of chapter 6's Pre-LN layer:
``x + attn(norm(x))``, ``x + mlp(norm(x))``, and one norm at the end.

The modules carry the names of the Hugging Face implementation
(``transformers.LlamaForCausalLM``): ``embed_tokens``, ``layers.i.input_layernorm``,
``self_attn.q_proj`` … ``mlp.down_proj``, ``norm``, ``lm_head``. :func:`hf_state_dict`
gives the book's weights under those names (and in its order of RoPE's pairs)
and :func:`hf_config` the arguments of ``transformers.LlamaConfig``: a randomly
initialised ``LlamaForCausalLM`` that loads them computes the same logits. This
module does not import ``transformers``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from dldna import checks, masking
from dldna.attention import MultiHeadAttention, _check_heads, _check_kv_heads
from dldna.positional import RotaryEmbedding
from dldna.tasks.base import PAD_ID

__all__ = ["RMSNorm", "SwiGLU", "swiglu_width", "LlamaBlock", "LlamaLM", "hf_state_dict", "hf_config",
           "hf_names"]

#: Standard deviation of every weight at initialisation, as ``LlamaConfig.initializer_range``.
INIT_STD = 0.02


class RMSNorm(nn.Module):
    """Root-mean-square normalisation (Zhang & Sennrich, 2019): ``x / √(mean(x²) + eps) · weight``.

    Unlike LayerNorm it neither subtracts the mean nor adds a bias: it only
    rescales each vector to a root mean square of 1, then multiplies each
    feature by its learned gain. Computed in float32 at least, as
    ``torch.nn.RMSNorm`` and Hugging Face's ``LlamaRMSNorm`` (same numbers).

    Shapes: ``(..., d_model)`` → ``(..., d_model)``.
    """

    def __init__(self, d_model: int, eps: float = 1e-6):
        super().__init__()
        self.d_model = checks.positive_int(d_model, "d_model")
        self.eps = checks.positive_number(eps, "eps")
        self.weight = nn.Parameter(torch.ones(self.d_model))

    def extra_repr(self) -> str:
        return f"{self.d_model}, eps={self.eps:g}"

    def forward(self, x: Tensor) -> Tensor:
        x = checks.features(x, "x", like=self)
        if x.dim() == 0 or x.shape[-1] != self.d_model:
            raise ValueError(f"x debe terminar en d_model={self.d_model} rasgos; "
                             f"tiene forma {tuple(x.shape)}.")
        wide = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        normed = wide * torch.rsqrt(wide.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * normed.to(x.dtype)


def swiglu_width(d_ff: int) -> int:
    """The hidden width of a :class:`SwiGLU` with the parameters of a two-matrix network of width ``d_ff``.

    Two matrices ``d × d_ff`` hold ``2·d·d_ff`` weights; three ``d × h`` hold
    ``3·d·h``: equal when ``h = 2·d_ff/3`` (``8d/3`` for the usual ``d_ff = 4d``),
    rounded to the nearest integer.
    """
    return max(1, round(2 * checks.positive_int(d_ff, "d_ff") / 3))


class SwiGLU(nn.Module):
    """Gated feed-forward network (Shazeer, 2020): ``down_proj(silu(gate_proj(x)) ⊙ up_proj(x))``.

    ``silu(z) = z·σ(z)``. One branch decides, feature by feature, how much of
    the other passes: a gate learned from the input. No biases.

    Shapes: ``(..., d_model)`` → ``(..., d_model)``; hidden ``(..., d_hidden)``.
    """

    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        d_model = checks.positive_int(d_model, "d_model")
        d_hidden = checks.positive_int(d_hidden, "d_hidden")
        self.gate_proj = nn.Linear(d_model, d_hidden, bias=False)
        self.up_proj = nn.Linear(d_model, d_hidden, bias=False)
        self.down_proj = nn.Linear(d_hidden, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        x = checks.features(x, "x", like=self)
        if x.dim() == 0 or x.shape[-1] != self.gate_proj.in_features:
            raise ValueError(f"x debe terminar en d_model={self.gate_proj.in_features} rasgos; "
                             f"tiene forma {tuple(x.shape)}.")
        return checks.no_overflow(self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x)), "SwiGLU")


class LlamaBlock(nn.Module):
    """One Llama layer: ``x + attn(rmsnorm(x))``, then ``x + swiglu(rmsnorm(x))``.

    The attention is :class:`~dldna.attention.MultiHeadAttention` without
    biases (``num_kv_heads`` for grouped-query attention); ``rotary`` (RoPE)
    turns its queries and keys. In training mode it runs PyTorch's fused
    kernel (no weights kept).

    Shapes: x ``(batch, seq, d_model)``; mask boolean broadcastable to
    ``(batch, heads, seq, seq)``, ``True`` = may attend → ``(batch, seq, d_model)``.
    """

    def __init__(self, d_model: int, n_heads: int, d_hidden: int, *, num_kv_heads: int | None = None,
                 eps: float = 1e-6):
        super().__init__()
        self.input_layernorm = RMSNorm(d_model, eps)
        self.self_attn = MultiHeadAttention(d_model, n_heads, bias=False, num_kv_heads=num_kv_heads)
        self.post_attention_layernorm = RMSNorm(d_model, eps)
        self.mlp = SwiGLU(d_model, d_hidden)

    def forward(self, x: Tensor, mask: Tensor | None = None, rotary: RotaryEmbedding | None = None) -> Tensor:
        x = checks.features(x, "x", like=self, ndim=3, what="(batch, seq, d_model)", finite=True)
        h, _ = self.self_attn(self.input_layernorm(x), mask=mask, rotary=rotary,
                              need_weights=not self.training)
        x = x + h
        return checks.no_overflow(x + self.mlp(self.post_attention_layernorm(x)), "La capa Llama")


class LlamaLM(nn.Module):
    """A small decoder-only language model with Llama blocks, a drop-in for chapter 9's GPT.

    Args:
        vocab: vocabulary size (PAD is ``0``, as in :mod:`dldna.tasks`).
        d_model, n_heads, n_layers, num_kv_heads: as in
            :class:`~dldna.language_models.LanguageModel`.
        d_ff: the width of the ReLU network this model is compared with; the
            SwiGLU gets :func:`swiglu_width` ``(d_ff)`` so the parameters match.
        rope_base: RoPE's base (``rope_theta`` in Hugging Face).
        eps: RMSNorm's ε (``rms_norm_eps``).
        causal: only ``True``: the model predicts the next token.

    The output layer reuses the embedding matrix (tied, as in GPT-2 and the
    small Llamas). ``init_std``: every weight starts from a normal of this
    standard deviation (default :data:`INIT_STD`, 0.02, the initialisation of
    ``LlamaForCausalLM``); ``None`` keeps PyTorch's default for the linear
    layers and gives the embeddings a standard deviation ``1/√d_model``, the
    scales of chapter 9's GPT. The gains of RMSNorm start at 1.

    Shapes: ids ``(batch, seq)`` → logits ``(batch, seq, vocab)``; any length
    (RoPE has no table).
    """

    def __init__(self, vocab: int, *, d_model: int = 64, n_heads: int = 4, n_layers: int = 2,
                 d_ff: int = 128, num_kv_heads: int | None = None, rope_base: float = 10000.0,
                 eps: float = 1e-6, init_std: float | None = INIT_STD, causal: bool = True):
        super().__init__()
        self.vocab = checks.positive_int(vocab, "vocab", minimum=4)
        if causal is not True:
            raise ValueError("LlamaLM solo predice el siguiente tóken: causal debe ser True.")
        d_k = _check_heads(d_model, n_heads, "n_heads")
        num_kv_heads = _check_kv_heads(n_heads, num_kv_heads, "n_heads")
        n_layers = checks.positive_int(n_layers, "n_layers")
        self.d_hidden = swiglu_width(d_ff)
        self.embed_tokens = nn.Embedding(self.vocab, d_model, padding_idx=PAD_ID)
        self.rotary = RotaryEmbedding(d_k, rope_base)
        self.layers = nn.ModuleList(
            LlamaBlock(d_model, n_heads, self.d_hidden, num_kv_heads=num_kv_heads, eps=eps)
            for _ in range(n_layers))
        self.norm = RMSNorm(d_model, eps)
        self.lm_head = nn.Linear(d_model, self.vocab, bias=False)
        self.lm_head.weight = self.embed_tokens.weight
        if init_std is None:
            nn.init.normal_(self.embed_tokens.weight, std=d_model ** -0.5)
        else:
            init_std = checks.positive_number(init_std, "init_std")
            for module in self.modules():
                if isinstance(module, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(module.weight, std=init_std)
        with torch.no_grad():
            self.embed_tokens.weight[PAD_ID].zero_()

    def forward(self, ids: Tensor) -> Tensor:
        ids = checks.ids(ids, "ids", vocab_size=self.vocab, like=self.embed_tokens.weight, ndim=2)
        mask = masking.combine(masking.padding_mask(token_ids=ids, pad_id=PAD_ID),
                               masking.causal_mask(ids.shape[1], device=ids.device))
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x, mask, self.rotary)
        return self.lm_head(self.norm(x))


def _check_model(model) -> LlamaLM:
    if not isinstance(model, LlamaLM):
        raise TypeError(f"Se esperaba un dldna.llama.LlamaLM; se recibió {type(model).__name__}.")
    return model


def _half_split(weight: Tensor, heads: int) -> Tensor:
    """Rows of a query or key projection reordered from the book's RoPE pairs to Hugging Face's.

    The book turns the pairs of columns ``(2i, 2i+1)`` of each head;
    ``LlamaForCausalLM`` turns ``(i, i + d_k/2)`` (its ``rotate_half``). Putting
    the even rows of each head first and the odd ones after makes one the
    other; queries and keys reordered alike leave every dot product unchanged.
    """
    d_k = weight.shape[0] // heads
    per_head = weight.reshape(heads, d_k, -1)
    return torch.cat([per_head[:, 0::2], per_head[:, 1::2]], dim=1).reshape(weight.shape)


def hf_names(model: LlamaLM) -> list[tuple[str, str]]:
    """``(book name, Hugging Face name)`` of every weight of ``model``, in the model's order.

    Everything but the output layer sits under ``model.``; the attention's
    output projection is ``out_proj`` in the book (as in ``nn.MultiheadAttention``)
    and ``o_proj`` in Llama. The output layer is tied to the embeddings, so it
    appears once, as ``embed_tokens``.
    """
    names = []
    for name in _check_model(model).state_dict():
        hf = name.replace("self_attn.out_proj", "self_attn.o_proj")
        names.append((name, hf if name.startswith("lm_head") else f"model.{hf}"))
    return [(book, hf) for book, hf in names if book != "lm_head.weight"]


@torch.no_grad()
def hf_state_dict(model: LlamaLM) -> dict[str, Tensor]:
    """The weights of ``model`` under the names of ``transformers.LlamaForCausalLM`` (see :func:`hf_names`).

    The rows of ``q_proj`` and ``k_proj`` are reordered for Hugging Face's
    pairing of RoPE's dimensions; everything else is copied as it is. The tied
    output layer is included as ``lm_head.weight``.
    """
    weights = _check_model(model).state_dict()
    first = model.layers[0].self_attn
    heads = {"q_proj": first.num_heads, "k_proj": first.num_kv_heads}
    out = {}
    for book, hf in hf_names(model):
        w = weights[book].detach().clone()
        kind = book.split(".")[-2]
        out[hf] = _half_split(w, heads[kind]) if kind in heads else w
    out["lm_head.weight"] = out["model.embed_tokens.weight"]
    return out


def hf_config(model: LlamaLM) -> dict:
    """Keyword arguments of ``transformers.LlamaConfig`` (version 5) for the same model."""
    model = _check_model(model)
    attn = model.layers[0].self_attn
    return {
        "vocab_size": model.vocab, "hidden_size": attn.d_model, "intermediate_size": model.d_hidden,
        "num_hidden_layers": len(model.layers), "num_attention_heads": attn.num_heads,
        "num_key_value_heads": attn.num_kv_heads, "head_dim": attn.d_k, "hidden_act": "silu",
        "rms_norm_eps": model.norm.eps, "tie_word_embeddings": True, "attention_bias": False,
        "mlp_bias": False, "pad_token_id": PAD_ID,
        "rope_parameters": {"rope_type": "default", "rope_theta": model.rotary.base},
    }

"""Draw dldna/diagrams/bloque_llama.svg: chapter 9's GPT block next to the Llama block.

    python figures/bloque_llama.py

Read from bottom to top. Left, the GPT of chapter 9
(:class:`dldna.language_models.LanguageModel`): token embedding × √d_model
plus a learned table of positions, N Pre-LN layers of [LayerNorm → causal
multi-head attention with biases → +] and [LayerNorm → linear d→d_ff, ReLU,
linear d_ff→d, with biases → +], a final LayerNorm and an output layer tied
to the embeddings. Right, the Llama block (:class:`dldna.llama.LlamaLM`): the
embeddings alone, RMSNorm, attention without biases whose queries and keys
are turned by RoPE inside it (and that may keep fewer key/value heads), the
SwiGLU network ``down_proj(silu(gate_proj(x)) ⊙ up_proj(x))``, the same
pre-norm residuals, a final RMSNorm and the tied ``lm_head``. The names of
the Hugging Face modules (``input_layernorm``, ``self_attn.q_proj`` …) are
written in small type beside the Llama boxes, and what differs from GPT has
a vermillion border. Both columns share their rows, so that each piece sits
beside the one it replaces. The SVG is reproducible (no date, fixed id salt).
"""

from __future__ import annotations

from common import save
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

ATTN = "#56B4E9"      # sky blue: attention
FF = "#E69F00"        # orange: feed-forward network
NORM = "#e8e8e8"      # grey: normalisation
EMB = "#009E73"       # bluish green: embeddings
OUT = "#CC79A7"       # reddish purple: output layer
POS = "#F0E442"       # yellow: positions (the learned table, RoPE)
CHANGED = "#D55E00"   # vermillion: what the Llama block changes
NAME = "#0072B2"      # blue: Hugging Face's module names
LINE = "#333333"
W = 3.3               # width of a column's boxes
GPT_X, LLAMA_X = 2.75, 7.95


def box(ax, cx, y, text, color, h=0.4, w=W, fontsize=9, changed=False, alpha=0.9):
    """A rounded box from ``y`` to ``y + h`` centred on ``cx``; returns its top."""
    ax.add_patch(FancyBboxPatch((cx - w / 2, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.07",
                                facecolor=color, alpha=alpha, linewidth=2.4 if changed else 0.9,
                                edgecolor=CHANGED if changed else "black"))
    ax.text(cx, y + h / 2, text, ha="center", va="center", fontsize=fontsize)
    return y + h


def arrow(ax, start, end, color=LINE, lw=1.1):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, color=color,
                                 linewidth=lw, shrinkA=0, shrinkB=0))


def plus(ax, cx, y, r=0.15, sign="+"):
    ax.add_patch(Circle((cx, y), r, facecolor="white", edgecolor="black", linewidth=1))
    ax.text(cx, y - 0.01, sign, ha="center", va="center", fontsize=10 if sign == "+" else 9)


def name(ax, x, y, text):
    """A Hugging Face module name, small, beside a Llama box."""
    ax.text(x, y, text, ha="left", va="center", fontsize=7.5, family="monospace", color=NAME)


def residual(ax, cx, y0, plus_y, side_x):
    """The residual path: from below the norm, round the side, into the (+)."""
    ax.plot([cx, side_x, side_x], [y0, y0, plus_y], color="#555555", linewidth=1.0)
    direction = 1 if side_x < cx else -1
    arrow(ax, (side_x, plus_y), (cx - direction * 0.15, plus_y), color="#555555", lw=1.0)


# ---------------------------------------------------------------------- rows
# Bottom of each row, shared by the two columns.
Y_TOKENS, Y_EMB, Y_POS, Y_STACK = 0.0, 0.35, 1.05, 1.75
H_NORM, H_ATTN, H_FF = 0.36, 2.05, 2.0
GAP = 0.2


def gpt_column(ax) -> dict:
    cx = GPT_X
    ax.text(cx, Y_TOKENS - 0.05, "tókenes (batch, T)", ha="center", va="center", fontsize=9)
    arrow(ax, (cx, Y_TOKENS + 0.12), (cx, Y_EMB))
    y = box(ax, cx, Y_EMB, "incrustación × √d_model", EMB)
    arrow(ax, (cx, y), (cx, Y_POS + 0.2 - 0.15))
    plus(ax, cx, Y_POS + 0.2)
    box(ax, cx + 1.1, Y_POS + 0.02, "posiciones aprendidas\n(tabla max_len × d)", POS, h=0.38, w=1.75,
        fontsize=7.5)
    arrow(ax, (cx + 1.1 - 0.875, Y_POS + 0.2), (cx + 0.15, Y_POS + 0.2))
    arrow(ax, (cx, Y_POS + 0.35), (cx, Y_STACK))
    side = cx - W / 2 - 0.25
    y = layer(ax, cx, Y_STACK, side, "LayerNorm", attention=gpt_attention, ff=gpt_ff)
    return {"top": y, "side": side}


def llama_column(ax) -> dict:
    cx = LLAMA_X
    right = cx + W / 2 + 0.12
    ax.text(cx, Y_TOKENS - 0.05, "tókenes (batch, T)", ha="center", va="center", fontsize=9)
    arrow(ax, (cx, Y_TOKENS + 0.12), (cx, Y_EMB))
    y = box(ax, cx, Y_EMB, "incrustación (sin × √d_model)", EMB, changed=True)
    name(ax, right, Y_EMB + 0.2, "model.embed_tokens")
    ax.text(cx + 0.12, Y_POS + 0.2, "sin tabla de posiciones:\nRoPE dentro de la atención",
            ha="left", va="center", fontsize=7.5, color=CHANGED)
    arrow(ax, (cx, y), (cx, Y_STACK))
    side = cx - W / 2 - 0.25
    y = layer(ax, cx, Y_STACK, side, "RMSNorm", attention=llama_attention, ff=llama_ff,
              names=("input_layernorm", "post_attention_layernorm"), changed_norm=True)
    return {"top": y, "side": side}


def layer(ax, cx, y0, side, norm, *, attention, ff, names=None, changed_norm=False) -> float:
    """One Pre-norm layer (two sub-layers with residuals) inside a dashed «N ×» frame."""
    bottom = y0
    y = y0 + 0.12
    for k, (body, h) in enumerate(((attention, H_ATTN), (ff, H_FF))):
        start = y
        arrow(ax, (cx, y), (cx, y + GAP))
        top = box(ax, cx, y + GAP, norm, NORM, h=H_NORM, fontsize=8.5, changed=changed_norm)
        if names:
            name(ax, cx + W / 2 + 0.12, y + GAP + H_NORM / 2, names[k])
        arrow(ax, (cx, top), (cx, top + GAP))
        top = body(ax, cx, top + GAP, h)
        arrow(ax, (cx, top), (cx, top + GAP))
        plus_y = top + GAP + 0.15
        plus(ax, cx, plus_y)
        residual(ax, cx, start + 0.08, plus_y, side)
        y = plus_y + 0.15
    top = y + 0.1
    ax.add_patch(FancyBboxPatch((cx - W / 2 - 0.42, bottom), W + 0.84 + (2.05 if names else 0),
                                top - bottom, boxstyle="round,pad=0.02,rounding_size=0.15", fill=False,
                                edgecolor="black", linestyle="--", linewidth=1.1))
    ax.text(cx - W / 2 - 0.55, (bottom + top) / 2, "N ×", ha="right", va="center", fontsize=12,
            fontweight="bold")
    return y


def gpt_attention(ax, cx, y, h) -> float:
    box(ax, cx, y, "", ATTN, h=h)
    ax.text(cx, y + h - 0.3, "atención multicabeza causal", ha="center", va="center", fontsize=9)
    ax.text(cx, y + h / 2 - 0.15, "proyecciones Q, K, V y de salida\ncon sesgo (bias)\n\n"
            "posiciones ya sumadas a la entrada\n\nh cabezas de consulta, h de clave y valor",
            ha="center", va="center", fontsize=8)
    return y + h


def gpt_ff(ax, cx, y, h) -> float:
    box(ax, cx, y, "", FF, h=h)
    ax.text(cx, y + h - 0.22, "red feed-forward (ReLU)", ha="center", va="center", fontsize=9)
    inner = 1.9
    y1 = box(ax, cx, y + 0.2, "lineal d → d_ff (+ sesgo)", "white", h=0.32, w=inner, fontsize=7.5)
    arrow(ax, (cx, y1), (cx, y1 + 0.12))
    y2 = box(ax, cx, y1 + 0.12, "ReLU", "white", h=0.3, w=inner, fontsize=7.5)
    arrow(ax, (cx, y2), (cx, y2 + 0.12))
    box(ax, cx, y2 + 0.12, "lineal d_ff → d (+ sesgo)", "white", h=0.32, w=inner, fontsize=7.5)
    return y + h


def llama_attention(ax, cx, y, h) -> float:
    box(ax, cx, y, "", ATTN, h=h, changed=True)
    right = cx + W / 2 + 0.12
    small = 0.78
    xs = (cx - 1.05, cx, cx + 1.05)
    row = y + 0.12
    for x, label in zip(xs, ("Q", "K", "V"), strict=True):
        box(ax, x, row, label, "white", h=0.3, w=small, fontsize=8)
    name(ax, right, row + 0.15, "self_attn.q_proj, k_proj, v_proj")
    rope = row + 0.3 + 0.12
    for x in xs[:2]:
        arrow(ax, (x, row + 0.3), (x, rope))
        box(ax, x, rope, "RoPE", POS, h=0.3, w=small, fontsize=8, changed=True)
    arrow(ax, (xs[2], row + 0.3), (xs[2], rope + 0.3 + 0.14))
    core = rope + 0.3 + 0.14
    for x in xs[:2]:
        arrow(ax, (x, rope + 0.3), (x, core))
    top = box(ax, cx, core, "softmax(QKᵀ/√d_k + máscara causal) V", "white", h=0.34, w=W - 0.3,
              fontsize=7.5)
    arrow(ax, (cx, top), (cx, top + 0.12))
    top = box(ax, cx, top + 0.12, "proyección de salida", "white", h=0.3, w=W - 0.3, fontsize=7.5)
    name(ax, right, top - 0.15, "self_attn.o_proj")
    ax.text(cx, y + h - 0.2, "atención causal sin sesgos", ha="center", va="center", fontsize=9)
    ax.text(right, rope + 0.15, "K y V: h_kv ≤ h cabezas\n(GQA, opcional)", ha="left",
            va="center", fontsize=7.5, color=CHANGED)
    return y + h


def llama_ff(ax, cx, y, h) -> float:
    box(ax, cx, y, "", FF, h=h, changed=True)
    right = cx + W / 2 + 0.12
    small = 1.25
    xg, xu = cx - 0.8, cx + 0.8
    row = y + 0.12
    box(ax, xg, row, "gate_proj", "white", h=0.3, w=small, fontsize=7.5)
    box(ax, xu, row, "up_proj", "white", h=0.3, w=small, fontsize=7.5)
    name(ax, right, row + 0.15, "mlp.gate_proj, mlp.up_proj")
    silu = row + 0.3 + 0.1
    arrow(ax, (xg, row + 0.3), (xg, silu))
    box(ax, xg, silu, "silu", "white", h=0.26, w=small * 0.7, fontsize=7.5)
    mul_y = silu + 0.26 + 0.22
    ax.plot([xg, xg], [silu + 0.26, mul_y], color=LINE, linewidth=1.1)
    arrow(ax, (xg, mul_y), (cx - 0.15, mul_y))
    ax.plot([xu, xu], [row + 0.3, mul_y], color=LINE, linewidth=1.1)
    arrow(ax, (xu, mul_y), (cx + 0.15, mul_y))
    plus(ax, cx, mul_y, sign="⊙")
    ax.text(cx + 0.2, mul_y + 0.2, "silu(gate) ⊙ up", ha="left", va="bottom", fontsize=7.5)
    arrow(ax, (cx, mul_y + 0.15), (cx, mul_y + 0.35))
    top = box(ax, cx, mul_y + 0.35, "down_proj", "white", h=0.3, w=small, fontsize=7.5)
    name(ax, right, top - 0.15, "mlp.down_proj")
    ax.text(cx, y + h - 0.2, "SwiGLU (anchura 2·d_ff/3), sin sesgos", ha="center", va="center",
            fontsize=9)
    return y + h


def heads(ax, gpt: dict, llama: dict) -> None:
    for cx, info, norm, out, changed in (
            (GPT_X, gpt, "LayerNorm final", "lineal d → V, atada (+ sesgo)", False),
            (LLAMA_X, llama, "RMSNorm final", "lm_head d → V, atada, sin sesgo", True)):
        y = info["top"]
        arrow(ax, (cx, y), (cx, y + 0.35))
        y = box(ax, cx, y + 0.35, norm, NORM, h=H_NORM, fontsize=8.5, changed=changed)
        if changed:
            name(ax, cx + W / 2 + 0.12, y - H_NORM / 2, "model.norm")
        arrow(ax, (cx, y), (cx, y + GAP))
        y = box(ax, cx, y + GAP, out, OUT, h=H_NORM, fontsize=8.5, changed=changed)
        if changed:
            name(ax, cx + W / 2 + 0.12, y - H_NORM / 2, "lm_head")
        arrow(ax, (cx, y), (cx, y + 0.3))
        ax.text(cx, y + 0.36, "logits del siguiente tóken (batch, T, V)", ha="center", va="bottom",
                fontsize=9)


def draw() -> Figure:
    fig = Figure(figsize=(12.4, 11.75))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 12.4)
    ax.set_ylim(-0.75, 11.0)
    ax.axis("off")
    gpt = gpt_column(ax)
    llama = llama_column(ax)
    heads(ax, gpt, llama)
    ax.text(GPT_X, 10.65, "GPT (capítulo 9)", ha="center", fontsize=13, fontweight="bold")
    ax.text(LLAMA_X, 10.65, "Llama", ha="center", fontsize=13, fontweight="bold")
    ax.text(6.2, -0.55, "Pre-norm en las dos: x + subcapa(norma(x)). Borde bermellón: lo que cambia "
            "respecto a GPT. En azul, el nombre del módulo en LlamaForCausalLM (Hugging Face).",
            ha="center", va="center", fontsize=9, style="italic")
    return fig


if __name__ == "__main__":
    save(draw(), __file__)

"""Prompt maps with captions and per-choice queries, as chapter 9 builds them:
shared by tests/test_widgets.py (live view) and tests/test_browser_explorers.py (page)."""

from __future__ import annotations

import torch

from dldna import widgets

PROMPTS = [("ana va al cine a ver una", "película 0.94 · obra 0.02", 7),
           ("el gato come", "[MASK] → pescado 0.81 <b>", 3),
           ("marta saca dinero del banco", None, None)]


def prompt_maps():
    """One causal map per prompt (as chapter 9 builds them), with caption and query."""
    g = torch.Generator().manual_seed(2)
    out = {}
    for prompt, caption, query in PROMPTS:
        tokens = ["<bos>", *prompt.split()]
        causal = torch.tril(torch.ones(len(tokens), len(tokens), dtype=torch.bool))
        scores = torch.randn(2, 2, len(tokens), len(tokens), generator=g)
        out[prompt] = widgets.AttentionMaps(
            torch.softmax(scores.masked_fill(~causal, float("-inf")), -1), tokens, mask=causal,
            caption=caption, query=query)
    return out

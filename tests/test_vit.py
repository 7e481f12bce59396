"""dldna.vit: patches, the patch embedding's two forms, the model, data, rollout, costs, windows;
dldna.viz.vit and the patch-size explorer (dldna.widgets.vit)."""

import json
import math
import re

import pytest
import torch
from matplotlib.figure import Figure

from dldna import masking, runtime, vit
from dldna.training import FitResult, Recipe
from dldna.transformer import Encoder
from dldna.viz import vit as vv
from dldna.widgets import vit as wv

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def data():
    return vit.load_digits_split()


def images(n=3, size=8, channels=1, seed=0):
    return torch.rand(n, channels, size, size, generator=torch.Generator().manual_seed(seed))


# --------------------------------------------------------------------------- patches


def test_patchify_orders_patches_row_by_row_and_round_trips():
    x = torch.arange(64.0).view(1, 1, 8, 8)
    p = vit.patchify(x, 2)
    assert p.shape == (1, 16, 4)
    assert p[0, 0].tolist() == [0, 1, 8, 9]  # top-left patch
    assert p[0, 1].tolist() == [2, 3, 10, 11]  # its right neighbour
    assert p[0, 4].tolist() == [16, 17, 24, 25]  # first patch of the second row
    for size in (1, 2, 4, 8):
        y = images(2, channels=3)
        assert torch.equal(vit.unpatchify(vit.patchify(y, size), size, 8), y)


def test_patchify_rejects_a_patch_that_does_not_divide_the_image():
    with pytest.raises(ValueError, match="no divide"):
        vit.patchify(images(), 3)
    with pytest.raises(ValueError, match=r"\(batch, canales, alto, ancho\)"):
        vit.patchify(torch.zeros(8, 8), 2)


@pytest.mark.parametrize("channels,patch", [(1, 2), (1, 4), (3, 2), (3, 8)])
def test_linear_patch_embedding_equals_a_convolution_with_stride_equal_to_the_kernel(channels, patch):
    torch.manual_seed(0)
    linear = vit.PatchEmbedding(patch, channels, 16, kind="linear")
    conv = linear.convert("conv")
    assert isinstance(conv.proj, torch.nn.Conv2d) and conv.proj.stride == (patch, patch)
    x = images(4, channels=channels)
    torch.testing.assert_close(linear(x), conv(x), rtol=1e-5, atol=1e-5)
    back = conv.convert("linear")
    torch.testing.assert_close(back(x), linear(x), rtol=1e-5, atol=1e-5)


def test_patch_embedding_checks_its_arguments():
    with pytest.raises(ValueError, match="desconocido"):
        vit.PatchEmbedding(2, 1, 8, kind="pixels")
    with pytest.raises(ValueError, match="canales"):
        vit.PatchEmbedding(2, 3, 8)(images())


# --------------------------------------------------------------------------- config and model


def test_config_sizes_and_spanish_validation():
    c = vit.ViTConfig()
    assert (c.grid, c.n_patches, c.seq_len, c.patch_dim) == (4, 16, 17, 4)
    assert vit.ViTConfig(patch_size=1).seq_len == 65
    with pytest.raises(ValueError, match="no divide a image_size"):
        vit.ViTConfig(patch_size=3)
    with pytest.raises(ValueError, match="n_heads"):
        vit.ViTConfig(d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="dropout"):
        vit.ViTConfig(dropout=1.5)
    with pytest.raises(ValueError, match="patch_embedding"):
        vit.ViTConfig(patch_embedding="pixels")
    with pytest.raises(TypeError, match="desconocidos"):
        c.replace(size=3)
    assert c.replace(patch_size=4).n_patches == 4


def test_model_reuses_the_transformer_encoder_and_gives_logits_and_maps():
    torch.manual_seed(0)
    model = vit.VisionTransformer(vit.ViTConfig(n_layers=2)).eval()
    assert isinstance(model.encoder, Encoder)
    x = images(5)
    logits = model(x)
    assert logits.shape == (5, 10)
    maps = model.attention_maps()
    assert len(maps) == 2 and maps[0].shape == (5, 4, 17, 17)
    torch.testing.assert_close(maps[0].sum(-1), torch.ones(5, 4, 17))
    assert model.position_embeddings.shape == (17, 64)
    assert model.tokens(x).shape == (5, 17, 64)
    with pytest.raises(ValueError, match="espera imágenes"):
        model(images(size=16))


def test_conv_and_linear_models_agree_with_the_same_weights():
    torch.manual_seed(0)
    a = vit.VisionTransformer(vit.ViTConfig(patch_embedding="linear")).eval()
    b = vit.VisionTransformer(vit.ViTConfig(patch_embedding="conv")).eval()
    state = a.state_dict()
    state["patch_embed.proj.weight"] = state["patch_embed.proj.weight"].reshape(64, 1, 2, 2)
    b.load_state_dict(state)
    torch.testing.assert_close(a(images()), b(images()), rtol=1e-5, atol=1e-5)


def test_cls_token_and_positions_are_learnable():
    model = vit.VisionTransformer()
    names = {n for n, p in model.named_parameters() if p.requires_grad}
    assert "cls_token" in names and "position.table" in names


# --------------------------------------------------------------------------- data and training


def test_digits_split_is_fixed_and_stratified(data):
    assert len(data.y_train) + len(data.y_test) == 1797
    assert len(data.y_test) == 450
    assert data.x_train.shape[1:] == (1, 8, 8)
    assert 0.0 <= float(data.x_train.min()) and float(data.x_train.max()) <= 1.0
    share_train = torch.bincount(data.y_train, minlength=10) / len(data.y_train)
    share_test = torch.bincount(data.y_test, minlength=10) / len(data.y_test)
    assert float((share_train - share_test).abs().max()) < 0.01
    again = vit.load_digits_split()
    assert torch.equal(again.x_test, data.x_test) and torch.equal(again.y_test, data.y_test)
    with pytest.raises(ValueError, match="test_size"):
        vit.load_digits_split(test_size=2)


def test_baselines_have_the_right_shapes():
    x = images(4)
    assert vit.TinyCNN()(x).shape == (4, 10)
    assert vit.MLP()(x).shape == (4, 10)


@pytest.mark.parametrize("make", [vit.TinyCNN, vit.MLP, lambda: vit.VisionTransformer(vit.ViTConfig())])
def test_models_refuse_infinite_pixels(make):
    # An inf grey level went through the convolution and came out as NaN logits.
    with pytest.raises(ValueError, match="infinitos"):
        make()(images(2) * math.inf)


def test_fit_uses_the_book_loop_is_deterministic_and_learns(data):
    small = vit.DigitsSplit(data.x_train[:256], data.y_train[:256], data.x_test[:128],
                            data.y_test[:128])
    recipe = Recipe(steps=40, batch_size=64, lr=1e-2, warmup=4, smoothing=0.1, weight_decay=0.01)
    results, models = [], []
    for _ in range(2):
        runtime.seed_everything(0)
        models.append(vit.MLP())
        results.append(vit.fit(models[-1], small, recipe, seed=3, device="cpu"))
    assert isinstance(results[0], FitResult)  # the one result type of dldna.training
    assert results[0].history.loss == results[1].history.loss
    assert results[0].history.steps == 40
    assert results[0].history.loss[-1] < results[0].history.loss[0]
    assert vit.accuracy(models[0], small.x_test, small.y_test) > 0.7
    # A subset smaller than the batch trains on the whole subset at every step.
    tiny = small.subset(20, seed=0)
    runtime.seed_everything(0)
    assert vit.fit(vit.MLP(), tiny, recipe, device="cpu").history.steps == 40


def test_subset_is_stratified_and_keeps_the_test_set(data):
    part = data.subset(100, seed=1)
    assert len(part.y_train) == 100 and torch.equal(part.x_test, data.x_test)
    assert torch.bincount(part.y_train, minlength=10).min() >= 9
    assert torch.equal(data.subset(100, seed=1).y_train, part.y_train)
    assert not torch.equal(data.subset(100, seed=2).y_train, part.y_train)
    assert data.subset(len(data.y_train)) is data
    with pytest.raises(ValueError, match="entre 10"):
        data.subset(5)


# --------------------------------------------------------------------------- looking inside


def random_maps(layers=3, batch=2, heads=4, n=17, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.softmax(torch.randn(batch, heads, n, n, generator=g), -1) for _ in range(layers)]


def test_rollout_rows_sum_to_one_and_follow_the_formula():
    maps = random_maps()
    r = vit.attention_rollout(maps)
    assert r.shape == (2, 17, 17)
    torch.testing.assert_close(r.sum(-1), torch.ones(2, 17))
    eye = torch.eye(17)
    step = [0.5 * a.mean(1) + 0.5 * eye for a in maps]
    torch.testing.assert_close(r, step[2] @ step[1] @ step[0])
    one = vit.attention_rollout(maps[:1], residual=False)
    torch.testing.assert_close(one, maps[0].mean(1))
    with pytest.raises(ValueError, match="No hay mapas"):
        vit.attention_rollout([])


def test_rollout_refuses_layers_of_different_tokens_or_batches():
    # Chaining (n, n) matrices of different n raised PyTorch's own bmm error.
    with pytest.raises(ValueError, match="mismo número de tókenes"):
        vit.attention_rollout([torch.rand(1, 2, 5, 5), torch.rand(1, 2, 4, 4)])
    with pytest.raises(ValueError, match="mismo lote"):
        vit.attention_rollout([torch.rand(1, 2, 5, 5), torch.rand(2, 2, 5, 5)])


def test_cls_attention_is_row_zero_on_the_grid():
    maps = random_maps(1)
    grid = vit.cls_attention(maps[0])
    assert grid.shape == (2, 4, 4, 4)
    torch.testing.assert_close(grid.sum((-1, -2)), 1 - maps[0][:, :, 0, 0])
    assert torch.equal(grid[0, 1].flatten(), maps[0][0, 1, 0, 1:])


def test_position_similarity_and_neighbour_agreement():
    g = 4
    # A table that encodes the grid: each patch's (row, col) on a circle pair.
    rows, cols = torch.arange(g * g) // g, torch.arange(g * g) % g
    grid_table = torch.stack([rows.float(), cols.float(), torch.ones(g * g)], -1)
    table = torch.cat([torch.zeros(1, 3), grid_table])
    s = vit.position_similarity(table)
    assert s.shape == (g, g, g, g)
    torch.testing.assert_close(torch.stack([s[r, c, r, c] for r in range(g) for c in range(g)]),
                               torch.ones(g * g))
    local = torch.cat([torch.zeros(1, g * g), torch.eye(g * g) + 0.0])
    for k in range(g * g):  # make each patch most similar to its right/left neighbour
        local[1 + k, (k + 1) if (k % g) < g - 1 else k - 1] = 0.5
    assert vit.neighbour_agreement(vit.position_similarity(local)) == 1.0
    far = torch.cat([torch.zeros(1, g * g), torch.eye(g * g) + 0.0])
    for k in range(g * g):  # each patch most similar to the opposite corner's patch
        far[1 + k, g * g - 1 - k] = 0.5 if k != g * g - 1 - k else 0.0
    # only the 4 central patches have their opposite as a (diagonal) neighbour
    assert vit.neighbour_agreement(vit.position_similarity(far)) == 0.25


def test_patch_cost_counts_tokens_and_macs():
    c = vit.patch_cost(8, 2, 64, 128, 3)
    n, d = 17, 64
    assert c["tokens"] == n and c["pairs"] == n * n
    assert c["total_macs"] == 16 * 4 * d + 3 * (4 * n * d * d + 2 * n * n * d + 2 * n * d * 128)
    tokens = [vit.patch_cost(patch_size=p)["tokens"] for p in (1, 2, 4, 8)]
    assert tokens == [65, 17, 5, 2]
    with pytest.raises(ValueError, match="no divide"):
        vit.patch_cost(patch_size=3)


def test_window_masks_of_swin():
    regular = vit.window_mask(8, 8, 4)
    assert regular.sum(-1).tolist() == [16] * 64  # each token sees its 4×4 window
    shifted = vit.window_mask(8, 8, 4, shift=2)
    assert torch.equal(shifted, shifted.T)
    # shifted windows: 3×3 regions of sizes 2, 4, 2 per side
    assert sorted(set(shifted.sum(-1).tolist())) == [4, 8, 16]
    # token 0 (corner) sees only tokens 0, 1, 8, 9 after the shift
    assert shifted[0].nonzero().flatten().tolist() == [0, 1, 8, 9]
    # two layers (regular then shifted) connect tokens of different regular windows
    two = (shifted.float() @ regular.float()) > 0
    assert int(two.sum()) > int(regular.sum())
    assert masking.describe(regular).startswith("forma (64, 64)")
    with pytest.raises(ValueError, match="ventana"):
        vit.window_mask(8, 8, 3)


# --------------------------------------------------------------------------- pictures and explorer


def test_pictures_are_figures(data):
    x = data.x_test[:3]
    maps = random_maps(2, batch=3)
    figs = [
        vv.plot_patches(x[0], 2),
        vv.plot_patches(x[0], 4),
        vv.plot_cls_attention(vit.cls_attention(maps[-1])[0], x[0], layer=2),
        vv.plot_rollout(x, vit.attention_rollout(maps)[:, 0, 1:].reshape(3, 4, 4), labels=["a", "b", "c"]),
        vv.plot_position_similarity(vit.position_similarity(torch.randn(17, 8))),
        vv.plot_patch_size(x[0], 4, wv.patch_table({1: None, 2: 0.9, 4: 0.95})),
        vv.plot_windows(8, 8, 4, 2),
    ]
    for fig in figs:
        assert isinstance(fig, Figure) and fig.texts or fig.axes
    with pytest.raises(ValueError, match="no divide"):
        vv.plot_patches(x[0], 3)


def payload(html):
    found = re.search(r'<script type="application/json" class="dldna-data">(.*?)</script>', html, re.S)
    return json.loads(found.group(1))


def test_patch_size_explorer_has_both_views_and_reacts(data):
    make = lambda: wv.patch_size_explorer(data.x_test[:3], {1: None, 2: 0.96, 4: 0.97, 8: 0.98},  # noqa: E731
                                          labels=["a", "b", "c"])
    explorer = make()
    assert explorer.error is None
    bundle = explorer._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", WIDGET_MIME}
    html = bundle["text/html"]
    ids = re.compile(r"dldna-vit_patches-\d+")  # the id counts explorers in the session
    assert ids.sub("", html) == ids.sub("", make().to_html())
    assert 'data-dldna-view="vit_patches"' in html and "dldnaExplorer.mount(" in html
    data_json = payload(html)
    assert data_json["tokens"] == [65, 17, 5, 2]
    assert data_json["accuracy"] == [None, 96.0, 97.0, 98.0]
    before = explorer.draw_count
    explorer.controls["patch_size"].value = 4
    assert explorer.draw_count == before + 1
    assert "parches de 4×4" in explorer._alt(explorer.state())


def test_patch_size_explorer_shows_spanish_errors(data):
    bad = wv.patch_size_explorer(data.x_test[:2], {2: 1.5})
    assert bad.error and "exactitud" in bad.error
    bad = wv.patch_size_explorer(data.x_test[:2], {3: 0.9})
    assert bad.error and "no divide" in bad.error
    assert "Traceback" not in bad.to_html()


# --------------------------------------------------------------------------- transfer


def test_interpolate_positions_keeps_cls_corners_and_a_linear_ramp():
    g, d = 4, 3
    rows, cols = torch.meshgrid(torch.arange(g), torch.arange(g), indexing="ij")
    # Column 0 grows along the rows, column 1 along the columns: a linear ramp, which
    # bilinear interpolation with aligned corners must reproduce exactly on the new grid.
    patches = torch.stack([rows.flatten(), cols.flatten(), torch.zeros(g * g)], dim=1).float()
    table = torch.cat([torch.full((1, d), 7.0), patches])
    big = vit.interpolate_positions(table, 7, mode="bilinear")
    assert big.shape == (1 + 49, d)
    assert torch.equal(big[0], table[0])  # [CLS] untouched
    new_rows, new_cols = torch.meshgrid(torch.arange(7), torch.arange(7), indexing="ij")
    torch.testing.assert_close(big[1:, 0], new_rows.flatten() * (g - 1) / 6.0)
    torch.testing.assert_close(big[1:, 1], new_cols.flatten() * (g - 1) / 6.0)
    same = vit.interpolate_positions(table, g)  # bicubic to the same size is the identity
    torch.testing.assert_close(same, table)
    corners = [0, g - 1, g * (g - 1), g * g - 1]
    big_corners = [0, 6, 42, 48]
    torch.testing.assert_close(vit.interpolate_positions(table, 7)[1:][big_corners], table[1:][corners])


def test_interpolated_table_runs_a_vit_on_larger_images():
    runtime.seed_everything(0)
    small = vit.VisionTransformer(vit.ViTConfig(dropout=0.0)).eval()
    large = vit.VisionTransformer(vit.ViTConfig(image_size=16, dropout=0.0)).eval()
    state = {k: v for k, v in small.state_dict().items() if not k.startswith("position")}
    large.load_state_dict(state, strict=False)
    with torch.no_grad():
        large.position.table.copy_(vit.interpolate_positions(small.position_embeddings, 8))
    assert large(images(2, size=16)).shape == (2, 10)


def test_accuracy_counts_hits_and_rejects_mismatched_labels(data):
    runtime.seed_everything(0)
    model = vit.MLP().eval()
    x, y = data.x_test[:20], data.y_test[:20]
    with torch.no_grad():
        hits = (model(x).argmax(-1) == y).float().mean().item()
    assert vit.accuracy(model, x, y, batch_size=7) == pytest.approx(hits)
    with pytest.raises(ValueError, match="20 imágenes y 10 etiquetas"):
        vit.accuracy(model, x, y[:10])

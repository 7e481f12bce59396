/* Static view "vit_patches" of the patch-size explorer (dldna/widgets/vit.py).
 *
 * It plugs into the shared renderer (explorer.js) through
 * window.dldnaExplorer.register, which also mounts the explorers that were
 * waiting for this view. Python computes every number (tokens, cost and the
 * measured accuracy of each patch size, the grey levels of the digits); this
 * code only draws them as SVG: the digit with its patch grid, and three bar
 * charts with the chosen size in orange.
 */
(function () {
  "use strict";
  var api = window.dldnaExplorer;
  if (!api) return;
  var NS = "http://www.w3.org/2000/svg";
  var BLUE = "#0072B2", ORANGE = "#E69F00", GRID = "#D55E00";

  function el(tag, attrs, parent, content) {
    var node = document.createElementNS(NS, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (content !== undefined) node.textContent = content;
    if (parent) parent.appendChild(node);
    return node;
  }
  function label(g, x, y, s, o) {
    o = o || {};
    return el("text", {
      x: x, y: y, "text-anchor": o.anchor || "middle", "dominant-baseline": "middle",
      "font-size": o.size || 11, "font-weight": o.weight || "normal", fill: o.fill || "#222"
    }, g, s);
  }

  function digit(g, box, img, h, w, p) {
    var c = box.cell;
    for (var r = 0; r < h; r++) {
      for (var k = 0; k < w; k++) {
        var v = Math.round(255 * (1 - img[r * w + k]));
        el("rect", { x: box.x + k * c, y: box.y + r * c, width: c + 0.3, height: c + 0.3,
          fill: "rgb(" + v + "," + v + "," + v + ")" }, g);
      }
    }
    for (var a = 0; a <= w; a += p) {
      el("line", { x1: box.x + a * c, x2: box.x + a * c, y1: box.y, y2: box.y + h * c, stroke: GRID, "stroke-width": 2 }, g);
    }
    for (a = 0; a <= h; a += p) {
      el("line", { x1: box.x, x2: box.x + w * c, y1: box.y + a * c, y2: box.y + a * c, stroke: GRID, "stroke-width": 2 }, g);
    }
    var gw = w / p, gh = h / p;
    if (p > 1 && gw * gh <= 16) {
      for (r = 0; r < gh; r++) for (k = 0; k < gw; k++) {
        var x = box.x + k * p * c + 3, y = box.y + r * p * c + 3;
        el("rect", { x: x, y: y, width: 16, height: 13, rx: 2, fill: GRID }, g);
        label(g, x + 8, y + 7, String(r * gw + k + 1), { size: 9, fill: "#fff" });
      }
    }
  }

  function barChart(g, box, sizes, values, chosen, o) {
    var n = sizes.length, cw = box.w / n, lo = o.lo || 0, hi = o.hi;
    el("line", { x1: box.x, x2: box.x + box.w, y1: box.y + box.h, y2: box.y + box.h, stroke: "#555" }, g);
    label(g, box.x + box.w / 2, box.y - 26, o.title, { size: 12, weight: "bold" });
    label(g, box.x - 4, box.y + box.h, String(lo), { anchor: "end", size: 10 });
    label(g, box.x - 4, box.y, String(hi), { anchor: "end", size: 10 });
    for (var i = 0; i < n; i++) {
      var x = box.x + i * cw + cw * 0.15, w = cw * 0.7, v = values[i];
      label(g, x + w / 2, box.y + box.h + 13, String(sizes[i]), { size: 11 });
      if (v === null) {
        label(g, x + w / 2, box.y + box.h - 20, "sin", { size: 10 });
        label(g, x + w / 2, box.y + box.h - 8, "entrenar", { size: 10 });
        continue;
      }
      var t = Math.max(0, Math.min(1, (v - lo) / (hi - lo))), bh = t * box.h;
      var bar = el("rect", { x: x, y: box.y + box.h - bh, width: w, height: bh,
        fill: sizes[i] === chosen ? ORANGE : BLUE, "class": "dldna-bar" }, g);
      el("title", {}, bar, "p = " + sizes[i] + ": " + v);
      label(g, x + w / 2, box.y + box.h - bh - 8, o.fmt(v), { size: 10 });
    }
    label(g, box.x + box.w / 2, box.y + box.h + 32, "tamaño del parche p", { size: 11 });
  }

  api.register("vit_patches", function (data, st) {
    if (!data._img) data._img = api.unpack(data.images);
    var h = data.height, w = data.width, p = st.patch_size, idx = st.image;
    var img = Array.prototype.slice.call(data._img.slice([idx]));
    var k = data.sizes.indexOf(p);
    var acc = data.accuracy[k];
    var width = 980, height = 330, top = 70;
    var state = data.labels[idx] + ", parches de " + p + "\u00d7" + p + ": " + data.tokens[k] +
      " tókenes, " + Math.round(data.kmacs[k]) + " mil MAC por imagen, " +
      (acc === null ? "sin entrenar" : "exactitud " + acc.toFixed(1) + " %");
    var maxTok = Math.max.apply(null, data.tokens), maxMac = Math.max.apply(null, data.kmacs);
    var trained = data.accuracy.filter(function (v) { return v !== null; });
    var accLo = trained.length ? Math.max(0, Math.floor(Math.min.apply(null, trained) - 10)) : 0;
    return {
      width: width, height: height,
      alt: data.alt + " Estado: " + state + ".",
      draw: function (g) {
        label(g, width / 2, 20, data.title, { size: 15, weight: "bold" });
        label(g, width / 2, 42, state, { size: 11 });
        var cell = 26;
        label(g, 30 + 4 * cell, top - 8, (w / p) * (h / p) + " parches + [CLS]", { size: 12, weight: "bold" });
        digit(g, { x: 30, y: top + 4, cell: cell }, img, h, w, p);
        var bw = 200, gap = 40, x0 = 300;
        barChart(g, { x: x0, y: top + 26, w: bw, h: 170 }, data.sizes, data.tokens, p,
          { title: "tókenes (con [CLS])", hi: maxTok, fmt: function (v) { return String(v); } });
        barChart(g, { x: x0 + bw + gap, y: top + 26, w: bw, h: 170 }, data.sizes, data.kmacs, p,
          { title: "coste (miles de MAC)", hi: Math.round(maxMac), fmt: function (v) { return String(Math.round(v)); } });
        barChart(g, { x: x0 + 2 * (bw + gap), y: top + 26, w: bw, h: 170 }, data.sizes, data.accuracy, p,
          { title: "exactitud en prueba (%)", lo: accLo, hi: 100, fmt: function (v) { return v.toFixed(1); } });
      }
    };
  });
})();

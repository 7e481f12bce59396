/* Static view "masks" of the mask explorer (dldna/widgets/masking.py).
 *
 * It plugs into the shared renderer (explorer.js), which exports its table of
 * views as window.dldnaExplorer.views: this file adds the view "masks" and then
 * mounts the mask explorers that explorer.js could not draw yet (explorer.js
 * mounts every explorer as soon as it loads, before this file has run).
 *
 * Python computes every mask and every weight (data.cases, keyed by
 * "n_pattern_pad_width"); this code only looks them up and draws two grids as
 * SVG: the mask (blue = may attend, grey hatched = blocked) and the weights.
 */
(function () {
  "use strict";
  var api = window.dldnaExplorer;
  if (!api) return;
  var NS = "http://www.w3.org/2000/svg";

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
      "font-size": o.size || 11, "font-weight": o.weight || "normal", fill: "#222",
      transform: o.rotate ? "rotate(" + o.rotate + " " + x + " " + y + ")" : ""
    }, g, s);
  }
  function lut(table, t) {
    var i = Math.max(0, Math.min(table.length - 1, Math.round(t * (table.length - 1))));
    return table[i];
  }
  function grid(g, box, n, tokens, allowed, fill, hatch, title) {
    var c = box.cell;
    label(g, box.x + n * c / 2, box.y - 40, title, { size: 13, weight: "bold" });
    for (var r = 0; r < n; r++) {
      label(g, box.x - 6, box.y + (r + 0.5) * c, tokens[r], { anchor: "end" });
      label(g, box.x + (r + 0.5) * c, box.y - 8, tokens[r], { anchor: "start", rotate: -45 });
      for (var k = 0; k < n; k++) {
        el("rect", {
          x: box.x + k * c, y: box.y + r * c, width: c, height: c,
          fill: allowed(r, k) ? fill(r, k) : "url(#" + hatch + ")", stroke: "#fff", "stroke-width": 1
        }, g);
      }
    }
    el("rect", { x: box.x, y: box.y, width: n * c, height: n * c, fill: "none", stroke: "#222" }, g);
    label(g, box.x + n * c / 2, box.y + n * c + 18, "clave j (posición atendida)");
  }

  api.views.masks = function (data, st) {
    var key = [st.n, st.pattern, st.pad, data.uses_width[st.pattern] ? st.width : data.widths[0]].join("_");
    var cs = data.cases[key];
    if (!cs) throw new Error("combinación no calculada: " + key);
    if (!cs._w) cs._w = api.unpack(cs.w).slice([]);
    var n = st.n, tokens = data.tokens.slice(0, n - st.pad);
    for (var p = 0; p < st.pad; p++) tokens.push("PAD");
    var allowed = function (r, k) { return cs.mask[r].charAt(k) === "1"; };
    var cell = Math.max(20, Math.min(36, Math.floor(360 / n)));
    var left = 90, top = 110, gap = 130;
    var maskBox = { x: left, y: top, cell: cell };
    var wBox = { x: left + n * cell + gap, y: top, cell: cell };
    var width = wBox.x + n * cell + 90, height = top + n * cell + 90;
    var patternName = data.pattern_names[st.pattern];
    var headline = patternName + ", longitud " + n + ", relleno " + st.pad +
      (data.uses_width[st.pattern] ? ", tamaño " + st.width : "");
    return {
      width: width, height: height,
      alt: data.alt + " Estado: " + headline + ". " + cs.summary,
      draw: function (g, hatch) {
        label(g, width / 2, 22, data.title, { size: 15, weight: "bold" });
        label(g, width / 2, 44, headline + " · " + cs.summary, { size: 11 });
        grid(g, maskBox, n, tokens, allowed, function () { return data.allowed_color; }, hatch, "Máscara");
        label(g, 18, top + n * cell / 2, "consulta i (quien atiende)", { rotate: -90 });
        grid(g, wBox, n, tokens, allowed, function (r, k) {
          return lut(data.lut, cs._w[r * n + k]);
        }, hatch, "Pesos de atención");
        if (n <= 8) {
          for (var r = 0; r < n; r++) for (var k = 0; k < n; k++) if (allowed(r, k)) {
            var v = cs._w[r * n + k];
            label(g, wBox.x + (k + 0.5) * cell, wBox.y + (r + 0.5) * cell, v.toFixed(2),
              { size: 9 }).setAttribute("fill", v > 0.55 ? "#000" : "#fff");
          }
        }
        for (var s = 0; s < 10; s++) {
          el("rect", { x: wBox.x + n * cell + 16, y: top + (9 - s) * n * cell / 10, width: 12,
            height: n * cell / 10 + 0.5, fill: lut(data.lut, s / 9) }, g);
        }
        label(g, wBox.x + n * cell + 34, top, "1", { anchor: "start" });
        label(g, wBox.x + n * cell + 34, top + n * cell, "0", { anchor: "start" });
        el("rect", { x: left, y: height - 30, width: 14, height: 14, fill: data.allowed_color }, g);
        label(g, left + 20, height - 23, "puede atender", { anchor: "start" });
        el("rect", { x: left + 130, y: height - 30, width: 14, height: 14, fill: "url(#" + hatch + ")" }, g);
        label(g, left + 150, height - 23, "bloqueada (peso 0)", { anchor: "start" });
      }
    };
  };

  var roots = document.querySelectorAll('.dldna-explorer[data-dldna-view="masks"]');
  Array.prototype.forEach.call(roots, function (root) {
    if (root.getAttribute("data-dldna-state")) return;  // already drawn
    Array.prototype.forEach.call(root.querySelectorAll(".dldna-controls, figure"), function (node) {
      node.parentNode.removeChild(node);
    });
    root.removeAttribute("data-dldna-mounted");
    api.mount(root);
  });
})();

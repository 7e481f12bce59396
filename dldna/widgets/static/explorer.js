/* Static (kernel-free) view of the dldna explorers: one renderer for every kind.
 *
 * The book serves this file once per page (dldna/sphinx_ext.py writes it to
 * _static/dldna-explorer.js, preceded by window.dldnaTheme: the colours of
 * dldna.viz.style). An explorer's text/html output carries only its data, a
 * <script type="application/json" class="dldna-data"> inside a
 * <div class="dldna-explorer" data-dldna-view="KIND">, and a one-line call to
 * dldnaExplorer.mount(id). Python computes every number (for every value of
 * every control); this code builds HTML controls and draws an SVG picture,
 * redrawn when a control moves. It loads nothing from the network.
 *
 * A kind of explorer is one call to dldnaExplorer.register(kind, view), where
 * view(data, state) returns {width, height, alt, draw(g, hatchId)} and draws
 * with the shared primitives below (heatmap, bars, hbars, lines, colorbar);
 * it may add note, a short text shown between the controls and the picture
 * (the twin of Explorer._note in the live view).
 */
(function () {
  "use strict";
  if (window.dldnaExplorer) return;  // a page that loads the file twice keeps the first
  var SVGNS = "http://www.w3.org/2000/svg";
  var FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";
  var THEME = window.dldnaTheme || null;  // written from dldna.viz.style
  var counter = 0;

  // ------------------------------------------------------------------ helpers
  function svgEl(tag, attrs, parent, text) {
    var node = document.createElementNS(SVGNS, tag);
    for (var key in attrs) {
      if (Object.prototype.hasOwnProperty.call(attrs, key) && attrs[key] !== null && attrs[key] !== undefined) {
        node.setAttribute(key, attrs[key]);
      }
    }
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  function htmlEl(tag, attrs, parent, text) {
    var node = document.createElement(tag);
    for (var key in attrs) {
      if (Object.prototype.hasOwnProperty.call(attrs, key)) node.setAttribute(key, attrs[key]);
    }
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  function fmt(v, digits) { return Number(v).toFixed(digits === undefined ? 2 : digits); }
  function short(label, n) {
    label = String(label);
    return label.length > n ? label.slice(0, n - 1) + "\u2026" : label;
  }
  function color(i) { return THEME.palette[i % THEME.palette.length]; }

  /* A packed array from Python (dldna.widgets.core.pack): shape, lo, hi, bits and
   * base64 of unsigned little-endian integers; value = lo + (hi - lo) * q / (2^bits - 1). */
  function unpack(p) {
    var bin = atob(p.d), n = 1, i;
    for (i = 0; i < p.s.length; i++) n *= p.s[i];
    var out = new Float64Array(n), levels = Math.pow(2, p.b) - 1, span = p.hi - p.lo, q;
    for (i = 0; i < n; i++) {
      q = p.b === 8 ? bin.charCodeAt(i) : bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8);
      out[i] = p.lo + span * q / levels;
    }
    var strides = [], s = 1;
    for (i = p.s.length - 1; i >= 0; i--) { strides[i] = s; s *= p.s[i]; }
    return {
      shape: p.s,
      /* the flat offset of a leading index tuple */
      offset: function (idx) { var o = 0; for (var k = 0; k < idx.length; k++) o += idx[k] * strides[k]; return o; },
      /* a sub-array (as plain JS array) at a leading index tuple, e.g. one matrix */
      slice: function (idx) {
        var size = 1;
        for (var k = idx.length; k < p.s.length; k++) size *= p.s[k];
        var start = this.offset(idx);
        return Array.prototype.slice.call(out, start, start + size);
      }
    };
  }

  function hexToRgb(hex) {
    return [parseInt(hex.slice(1, 3), 16), parseInt(hex.slice(3, 5), 16), parseInt(hex.slice(5, 7), 16)];
  }
  /* Text colour on a cell: the same rule as dldna.viz.heatmap.text_color (WCAG
   * relative luminance), so annotations stay readable on any colour map. */
  function inkOn(rgb) {
    var lin = rgb.map(function (v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] > THEME.luminance_threshold ? THEME.ink : "#ffffff";
  }
  function lutColor(lut, t) {
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    var x = t * (lut.length - 1), i = Math.min(Math.floor(x), lut.length - 2), f = x - i;
    var a = hexToRgb(lut[i]), b = hexToRgb(lut[i + 1]);
    var c = [0, 1, 2].map(function (k) { return Math.round(a[k] + f * (b[k] - a[k])); });
    return { css: "rgb(" + c.join(",") + ")", ink: inkOn(c) };
  }

  // ------------------------------------------------------------- primitives
  function text(g, x, y, s, opts) {
    opts = opts || {};
    return svgEl("text", {
      x: x, y: y, "font-size": opts.size || 12, "text-anchor": opts.anchor || "middle",
      "dominant-baseline": opts.baseline || "middle", fill: opts.fill || THEME.ink,
      "font-weight": opts.weight || null, transform: opts.transform || null, "font-family": FONT
    }, g, s);
  }
  function headline(g, main, state) {
    text(g, 10, 16, main, { size: 14, weight: "bold", anchor: "start" });
    text(g, 10, 36, state, { size: 12, anchor: "start", fill: THEME.muted });
  }
  function title(g, box, s) { text(g, box.x + box.w / 2, box.y - 14, s, { size: 13, weight: "bold" }); }
  function frame(g, box) {
    svgEl("rect", { x: box.x, y: box.y, width: box.w, height: box.h, fill: "none", stroke: THEME.axis, "stroke-width": 0.8 }, g);
  }

  /* Heatmap (the static twin of dldna.viz.heatmap.heatmap). o: rows, cols, value(r, c),
   * allowed(r, c) (null: all), lut, vmin, vmax or fill(r, c) (a colour, instead of the lut),
   * rowLabels, colLabels, topLabels (null: none), title, xlabel, ylabel, highlightRow,
   * highlightColor, annotate, hatch (pattern id of masked cells) */
  function heatmap(g, box, o) {
    var cw = box.w / o.cols, ch = box.h / o.rows, r, c;
    for (r = 0; r < o.rows; r++) {
      for (c = 0; c < o.cols; c++) {
        var x = box.x + c * cw, y = box.y + r * ch;
        if (o.allowed && !o.allowed(r, c)) {
          svgEl("rect", { x: x, y: y, width: cw + 0.3, height: ch + 0.3, fill: "url(#" + o.hatch + ")", "class": "dldna-masked" }, g);
          continue;
        }
        if (o.fill) {
          svgEl("rect", { x: x, y: y, width: cw + 0.3, height: ch + 0.3, fill: o.fill(r, c), stroke: "#ffffff", "stroke-width": 1 }, g);
          continue;
        }
        var v = o.value(r, c), col = lutColor(o.lut, (v - o.vmin) / (o.vmax - o.vmin));
        var cell = svgEl("rect", { x: x, y: y, width: cw + 0.3, height: ch + 0.3, fill: col.css }, g);
        svgEl("title", {}, cell, (o.rowLabels ? o.rowLabels[r] : r) + " \u2192 " + (o.colLabels ? o.colLabels[c] : (o.topLabels ? o.topLabels[c] : c)) + ": " + fmt(v, 3));
        if (o.annotate && cw > 26 && ch > 13) {
          text(g, x + cw / 2, y + ch / 2, fmt(v, 2), { size: 10, fill: col.ink });
        }
      }
    }
    frame(g, box);
    if (o.highlightRow !== null && o.highlightRow !== undefined) {
      svgEl("rect", { x: box.x, y: box.y + o.highlightRow * ch, width: box.w, height: ch, fill: "none", stroke: o.highlightColor || THEME.highlight, "stroke-width": 3, "class": "dldna-highlight" }, g);
    }
    if (o.rowLabels) {
      var step = Math.max(1, Math.ceil(o.rows * 13 / box.h));
      for (r = 0; r < o.rows; r += step) text(g, box.x - 6, box.y + (r + 0.5) * ch, short(o.rowLabels[r], 12), { anchor: "end", size: 11 });
    }
    if (o.colLabels) colLabels(g, box, o.colLabels);
    if (o.topLabels) {
      for (c = 0; c < o.cols; c++) {
        var tx = box.x + (c + 0.5) * cw, ty = box.y - 6;
        if (o.cols > 6) text(g, tx, ty, short(o.topLabels[c], 10), { anchor: "start", size: 11, transform: "rotate(-45 " + tx + " " + ty + ")" });
        else text(g, tx, ty, short(o.topLabels[c], 10), { size: 11, baseline: "auto" });
      }
    }
    if (o.title) title(g, o.topLabels ? { x: box.x, y: box.y - (o.cols > 6 ? 60 : 18), w: box.w } : box, o.title);
    if (o.xlabel) text(g, box.x + box.w / 2, box.y + box.h + (o.colLabels ? (o.colLabels.length > 6 ? 58 : 34) : 20), o.xlabel, { size: 12 });
    if (o.ylabel) text(g, box.x - (o.rowLabels ? 70 : 34), box.y + box.h / 2, o.ylabel, { size: 12, transform: "rotate(-90 " + (box.x - (o.rowLabels ? 70 : 34)) + " " + (box.y + box.h / 2) + ")" });
  }
  function colLabels(g, box, labels) {
    var cw = box.w / labels.length, rotate = labels.length > 6;
    var step = Math.max(1, Math.ceil(labels.length * 12 / box.w));
    for (var c = 0; c < labels.length; c += step) {
      var x = box.x + (c + 0.5) * cw, y = box.y + box.h + 12;
      if (rotate) text(g, x, y, short(labels[c], 10), { anchor: "end", size: 11, transform: "rotate(-45 " + x + " " + y + ")" });
      else text(g, x, y + 2, short(labels[c], 10), { size: 11 });
    }
  }
  function numericXTicks(g, box, n, label) {
    var step = n <= 12 ? 1 : n <= 30 ? 5 : n <= 80 ? 10 : 20;
    for (var i = 0; i < n; i += step) {
      var x = box.x + (n === 1 ? 0 : i / (n - 1)) * box.w;
      svgEl("line", { x1: x, x2: x, y1: box.y + box.h, y2: box.y + box.h + 4, stroke: THEME.axis }, g);
      text(g, x, box.y + box.h + 14, String(i), { size: 11 });
    }
    if (label) text(g, box.x + box.w / 2, box.y + box.h + 32, label, { size: 12 });
  }
  function yAxis(g, box, lo, hi, ticks, label, digits) {
    for (var k = 0; k < ticks.length; k++) {
      var y = box.y + box.h - (ticks[k] - lo) / (hi - lo) * box.h;
      svgEl("line", { x1: box.x, x2: box.x + box.w, y1: y, y2: y, stroke: THEME.rule, "stroke-width": 0.8 }, g);
      text(g, box.x - 6, y, fmt(ticks[k], digits === undefined ? 1 : digits), { anchor: "end", size: 11 });
    }
    if (label) text(g, box.x - 44, box.y + box.h / 2, label, { size: 12, transform: "rotate(-90 " + (box.x - 44) + " " + (box.y + box.h / 2) + ")" });
  }

  /* Vertical bars over labelled categories. o: values (null: «sin entrenar»), allowed
   * (array of bool or null), labels, lo (0), ymax, ticks, title, xlabel, ylabel, color,
   * highlight (index drawn in highlightColor), hatch, valueLabels, digits */
  function bars(g, box, o) {
    var n = o.values.length, cw = box.w / n, lo = o.lo || 0, ymax = o.ymax || 1, span = ymax - lo;
    yAxis(g, box, lo, ymax, o.ticks || [lo, lo + span / 4, lo + span / 2, lo + 3 * span / 4, ymax], o.ylabel, o.tickDigits === undefined ? 2 : o.tickDigits);
    for (var c = 0; c < n; c++) {
      var x = box.x + c * cw + cw * 0.1, w = cw * 0.8, v = o.values[c];
      if (o.allowed && !o.allowed[c]) {
        svgEl("rect", { x: x, y: box.y, width: w, height: box.h, fill: "url(#" + o.hatch + ")", "class": "dldna-masked" }, g);
        continue;
      }
      if (v === null) {
        text(g, x + w / 2, box.y + box.h - 20, "sin", { size: 10 });
        text(g, x + w / 2, box.y + box.h - 8, "entrenar", { size: 10 });
        continue;
      }
      var h = Math.max(0, Math.min(1, (v - lo) / span)) * box.h;
      var fill = c === o.highlight ? (o.highlightColor || THEME.palette[0]) : (o.color || THEME.palette[4]);
      var bar = svgEl("rect", { x: x, y: box.y + box.h - h, width: w, height: h, fill: fill, "class": "dldna-bar" }, g);
      svgEl("title", {}, bar, o.labels[c] + ": " + fmt(v, 3));
      if (o.valueLabels && cw > 22) text(g, x + w / 2, box.y + box.h - h - 7, fmt(v, o.digits === undefined ? 2 : o.digits), { size: 10 });
    }
    frame(g, box);
    colLabels(g, box, o.labels);
    if (o.title) title(g, box, o.title);
    if (o.xlabel) text(g, box.x + box.w / 2, box.y + box.h + (o.labels.length > 6 ? 58 : 34), o.xlabel, { size: 12 });
  }

  /* Horizontal bars, one per row. o: values, maxes (a tick per row, or null), labels (or null),
   * xmax, highlight (row), title, xlabel, color, ylabel, tickDigits (2) */
  function hbars(g, box, o) {
    var n = o.values.length, rh = box.h / n, xmax = o.xmax || 1;
    for (var k = 0; k <= 4; k++) {
      var gx = box.x + k / 4 * box.w;
      svgEl("line", { x1: gx, x2: gx, y1: box.y, y2: box.y + box.h, stroke: THEME.rule, "stroke-width": 0.8 }, g);
      text(g, gx, box.y + box.h + 12, fmt(k / 4 * xmax, o.tickDigits === undefined ? 2 : o.tickDigits), { size: 10 });
    }
    for (var r = 0; r < n; r++) {
      var y = box.y + r * rh + rh * 0.15, w = Math.max(0, Math.min(1, o.values[r] / xmax)) * box.w;
      var bar = svgEl("rect", { x: box.x, y: y, width: w, height: rh * 0.7, fill: r === o.highlight ? THEME.highlight : (o.color || THEME.palette[1]), "class": "dldna-bar" }, g);
      svgEl("title", {}, bar, (o.labels ? o.labels[r] : r) + ": " + fmt(o.values[r], 3));
      if (o.maxes) {
        var mx = box.x + Math.min(1, o.maxes[r] / xmax) * box.w;
        svgEl("line", { x1: mx, x2: mx, y1: y - 2, y2: y + rh * 0.7 + 2, stroke: THEME.ink, "stroke-width": 2 }, g);
      }
      if (o.labels) text(g, box.x - 6, y + rh * 0.35, short(o.labels[r], 12), { anchor: "end", size: 11 });
      if (o.valueLabels && rh > 12) text(g, box.x + w + 4, y + rh * 0.35, fmt(o.values[r], 2), { anchor: "start", size: 10 });
    }
    frame(g, box);
    if (o.title) title(g, box, o.title);
    if (o.xlabel) text(g, box.x + box.w / 2, box.y + box.h + 30, o.xlabel, { size: 12 });
    if (o.ylabel) text(g, box.x - 70, box.y + box.h / 2, o.ylabel, { size: 12, transform: "rotate(-90 " + (box.x - 70) + " " + (box.y + box.h / 2) + ")" });
  }

  /* Line chart over integer positions 0..n-1. o: series [{y, color, dash, label, markers}],
   * lo, hi, cursor, title, xlabel, ylabel, legend (box for the legend or null), point ({x, y}) */
  function lines(g, box, o) {
    var n = o.series.length ? o.series[0].y.length : 1;
    var X = function (i) { return box.x + (n === 1 ? 0 : i / (n - 1)) * box.w; };
    var Y = function (v) { return box.y + box.h - (v - o.lo) / (o.hi - o.lo) * box.h; };
    yAxis(g, box, o.lo, o.hi, o.ticks || [o.lo, (o.lo + o.hi) / 2, o.hi], o.ylabel, 1);
    if (o.cursor !== null && o.cursor !== undefined) {
      svgEl("line", { x1: X(o.cursor), x2: X(o.cursor), y1: box.y, y2: box.y + box.h, stroke: THEME.ink, "stroke-width": 1, "stroke-opacity": 0.7, "class": "dldna-cursor" }, g);
    }
    o.series.forEach(function (s, k) {
      var pts = s.y.map(function (v, i) { return X(i).toFixed(1) + "," + Y(v).toFixed(1); }).join(" ");
      svgEl("polyline", { points: pts, fill: "none", stroke: s.color, "stroke-width": s.dash ? 1.4 : 1.8, "stroke-dasharray": s.dash ? "5,3" : null, "class": "dldna-series" }, g);
      if (s.markers) s.y.forEach(function (v, i) { svgEl("circle", { cx: X(i), cy: Y(v), r: 1.8, fill: s.color }, g); });
      if (o.legend) {
        var ly = o.legend.y + k * 17;
        svgEl("line", { x1: o.legend.x, x2: o.legend.x + 22, y1: ly, y2: ly, stroke: s.color, "stroke-width": 2, "stroke-dasharray": s.dash ? "5,3" : null }, g);
        text(g, o.legend.x + 28, ly, s.label, { anchor: "start", size: 11 });
      }
    });
    if (o.point) svgEl("circle", { cx: X(o.point.x), cy: Y(o.point.y), r: 5, fill: THEME.highlight, stroke: "#ffffff" }, g);
    frame(g, box);
    numericXTicks(g, box, n, o.xlabel);
    if (o.title) title(g, box, o.title);
  }

  /* Vertical colour bar. */
  function colorbar(g, box, lut, vmin, vmax, label, digits) {
    var steps = 48;
    for (var k = 0; k < steps; k++) {
      svgEl("rect", { x: box.x, y: box.y + box.h - (k + 1) * box.h / steps, width: box.w, height: box.h / steps + 0.5, fill: lutColor(lut, k / (steps - 1)).css }, g);
    }
    frame(g, box);
    for (k = 0; k <= 4; k++) {
      var y = box.y + box.h - k / 4 * box.h;
      text(g, box.x + box.w + 4, y, fmt(vmin + k / 4 * (vmax - vmin), digits === undefined ? 2 : digits), { anchor: "start", size: 10 });
    }
    if (label) text(g, box.x + box.w + 40, box.y + box.h / 2, label, { size: 12, transform: "rotate(90 " + (box.x + box.w + 40) + " " + (box.y + box.h / 2) + ")" });
  }
  /* Legend swatch: a colour (or the masked-cell hatch when fill is null) and its words. */
  function swatch(g, x, y, fill, words, hatch) {
    svgEl("rect", { x: x, y: y - 7, width: 18, height: 14, fill: fill || "url(#" + hatch + ")", stroke: THEME.masked_edge }, g);
    text(g, x + 24, y, words, { anchor: "start", size: 11 });
  }
  function maskedLegend(g, x, y, hatch) { swatch(g, x, y, null, THEME.masked_label, hatch); }

  // ----------------------------------------------------------------- registry
  var VIEWS = {}, started = false;

  /* The one way to add a kind of explorer: view(data, state) returns
   * {width, height, alt, draw(g, hatchId)} and optionally note (a text shown with
   * the picture); explorers of that kind get mounted. */
  function register(kind, view) {
    VIEWS[kind] = view;
    if (started) mountAll();
  }

  // -------------------------------------------------------------------- views
  /* Every kind of explorer registers its view here, with the one API
   * register(kind, view); view(data, state) -> {width, height, alt, draw(g, hatchId)}. */

  register("attention", function (data, st) {
    var src = data.sources[st.kind || 0], layer = st.layer || 0, head = st.head || 0, t = st.temperature;
    if (!src._w) src._w = unpack(src.w);
    var q = src.q_tokens, k = src.k_tokens, nq = q.length, nk = k.length, qi = Math.min(st.query, nq - 1);
    var W = src._w.slice([t, layer, head]);
    var ent = src.entropy[t][layer][head];
    var allowed = src.mask ? function (r, c) { return src.mask[r].charAt(c) === "1"; } : null;
    var cell = Math.max(18, Math.min(46, Math.floor(520 / Math.max(nq, nk))));
    var left = 110, top = nk > 6 ? 150 : 100;
    var heat = { x: left, y: top, w: cell * nk, h: cell * nq };
    var ent_box = { x: heat.x + heat.w + 100, y: top, w: 170, h: heat.h };
    var bar_box = { x: left, y: top + heat.h + (nk > 6 ? 100 : 80), w: heat.w, h: 150 };
    var width = ent_box.x + ent_box.w + 90, height = bar_box.y + bar_box.h + (nk > 6 ? 80 : 56);
    var row = W.slice(qi * nk, (qi + 1) * nk), rowAllowed = null;
    if (src.mask) rowAllowed = k.map(function (_, c) { return allowed(qi, c); });
    var maxe = 0;
    src.max_entropy.forEach(function (v) { maxe = Math.max(maxe, v); });
    var label = (data.sources.length > 1 ? src.label + ", " : "") +
      (src.layers > 1 ? "capa " + layer + ", " : "") + (src.heads > 1 ? "cabeza " + head + ", " : "") +
      "temperatura " + data.temperatures[t];
    return {
      width: width, height: height, note: src.caption || "",
      alt: data.alt + " Estado: " + label + (src.caption ? "; " + src.caption : "") + "; consulta «" + q[qi] + "»: pesos " +
        row.map(function (v, c) { return k[c] + " " + (rowAllowed && !rowAllowed[c] ? "enmascarada" : fmt(v, 2)); }).join(", ") +
        "; entropía " + fmt(ent[qi], 2) + " nats.",
      draw: function (g, hatch) {
        headline(g, data.title, label);
        heatmap(g, heat, {
          rows: nq, cols: nk, value: function (r, c) { return W[r * nk + c]; }, allowed: allowed,
          lut: THEME.sequential, vmin: 0, vmax: 1, rowLabels: q, colLabels: null, topLabels: k, hatch: hatch,
          title: "Pesos de atención (fila resaltada: consulta elegida)", ylabel: "consulta (query)",
          highlightRow: qi, annotate: nq * nk <= 100
        });
        hbars(g, ent_box, {
          values: ent, maxes: src.max_entropy, labels: null, xmax: Math.max(maxe, 1e-3) * 1.08,
          highlight: qi, title: "Entropía de cada fila", xlabel: "entropía (nats)", valueLabels: true
        });
        text(g, ent_box.x + ent_box.w / 2, ent_box.y + ent_box.h + 46, "| = máximo (uniforme)", { size: 11 });
        colorbar(g, { x: ent_box.x + ent_box.w + 14, y: top, w: 14, h: Math.max(120, heat.h) }, THEME.sequential, 0, 1, "peso");
        bars(g, bar_box, {
          values: row, allowed: rowAllowed, labels: k, ymax: 1.12, ticks: [0, 0.25, 0.5, 0.75, 1], hatch: hatch, valueLabels: nk <= 16,
          title: "Pesos de la consulta «" + q[qi] + "»", xlabel: "clave (key)", ylabel: "peso"
        });
        if (src.mask) maskedLegend(g, bar_box.x + bar_box.w + 20, bar_box.y + 10, hatch);
      }
    };
  });

  register("scaling", function (data, st) {
    if (!data._w) data._w = unpack(data.w);
    var d = st.d_k, s = st.scaled ? 1 : 0, nq = data.n_queries, nk = data.n_keys;
    var W = data._w.slice([d, s]), qs = [], ks = [];
    for (var i = 0; i < nq; i++) qs.push("q" + (i + 1));
    for (i = 0; i < nk; i++) ks.push("k" + (i + 1));
    var heat = { x: 80, y: 96, w: 44 * nk, h: 40 * nq };
    var maxBox = { x: heat.x + heat.w + 100, y: 96, w: 150, h: heat.h };
    var entBox = { x: maxBox.x + maxBox.w + 40, y: 96, w: 150, h: heat.h };
    var width = entBox.x + entBox.w + 30, height = heat.y + heat.h + 90;
    var maxw = data.max_weight[d][s], ent = data.entropy[d][s];
    var label = "d_k = " + data.d_ks[d] + (st.scaled ? ", dividiendo entre \u221Ad_k" : ", sin dividir entre \u221Ad_k");
    return {
      width: width, height: height,
      alt: data.alt + " Estado: " + label + "; desviación típica de las puntuaciones " + fmt(data.score_std[d][s], 2) +
        "; peso máximo por consulta " + maxw.map(function (v) { return fmt(v, 2); }).join(", ") +
        "; entropía por consulta " + ent.map(function (v) { return fmt(v, 2); }).join(", ") + " nats.",
      draw: function (g) {
        headline(g, data.title, label);
        text(g, 10, 54, "desviación típica de las puntuaciones: " + fmt(data.score_std[d][s], 2) +
          " (\u221Ad_k = " + fmt(Math.sqrt(data.d_ks[d]), 2) + ")", { size: 12, anchor: "start" });
        heatmap(g, heat, {
          rows: nq, cols: nk, value: function (r, c) { return W[r * nk + c]; }, lut: THEME.sequential, vmin: 0, vmax: 1,
          rowLabels: qs, colLabels: ks, title: "Pesos de atención", xlabel: "clave (key)", ylabel: "consulta (query)",
          annotate: true
        });
        hbars(g, maxBox, { values: maxw, labels: qs, xmax: 1, title: "Peso máximo", xlabel: "peso", valueLabels: true, color: color(4) });
        hbars(g, entBox, { values: ent, maxes: ent.map(function () { return data.max_entropy; }), labels: null, xmax: data.max_entropy * 1.08, title: "Entropía", xlabel: "entropía (nats)", valueLabels: true, color: color(2) });
      }
    };
  });

  register("positional", function (data, st) {
    var kind = data.kinds[st.kind || 0], cell = kind.grid[st.d_model][st.base];
    if (!cell._t) { cell._t = unpack(cell.table); cell._s = unpack(cell.similarity); }
    var n = data.n_positions, d = data.d_models[st.d_model], base = data.bases[st.base], p = Math.min(st.cursor, n - 1);
    var table = cell._t.slice([]), sim = cell._s.slice([p]);
    var pairs = (st.pairs || []).filter(function (i) { return i < d / 2; });
    var colors = THEME.lines;
    var series = [];
    pairs.forEach(function (i, k) {
      var col = colors[k % colors.length], lam = cell.wavelengths ? ", \u03BB = " + cell.wavelengths[i] : "";
      series.push({ y: table.filter(function (_, j) { return j % d === 2 * i; }), color: col, markers: true, label: "par " + i + ": dim " + (2 * i) + " (" + kind.wave_labels[0] + ")" + lam });
      series.push({ y: table.filter(function (_, j) { return j % d === 2 * i + 1; }), color: col, dash: true, label: "par " + i + ": dim " + (2 * i + 1) + " (" + kind.wave_labels[1] + ")" });
    });
    var vr = kind.value_range, sr = kind.similarity_range, padv = 0.1 * (vr[1] - vr[0]), pads = 0.05 * (sr[1] - sr[0]);
    var waves = { x: 70, y: 84, w: 560, h: 170 };
    var heat = { x: 70, y: 320, w: 300, h: 250 };
    var simb = { x: 520, y: 320, w: 330, h: 250 };
    var width = 900, height = 630;
    var label = kind.label + ", d_model = " + d + ", base = " + base + ", cursor en la posición " + p;
    return {
      width: width, height: height,
      alt: data.alt + " Estado: " + label + "; pares mostrados: " + (pairs.length ? pairs.join(", ") : "ninguno") +
        "; la similitud con la posición " + p + " vale " + fmt(sim[Math.min(p + 1, n - 1)], 2) + " en la posición vecina y " +
        fmt(sim[n - 1], 2) + " en la última.",
      draw: function (g) {
        headline(g, data.title, label);
        lines(g, waves, {
          series: series, lo: vr[0] - padv, hi: vr[1] + padv, ticks: [vr[0], (vr[0] + vr[1]) / 2, vr[1]], cursor: p,
          title: "Ondas por par de dimensiones", xlabel: "posición", ylabel: kind.value_label,
          legend: { x: waves.x + waves.w + 14, y: waves.y + 8 }
        });
        if (!series.length) text(g, waves.x + waves.w / 2, waves.y + waves.h / 2, "Elige al menos un par de dimensiones.", { size: 13 });
        heatmap(g, heat, {
          rows: n, cols: d, value: function (r, c) { return table[r * d + c]; }, lut: THEME.diverging,
          vmin: vr[0], vmax: vr[1], rowLabels: null, colLabels: null, title: "Posición × dimensión",
          highlightRow: p, highlightColor: THEME.ink
        });
        numericXTicks(g, { x: heat.x + heat.w / d / 2, y: heat.y, w: heat.w - heat.w / d, h: heat.h }, d, kind.column_label);
        for (var r = 0; r < n; r += (n <= 30 ? 5 : 10)) text(g, heat.x - 6, heat.y + (r + 0.5) * heat.h / n, String(r), { anchor: "end", size: 11 });
        text(g, heat.x - 34, heat.y + heat.h / 2, "posición", { size: 12, transform: "rotate(-90 " + (heat.x - 34) + " " + (heat.y + heat.h / 2) + ")" });
        colorbar(g, { x: heat.x + heat.w + 12, y: heat.y, w: 14, h: heat.h }, THEME.diverging, vr[0], vr[1], kind.value_label);
        lines(g, simb, {
          series: [{ y: sim, color: color(4), markers: true, label: "" }], lo: sr[0] - pads, hi: sr[1] + pads,
          ticks: [sr[0], (sr[0] + sr[1]) / 2, sr[1]], cursor: p, point: { x: p, y: sim[p] },
          title: "Similitud de la posición " + p + " con las demás", xlabel: "posición", ylabel: kind.similarity_label
        });
      }
    };
  });

  register("masks", function (data, st) {
    var key = [st.n, st.pattern, st.pad, data.uses_width[st.pattern] ? st.width : data.widths[0]].join("_");
    var cs = data.cases[key];
    if (!cs) throw new Error("combinación no calculada: " + key);
    if (!cs._w) cs._w = unpack(cs.w).slice([]);
    var n = st.n, tokens = data.tokens.slice(0, n - st.pad);
    for (var p = 0; p < st.pad; p++) tokens.push("PAD");
    var allowed = function (r, k) { return cs.mask[r].charAt(k) === "1"; };
    var cell = Math.max(20, Math.min(36, Math.floor(360 / n)));
    var side = n * cell, left = 110, top = n > 6 ? 150 : 110;
    var maskBox = { x: left, y: top, w: side, h: side };
    var wBox = { x: left + side + 130, y: top, w: side, h: side };
    var width = wBox.x + side + 90, height = top + side + 90;
    var label = data.pattern_names[st.pattern] + ", longitud " + n + ", relleno " + st.pad +
      (data.uses_width[st.pattern] ? ", tamaño " + st.width : "");
    var common = { rows: n, cols: n, allowed: allowed, rowLabels: tokens, topLabels: tokens, xlabel: "clave j (posición atendida)" };
    return {
      width: width, height: height,
      alt: data.alt + " Estado: " + label + "; " + cs.summary + ".",
      draw: function (g, hatch) {
        headline(g, data.title, label + " \u00B7 " + cs.summary);
        heatmap(g, maskBox, Object.assign({}, common, {
          hatch: hatch, fill: function () { return THEME.allowed; }, title: "Máscara", ylabel: "consulta i (quien atiende)"
        }));
        heatmap(g, wBox, Object.assign({}, common, {
          hatch: hatch, value: function (r, k) { return cs._w[r * n + k]; }, lut: THEME.sequential, vmin: 0, vmax: 1,
          title: "Pesos de atención", annotate: n <= 8
        }));
        colorbar(g, { x: wBox.x + side + 14, y: top, w: 14, h: side }, THEME.sequential, 0, 1, "peso");
        swatch(g, left, height - 22, THEME.allowed, "puede atender", hatch);
        maskedLegend(g, left + 140, height - 22, hatch);
      }
    };
  });

  register("online_softmax", function (data, st) {
    var cs = data.cases[String(st.tile)], n = data.scores.length, T = cs.m.length;
    var k = Math.min(Math.max(st.step, 1), T) - 1, start = cs.starts[k], stop = cs.stops[k];
    var lo = Math.min.apply(null, data.scores.concat([0])) - 0.3, hi = Math.max.apply(null, data.scores) + 0.5;
    var labels = data.scores.map(function (_, i) { return String(i); });
    var top = { x: 70, y: 96, w: 760, h: 170 };
    var boxes = [0, 1, 2].map(function (i) { return { x: 70 + i * 270, y: 350, w: 200, h: 140 }; });
    var width = 900, height = 560;
    var span = function (ys) { var a = Math.min.apply(null, ys), b = Math.max.apply(null, ys), p = Math.max(0.05, 0.1 * (b - a)); return [a - p, b + p]; };
    var pick = function (j) { return cs.output.map(function (row) { return row[j]; }); };
    var outs = [], finals = [];
    data.final.forEach(function (f, j) {
      outs.push({ y: pick(j), color: THEME.lines[j % THEME.lines.length], markers: true, label: "dim " + j });
      finals.push({ y: cs.m.map(function () { return f; }), color: THEME.lines[j % THEME.lines.length], dash: true, label: "final " + j });
    });
    var all = [];
    outs.concat(finals).forEach(function (s) { all = all.concat(s.y); });
    var mr = span(cs.m), lr = span(cs.l), orr = span(all);
    var label = "teselas de " + st.tile + " claves, " + (k + 1) + " de " + T + " leídas (claves 0 a " + (stop - 1) + ")";
    var note = label + "; m = " + fmt(cs.m[k], 2) + ", l = " + fmt(cs.l[k], 3) + "; salida parcial " +
      cs.output[k].map(function (v) { return fmt(v, 2); }).join(", ") + "; salida final " +
      data.final.map(function (v) { return fmt(v, 2); }).join(", ");
    return {
      width: width, height: height, note: note + ".",
      alt: data.alt + " Estado: " + note + ".",
      draw: function (g, hatch) {
        headline(g, data.title, label);
        bars(g, top, {
          values: data.scores, allowed: data.scores.map(function (_, i) { return i < stop; }), labels: labels,
          lo: lo, ymax: hi, ticks: [Math.ceil(lo), 0, Math.floor(hi)], tickDigits: 0, hatch: hatch, color: color(4),
          title: "Puntuaciones (rayadas: aún no leídas; recuadro: tesela actual)", xlabel: "clave (key)", ylabel: "puntuación"
        });
        var cw = top.w / n, my = top.y + top.h - (cs.m[k] - lo) / (hi - lo) * top.h;
        svgEl("rect", { x: top.x + start * cw, y: top.y, width: (stop - start) * cw, height: top.h, fill: "none", stroke: THEME.highlight, "stroke-width": 3, "class": "dldna-highlight" }, g);
        svgEl("line", { x1: top.x, x2: top.x + top.w, y1: my, y2: my, stroke: THEME.ink, "stroke-width": 1.2, "stroke-dasharray": "6,3" }, g);
        text(g, top.x + top.w + 4, my, "m", { anchor: "start", size: 12 });
        lines(g, boxes[0], { series: [{ y: cs.m, color: color(1), markers: true, label: "m" }], lo: mr[0], hi: mr[1], cursor: k,
          title: "máximo acumulado m = " + fmt(cs.m[k], 3), xlabel: "tesela (desde 0)" });
        lines(g, boxes[1], { series: [{ y: cs.l, color: color(2), markers: true, label: "l" }], lo: lr[0], hi: lr[1], cursor: k,
          title: "suma reescalada l = " + fmt(cs.l[k], 3), xlabel: "tesela (desde 0)" });
        lines(g, boxes[2], { series: outs.concat(finals), lo: orr[0], hi: orr[1], cursor: k,
          title: "salida acc / l (discontinua: final)", xlabel: "tesela (desde 0)" });
      }
    };
  });

  /* An axis from 0 to at least `top` in four round steps: {max, digits} (the decimals of a step). */
  function quarters(top) {
    if (!(top > 0)) return { max: 1, digits: 2 };
    var raw = top / 4, scale = Math.pow(10, Math.floor(Math.log10(raw))), step = 10 * scale;
    [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8].some(function (m) { if (m * scale >= raw) { step = m * scale; return true; } return false; });
    var digits = 0;
    while (digits < 6 && Math.abs(Math.round(step * Math.pow(10, digits)) - step * Math.pow(10, digits)) > 1e-6) digits++;
    return { max: 4 * step, digits: digits };
  }

  register("rope_scaling", function (data, st) {
    var key = data.scalings[st.scaling] + "_" + st.factor + "_" + st.d_k, cs = data.cases[key];
    if (!cs) throw new Error("combinación no calculada: " + key);
    var mat = data.matrices[cs.m];
    if (!mat._v) mat._v = unpack(mat).slice([]);
    var M = mat._v, rows = cs.pairs, cols = cs.cols, stride = cs.width, L = data.length;
    var heat = { x: 80, y: 96, w: 520, h: 240 }, cw = heat.w / cols;
    var boxes = [{ x: 790, y: 116, w: 140, h: 64 }, { x: 790, y: 274, w: 140, h: 64 }];
    var width = 960, height = 414;
    var rowLabels = [];
    for (var i = 0; i < rows; i++) rowLabels.push(String(i));
    var label = "escalado " + cs.label + ", factor " + st.factor + ", d_k = " + st.d_k + ": " + cols +
      " posiciones (entrenado con " + L + ")";
    var note = label + "; par 0 a distancia " + data.near + ": " + fmt(cs.near[1], 1) + "° (al entrenar, " +
      fmt(cs.near[0], 1) + "°); par " + cs.far_pair + " a distancia " + cs.far_distance + ": " + fmt(cs.far[1], 2) +
      "° (al entrenar, como mucho " + fmt(cs.far[0], 2) + "°, a distancia " + (L - 1) + ")";
    var panels = [
      { values: cs.near, digits: 1, head: "par 0 (el más rápido)", sub: "a distancia " + data.near },
      { values: cs.far, digits: 2, head: "par " + cs.far_pair + " (el más lento)",
        sub: "a distancia " + cs.far_distance + " (al entrenar, " + (L - 1) + ")" }
    ];
    return {
      width: width, height: height, note: note + ".",
      alt: data.alt + " Estado: " + note + ".",
      draw: function (g) {
        headline(g, data.title, label);
        heatmap(g, heat, {
          rows: rows, cols: cols, value: function (r, c) { return M[r * stride + c]; }, lut: THEME.diverging,
          vmin: -1, vmax: 1, rowLabels: rowLabels, ylabel: "par i (0: el más rápido)"
        });
        cs.ticks.forEach(function (d) {
          var x = heat.x + (d + 0.5) * cw;
          svgEl("line", { x1: x, x2: x, y1: heat.y + heat.h, y2: heat.y + heat.h + 4, stroke: THEME.axis }, g);
          text(g, x, heat.y + heat.h + 14, String(d), { size: 11 });
        });
        text(g, heat.x + heat.w / 2, heat.y + heat.h + 34, "distancia d entre consulta y clave", { size: 12 });
        // The distances met in training, [0, L): a bracket above, a line where they end.
        var trained = Math.min(L, cols) * cw, by = heat.y - 8;
        svgEl("polyline", { points: [heat.x, by + 4, heat.x, by, heat.x + trained, by, heat.x + trained, by + 4].join(" "),
          fill: "none", stroke: THEME.ink, "stroke-width": 1.5 }, g);
        text(g, heat.x + trained / 2, by - 9, "entrenamiento (d < " + L + ")", { size: 11 });
        if (L < cols) {
          svgEl("line", { x1: heat.x + trained, x2: heat.x + trained, y1: heat.y, y2: heat.y + heat.h, stroke: THEME.ink,
            "stroke-width": 2, "class": "dldna-cursor" }, g);
        }
        colorbar(g, { x: heat.x + heat.w + 14, y: heat.y, w: 12, h: heat.h }, THEME.diverging, -1, 1, "cos(d\u00B7\u03B8_i)");
        panels.forEach(function (p, k) {
          var box = boxes[k], axis = quarters(1.2 * Math.max(p.values[0], p.values[1]));
          text(g, box.x + box.w / 2 - 30, box.y - 34, p.head, { size: 12, weight: "bold" });
          text(g, box.x + box.w / 2 - 30, box.y - 18, p.sub, { size: 11 });
          hbars(g, box, {
            values: p.values, labels: ["al entrenar", "ahora"], xmax: axis.max, tickDigits: axis.digits, highlight: 1,
            color: color(4), xlabel: "ángulo girado (grados)"
          });
          p.values.forEach(function (v, r) {
            text(g, box.x + Math.min(1, v / axis.max) * box.w + 4, box.y + (r + 0.5) * box.h / 2,
              fmt(v, p.digits) + "\u00B0", { anchor: "start", size: 10 });
          });
        });
      }
    };
  });

  register("vit_patches", function (data, st) {
    if (!data._img) data._img = unpack(data.images);
    var h = data.height, w = data.width, p = st.patch_size, idx = st.image;
    var img = data._img.slice([idx]);
    var k = data.sizes.indexOf(p), acc = data.accuracy[k];
    var height = 360, top = 96, cell = 26;
    var label = data.labels[idx] + ", parches de " + p + "\u00d7" + p + ": " + data.tokens[k] +
      " tókenes, " + Math.round(data.kmacs[k]) + " mil MAC por imagen, " +
      (acc === null ? "sin entrenar" : "exactitud " + acc.toFixed(1) + " %");
    var trained = data.accuracy.filter(function (v) { return v !== null; });
    var accLo = trained.length ? Math.max(0, Math.floor(Math.min.apply(null, trained) - 10)) : 0;
    var digit = { x: 30, y: top, w: w * cell, h: h * cell };
    var sizes = data.sizes.map(String), bw = 190, gap = 70, x0 = digit.x + digit.w + 70;
    var width = x0 + 3 * bw + 2 * gap + 20;
    return {
      width: width, height: height,
      alt: data.alt + " Estado: " + label + ".",
      draw: function (g) {
        headline(g, data.title, label);
        heatmap(g, digit, {
          rows: h, cols: w, value: function (r, c) { return img[r * w + c]; }, lut: THEME.image, vmin: 0, vmax: 1,
          title: (w / p) * (h / p) + " parches + [CLS]"
        });
        for (var a = 0; a <= w; a += p) svgEl("line", { x1: digit.x + a * cell, x2: digit.x + a * cell, y1: digit.y, y2: digit.y + digit.h, stroke: THEME.grid, "stroke-width": 2 }, g);
        for (a = 0; a <= h; a += p) svgEl("line", { x1: digit.x, x2: digit.x + digit.w, y1: digit.y + a * cell, y2: digit.y + a * cell, stroke: THEME.grid, "stroke-width": 2 }, g);
        var gw = w / p, gh = h / p;
        if (p > 1 && gw * gh <= 16) {
          for (var r = 0; r < gh; r++) for (var c = 0; c < gw; c++) {
            var x = digit.x + c * p * cell + 3, y = digit.y + r * p * cell + 3;
            svgEl("rect", { x: x, y: y, width: 16, height: 13, rx: 2, fill: THEME.grid }, g);
            text(g, x + 8, y + 7, String(r * gw + c + 1), { size: 9, fill: "#ffffff" });
          }
        }
        var chart = function (i, values, o) {
          bars(g, { x: x0 + i * (bw + gap), y: top + 10, w: bw, h: 170 }, Object.assign({
            values: values, labels: sizes, highlight: k, valueLabels: true, xlabel: "tamaño del parche p"
          }, o));
        };
        chart(0, data.tokens, { title: "tókenes (con [CLS])", ymax: 1.15 * Math.max.apply(null, data.tokens), digits: 0, tickDigits: 0 });
        chart(1, data.kmacs, { title: "coste (miles de MAC)", ymax: 1.15 * Math.max.apply(null, data.kmacs), digits: 0, tickDigits: 0 });
        chart(2, data.accuracy, { title: "exactitud en prueba (%)", lo: accLo, ymax: 105, digits: 1, tickDigits: 0 });
      }
    };
  });

  // ----------------------------------------------------------------- controls
  function optionsOf(ctrl, state) {
    if (!ctrl.options_by) return ctrl.options;
    return ctrl.options_by.map[String(state[ctrl.options_by.on])] || [];
  }
  /* Controls that follow control `name`: their options (options_by) or the value
   * chosen for its new value (value_by: e.g. the query of the chosen prompt). */
  function follows(ctrl, name) {
    return (ctrl.options_by && ctrl.options_by.on === name) || (ctrl.value_by && ctrl.value_by.on === name);
  }

  function buildControls(root, data, state, redraw) {
    var bar = htmlEl("div", { "class": "dldna-controls" }, root), inputs = {};
    var uid = "dldna-c" + (++counter);
    function fill(ctrl) {
      var input = inputs[ctrl.name];
      if (ctrl.type === "toggle") { input.checked = !!state[ctrl.name]; return; }
      var opts = optionsOf(ctrl, state), values = opts.map(function (o) { return o[0]; });
      if (ctrl.type === "range") {
        input.max = String(opts.length - 1);
        var idx = Math.max(0, values.indexOf(state[ctrl.name]));
        input.value = String(idx);
        state[ctrl.name] = values[idx];
        input._readout.textContent = opts[idx][1];
        input.setAttribute("aria-valuetext", opts[idx][1]);
        return;
      }
      input.innerHTML = "";
      opts.forEach(function (o) { htmlEl("option", { value: String(o[0]) }, input, o[1]); });
      if (ctrl.type === "multi") {
        var kept = (state[ctrl.name] || []).filter(function (v) { return values.indexOf(v) >= 0; });
        state[ctrl.name] = kept;
        Array.prototype.forEach.call(input.options, function (opt, i) { opt.selected = kept.indexOf(values[i]) >= 0; });
      } else {
        if (values.indexOf(state[ctrl.name]) < 0) state[ctrl.name] = values[0];
        input.value = String(state[ctrl.name]);
      }
    }
    data.controls.forEach(function (ctrl, i) {
      var wrap = htmlEl("div", { "class": "dldna-control" }, bar), id = uid + "-" + i, input;
      var lab = htmlEl("label", { "for": id }, wrap, ctrl.label);
      if (ctrl.type === "range") {
        input = htmlEl("input", { type: "range", id: id, min: "0", step: "1", "data-name": ctrl.name }, wrap);
        input._readout = htmlEl("output", { "for": id, "class": "dldna-readout" }, wrap);
      } else if (ctrl.type === "toggle") {
        wrap.removeChild(lab);
        input = htmlEl("input", { type: "checkbox", id: id, "data-name": ctrl.name }, wrap);
        htmlEl("label", { "for": id }, wrap, ctrl.label);
      } else {
        input = htmlEl("select", { id: id, "data-name": ctrl.name }, wrap);
        if (ctrl.type === "multi") { input.multiple = true; input.size = 4; }
      }
      inputs[ctrl.name] = input;
      state[ctrl.name] = ctrl.value;
      fill(ctrl);
      var handler = function () {
        var opts = optionsOf(ctrl, state);
        if (ctrl.type === "range") {
          var o = opts[Number(input.value)];
          state[ctrl.name] = o[0];
          input._readout.textContent = o[1];
          input.setAttribute("aria-valuetext", o[1]);
        } else if (ctrl.type === "toggle") {
          state[ctrl.name] = input.checked;
        } else if (ctrl.type === "multi") {
          state[ctrl.name] = Array.prototype.filter.call(input.options, function (opt) { return opt.selected; })
            .map(function (opt) { return Number(opt.value); });
        } else {
          state[ctrl.name] = Number(input.value);
        }
        data.controls.forEach(function (other) {
          if (!follows(other, ctrl.name)) return;
          if (other.value_by) {
            var chosen = other.value_by.map[String(state[ctrl.name])];
            if (chosen !== undefined) state[other.name] = chosen;
          }
          fill(other);
        });
        redraw();
      };
      input.addEventListener(ctrl.type === "range" ? "input" : "change", handler);
    });
  }

  // -------------------------------------------------------------------- mount
  function message(root, words) {
    var box = root.querySelector(".dldna-message") || htmlEl("p", { "class": "dldna-message", role: "alert" }, root);
    box.textContent = words;
    return box;
  }

  /* Mount one explorer (its element or its id): controls, then the picture. */
  function mount(target) {
    var root = typeof target === "string" ? document.getElementById(target) : target;
    if (!root || root.getAttribute("data-dldna-mounted")) return;
    if (!VIEWS[root.getAttribute("data-dldna-view")]) return;  // its view may register later
    var source = root.querySelector("script.dldna-data");
    if (!source) return;
    root.setAttribute("data-dldna-mounted", "1");
    if (!THEME) {
      message(root, "Faltan los colores del libro (window.dldnaTheme): la página no cargó dldna-explorer.js completo.");
      return;
    }
    var data = JSON.parse(source.textContent), state = {};
    var fallback = root.querySelector(".dldna-fallback");
    if (fallback) fallback.style.display = "none";
    var hatch = "dldna-hatch-" + (++counter);
    var note = htmlEl("p", { "class": "dldna-note", "aria-live": "polite" }, root);
    var figure = htmlEl("figure", { "class": "dldna-figure" }, root);
    var svg = svgEl("svg", { role: "img", "class": "dldna-svg", preserveAspectRatio: "xMinYMin meet" }, figure);
    var caption = htmlEl("figcaption", { "class": "dldna-caption dldna-sr" }, figure);
    function redraw() {
      try {
        var view = VIEWS[data.view](data, state);
        while (svg.firstChild) svg.removeChild(svg.firstChild);
        svg.setAttribute("viewBox", "0 0 " + view.width + " " + view.height);
        svg.setAttribute("aria-label", view.alt);
        svg.style.maxWidth = view.width + "px";
        svgEl("title", {}, svg, view.alt);
        var defs = svgEl("defs", {}, svg);
        var pat = svgEl("pattern", { id: hatch, patternUnits: "userSpaceOnUse", width: 7, height: 7, patternTransform: "rotate(45)" }, defs);
        svgEl("rect", { width: 7, height: 7, fill: THEME.masked }, pat);
        svgEl("line", { x1: 0, y1: 0, x2: 0, y2: 7, stroke: THEME.masked_edge, "stroke-width": 2 }, pat);
        svgEl("rect", { width: view.width, height: view.height, fill: "#ffffff" }, svg);
        var g = svgEl("g", {}, svg);
        view.draw(g, hatch);
        caption.textContent = view.alt;
        note.textContent = view.note || "";
        note.style.display = view.note ? "" : "none";
        figure.style.display = "";
        var old = root.querySelector(".dldna-message");
        if (old) old.parentNode.removeChild(old);
        root.setAttribute("data-dldna-state", JSON.stringify(state));
      } catch (err) {
        figure.style.display = "none";
        note.style.display = "none";
        message(root, "No se pudo dibujar el explorador con estos valores; prueba otros.");
        if (window.console) console.error("dldna: " + (err && err.stack ? err.stack : err));
      }
    }
    buildControls(root, data, state, redraw);
    root.insertBefore(root.querySelector(".dldna-controls"), note);
    redraw();
  }

  function mountAll() {
    started = true;
    Array.prototype.forEach.call(document.querySelectorAll(".dldna-explorer[data-dldna-view]"), mount);
  }

  window.dldnaExplorer = {
    mount: mount, mountAll: mountAll, register: register, unpack: unpack, lutColor: lutColor,
    draw: { text: text, heatmap: heatmap, bars: bars, hbars: hbars, lines: lines, colorbar: colorbar, swatch: swatch }
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})();

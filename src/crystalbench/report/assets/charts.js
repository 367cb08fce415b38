/* crystalbench charts: a tiny hand-written SVG chart layer (no dependencies, no network).
 * CrystalCharts.scatter / lines / bars / forest(container, options) draw into `container`.
 * Every chart is an <svg viewBox> that scales with its container; hover text is <title>. */
(function () {
  "use strict";
  var W = 460, H = 300;
  var M = { top: 14, right: 16, bottom: 46, left: 52 };
  function size(o) { W = o.width || 460; H = o.height || 300; }

  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function num(v) { return Math.round(v * 100) / 100; }
  function scale(d0, d1, r0, r1) {
    var span = d1 - d0 || 1;
    return function (v) { return r0 + (v - d0) / span * (r1 - r0); };
  }
  function ticks(d0, d1, count) {
    var span = d1 - d0;
    if (!(span > 0)) return [d0];
    var step = Math.pow(10, Math.floor(Math.log10(span / count)));
    var err = span / count / step;
    if (err >= 7.5) step *= 10; else if (err >= 3.5) step *= 5; else if (err >= 1.5) step *= 2;
    var out = [];
    for (var v = Math.ceil(d0 / step - 1e-9) * step; v <= d1 + step * 1e-9; v += step) {
      out.push(Math.round(v / step) * step);
    }
    return out;
  }
  function fmt(v, f) {
    if (typeof f === "function") return f(v);
    return String(Math.round(v * 1000) / 1000);
  }
  function open(name, w, h) {
    return '<svg xmlns="http://www.w3.org/2000/svg" class="chart-svg" data-chart="' + esc(name) +
      '" viewBox="0 0 ' + (w || W) + " " + (h || H) + '" role="img" preserveAspectRatio="xMidYMid meet">';
  }
  function axes(x, y, xt, yt, o, w, h) {
    w = w || W; h = h || H;
    var s = '<g class="axis">';
    yt.forEach(function (t) {
      s += '<line class="grid-line" x1="' + M.left + '" x2="' + (w - M.right) + '" y1="' + num(y(t)) + '" y2="' + num(y(t)) + '"/>';
      s += '<text x="' + (M.left - 6) + '" y="' + num(y(t) + 4) + '" text-anchor="end" font-size="12">' + esc(fmt(t, o.yFormat)) + "</text>";
    });
    if (xt) {
      xt.forEach(function (t) {
        s += '<line class="grid-line" y1="' + M.top + '" y2="' + (h - M.bottom) + '" x1="' + num(x(t)) + '" x2="' + num(x(t)) + '"/>';
        s += '<text x="' + num(x(t)) + '" y="' + (h - M.bottom + 16) + '" text-anchor="middle" font-size="12">' + esc(fmt(t, o.xFormat)) + "</text>";
      });
    }
    s += '<line x1="' + M.left + '" x2="' + (w - M.right) + '" y1="' + (h - M.bottom) + '" y2="' + (h - M.bottom) + '"/>';
    s += '<line x1="' + M.left + '" x2="' + M.left + '" y1="' + M.top + '" y2="' + (h - M.bottom) + '"/>';
    if (o.xLabel) s += '<text x="' + ((M.left + w - M.right) / 2) + '" y="' + (h - 8) + '" text-anchor="middle" font-size="12">' + esc(o.xLabel) + "</text>";
    if (o.yLabel) s += '<text transform="translate(14 ' + ((M.top + h - M.bottom) / 2) + ') rotate(-90)" text-anchor="middle" font-size="12">' + esc(o.yLabel) + "</text>";
    return s + "</g>";
  }
  function empty(container, name, message) {
    container.innerHTML = open(name) + '<text class="empty" x="' + W / 2 + '" y="' + H / 2 + '" text-anchor="middle">' + esc(message) + "</text></svg>";
  }

  /* points: [{x, y, xlo, xhi, ylo, yhi, color, label, title, r, hollow}] */
  function scatter(container, o) {
    size(o);
    var pts = (o.points || []).filter(function (p) { return p.x != null && p.y != null; });
    if (!pts.length) return empty(container, o.name || "scatter", "no data");
    var xd = o.xDomain || [0, 1], yd = o.yDomain || [0, 1];
    var x = scale(xd[0], xd[1], M.left, W - M.right), y = scale(yd[0], yd[1], H - M.bottom, M.top);
    var s = open(o.name || "scatter") + axes(x, y, ticks(xd[0], xd[1], 5), ticks(yd[0], yd[1], 5), o);
    if (o.diagonal) {
      s += '<line class="diag" x1="' + x(xd[0]) + '" y1="' + y(yd[0]) + '" x2="' + x(xd[1]) + '" y2="' + y(yd[1]) + '"/>';
      if (o.diagonalLabel) {
        // Along the diagonal, just under it (models rarely have recall above precision).
        var angle = Math.atan2(y(yd[1]) - y(yd[0]), x(xd[1]) - x(xd[0])) * 180 / Math.PI;
        var lx = x(xd[0] + 0.97 * (xd[1] - xd[0])), ly = y(yd[0] + 0.97 * (yd[1] - yd[0]));
        s += '<text x="' + num(lx) + '" y="' + num(ly + 11) + '" font-size="10" fill="#5b6673" text-anchor="end" transform="rotate(' + num(angle) + " " + num(lx) + " " + num(ly) + ')">' + esc(o.diagonalLabel) + "</text>";
      }
    }
    var placed = [];
    function collides(b) {
      return placed.some(function (q) { return b.x0 < q.x1 && q.x0 < b.x1 && b.y0 < q.y1 && q.y0 < b.y1; });
    }
    function placeLabel(px, py, r, text, fs) {
      var w = text.length * fs * 0.58, h = fs + 2;
      var options = [[px + r + 4, py - r - 2, "start"], [px - r - 4, py - r - 2, "end"], [px + r + 4, py + r + fs, "start"],
        [px - r - 4, py + r + fs, "end"], [px - w / 2, py - r - fs - 2, "start"], [px - w / 2, py + r + fs + 4, "start"]];
      for (var i = 0; i < options.length; i++) {
        var o2 = options[i], x0 = o2[2] === "start" ? o2[0] : o2[0] - w;
        var b = { x0: x0, x1: x0 + w, y0: o2[1] - fs, y1: o2[1] - fs + h };
        if (x0 < M.left - 4 || x0 + w > W + 2 || b.y0 < 0) continue;
        if (!collides(b)) { placed.push(b); return o2.concat([i > 1, b]); }
      }
      // Every corner taken: step further down, then up, until a free place (a leader line
      // says whose it is), so that two labels never overlap.
      var side = px < W - M.right - w ? "start" : "end", lx = side === "start" ? px + r + 4 : px - r - 4;
      for (var k = 1; k < 40; k++) {
        var dy = (k % 2 ? 1 : -1) * Math.ceil(k / 2) * (h + 1), ly = py - r - 2 + dy;
        var bx0 = side === "start" ? lx : lx - w, bk = { x0: bx0, x1: bx0 + w, y0: ly - fs, y1: ly - fs + h };
        if (bk.y0 < 0 || bk.y1 > H) continue;
        if (!collides(bk)) { placed.push(bk); return [lx, ly, side, true, bk]; }
      }
      return [lx, py - r - 2, side, false];
    }
    // Big points first so that their labels get the best places.
    pts = pts.slice().sort(function (a, b) { return (a.hollow ? 1 : 0) - (b.hollow ? 1 : 0); });
    pts.forEach(function (p) {
      var px = x(p.x), py = y(p.y), r = p.r || 6;
      placed.push({ x0: px - r, x1: px + r, y0: py - r, y1: py + r });
    });
    pts.forEach(function (p) {
      var px = x(p.x), py = y(p.y), c = p.color || "#333", r = p.r || 6;
      var g = '<g class="mark"><title>' + esc(p.title || p.label || "") + "</title>";
      if (p.xlo != null && p.xhi != null) g += '<line x1="' + num(x(p.xlo)) + '" x2="' + num(x(p.xhi)) + '" y1="' + num(py) + '" y2="' + num(py) + '" stroke="' + c + '" stroke-width="1.5"/>';
      if (p.ylo != null && p.yhi != null) g += '<line y1="' + num(y(p.ylo)) + '" y2="' + num(y(p.yhi)) + '" x1="' + num(px) + '" x2="' + num(px) + '" stroke="' + c + '" stroke-width="1.5"/>';
      g += '<circle cx="' + num(px) + '" cy="' + num(py) + '" r="' + r + '" fill="' + (p.hollow ? "#fff" : c) + '" stroke="' + c + '" stroke-width="' + (p.hollow ? 1.5 : 1) + '" fill-opacity="' + (p.hollow ? 0.9 : 0.85) + '"/>';
      if (p.label && o.labels !== false) {
        var fs = p.hollow ? 10 : 12, at = placeLabel(px, py, r, p.label, fs);
        if (at[3]) {
          // Label moved away from its usual corner: a leader line says whose it is.
          var bx = at[4], tx = Math.max(bx.x0, Math.min(px, bx.x1)), ty = py < bx.y0 ? bx.y0 : bx.y1;
          g += '<line x1="' + num(px) + '" y1="' + num(py) + '" x2="' + num(tx) + '" y2="' + num(ty) + '" stroke="' + c + '" stroke-width="0.8" stroke-opacity="0.7"/>';
        }
        g += '<text x="' + num(at[0]) + '" y="' + num(at[1]) + '" font-size="' + fs + '" fill="' + c + '" style="fill:' + c + '" text-anchor="' + at[2] + '">' + esc(p.label) + "</text>";
      }
      s += g + "</g>";
    });
    container.innerHTML = s + "</svg>";
  }

  /* categories on x; series: [{name, color, values, titles, dashed}] */
  function lines(container, o) {
    size(o);
    var cats = o.categories || [], series = o.series || [];
    var any = series.some(function (se) { return se.values.some(function (v) { return v != null; }); });
    if (!cats.length || !any) return empty(container, o.name || "lines", "no data");
    var yd = o.yDomain;
    if (!yd) {
      var hi = 0;
      series.forEach(function (se) { se.values.forEach(function (v) { if (v != null && v > hi) hi = v; }); });
      yd = [0, hi > 0 ? hi * 1.1 : 1];
    }
    var step = (W - M.left - M.right) / cats.length;
    var x = function (i) { return M.left + step * (i + 0.5); };
    var y = scale(yd[0], yd[1], H - M.bottom, M.top);
    var s = open(o.name || "lines") + axes(null, y, null, ticks(yd[0], yd[1], 5), o);
    var every = Math.max(1, Math.ceil(cats.length / 16));
    cats.forEach(function (c, i) {
      if (i % every === 0) s += '<text x="' + num(x(i)) + '" y="' + (H - M.bottom + 16) + '" text-anchor="middle" font-size="12">' + esc(c) + "</text>";
    });
    series.forEach(function (se) {
      var d = "", pen = false;
      se.values.forEach(function (v, i) {
        if (v == null) { pen = false; return; }
        d += (pen ? "L" : "M") + num(x(i)) + " " + num(y(v)); pen = true;
      });
      s += '<g class="mark series"><path d="' + d + '" fill="none" stroke="' + se.color + '" stroke-width="2"' + (se.dashed ? ' stroke-dasharray="5 4"' : "") + "/>";
      if (!se.noDots) {
        se.values.forEach(function (v, i) {
          if (v == null) return;
          s += '<circle cx="' + num(x(i)) + '" cy="' + num(y(v)) + '" r="3.5" fill="' + se.color + '"><title>' + esc((se.titles && se.titles[i]) || (se.name + ": " + fmt(v, o.yFormat))) + "</title></circle>";
        });
      }
      s += "</g>";
    });
    container.innerHTML = s + "</svg>";
  }

  /* grouped bars: categories on x; series: [{name, color, values, lo, hi, titles}] */
  function bars(container, o) {
    size(o);
    var cats = o.categories || [], series = o.series || [];
    if (!cats.length || !series.length) return empty(container, o.name || "bars", "no data");
    var yd = o.yDomain || [0, 1];
    var group = (W - M.left - M.right) / cats.length;
    var inner = group * 0.8, bw = inner / series.length;
    var y = scale(yd[0], yd[1], H - M.bottom, M.top);
    var s = open(o.name || "bars") + axes(null, y, null, ticks(yd[0], yd[1], 5), o);
    cats.forEach(function (c, i) {
      var gx = M.left + group * i + (group - inner) / 2;
      s += '<text x="' + num(M.left + group * (i + 0.5)) + '" y="' + (H - M.bottom + 16) + '" text-anchor="middle" font-size="12">' + esc(c) + "</text>";
      series.forEach(function (se, k) {
        var v = se.values[i];
        if (v == null) return;
        var bx = gx + bw * k, top = y(Math.max(v, yd[0]));
        s += '<g class="mark"><title>' + esc((se.titles && se.titles[i]) || (se.name + " · " + c + ": " + fmt(v, o.yFormat))) + "</title>";
        s += '<rect x="' + num(bx + 1) + '" y="' + num(top) + '" width="' + num(Math.max(1, bw - 2)) + '" height="' + num(Math.max(0, H - M.bottom - top)) + '" fill="' + se.color + '" fill-opacity="0.85"/>';
        if (se.lo && se.hi && se.lo[i] != null) {
          var cx = num(bx + bw / 2);
          s += '<line x1="' + cx + '" x2="' + cx + '" y1="' + num(y(se.lo[i])) + '" y2="' + num(y(se.hi[i])) + '" stroke="#1d232b" stroke-width="1.2"/>';
        }
        s += "</g>";
      });
    });
    container.innerHTML = s + "</svg>";
  }

  /* forest plot: rows: [{label, est, lo, hi, title, color}] with a zero line */
  function forest(container, o) {
    size(o);
    var rows = o.rows || [];
    if (!rows.length) return empty(container, o.name || "forest", "no data");
    var rowH = 24, h = M.top + rows.length * rowH + 40, left = 120, w = W;
    var ext = 0;
    rows.forEach(function (r) { ext = Math.max(ext, Math.abs(r.lo), Math.abs(r.hi), Math.abs(r.est)); });
    ext = ext > 0 ? ext * 1.15 : 0.05;
    var x = scale(-ext, ext, left, w - M.right);
    var s = open(o.name || "forest", w, h);
    var xt = ticks(-ext, ext, 4);
    xt.forEach(function (t) {
      s += '<line class="grid-line" x1="' + num(x(t)) + '" x2="' + num(x(t)) + '" y1="' + M.top + '" y2="' + (h - 34) + '"/>';
      s += '<text x="' + num(x(t)) + '" y="' + (h - 20) + '" text-anchor="middle" font-size="12">' + esc(fmt(t, o.xFormat)) + "</text>";
    });
    s += '<line x1="' + num(x(0)) + '" x2="' + num(x(0)) + '" y1="' + M.top + '" y2="' + (h - 34) + '" stroke="#5b6673"/>';
    if (o.xLabel) s += '<text x="' + ((left + w - M.right) / 2) + '" y="' + (h - 4) + '" text-anchor="middle" font-size="12">' + esc(o.xLabel) + "</text>";
    rows.forEach(function (r, i) {
      var cy = M.top + rowH * (i + 0.5), c = r.color || "#0b63b6";
      s += '<g class="mark"><title>' + esc(r.title || r.label) + "</title>";
      s += '<text x="' + (left - 8) + '" y="' + num(cy + 4) + '" text-anchor="end" font-size="12"' + (r.bold ? ' font-weight="700"' : "") + ">" + esc(r.label) + "</text>";
      s += '<line x1="' + num(x(r.lo)) + '" x2="' + num(x(r.hi)) + '" y1="' + num(cy) + '" y2="' + num(cy) + '" stroke="' + c + '" stroke-width="2"/>';
      s += '<rect x="' + num(x(r.est) - 4) + '" y="' + num(cy - 4) + '" width="8" height="8" fill="' + c + '"/></g>';
    });
    container.innerHTML = s + "</svg>";
  }

  /* "1 item", "2 items", "3 replies" */
  function plural(n, noun, many) { return n + " " + (n === 1 ? noun : (many || noun + "s")); }

  /* A LaTeX answer as plain text: \frac{3}{2} -> 3/2, \sqrt{2} -> √2, $x$ -> x (answers are
     short; anything it does not know stays as written). */
  function plainMath(text) {
    if (text == null) return text;
    var s = String(text), before;
    if (s.indexOf("\\") < 0 && s.indexOf("$") < 0) return s;
    s = s.replace(/^\s*\$+\s*|\s*\$+\s*$/g, "").replace(/\\[()[\]]/g, "");
    var group = "\\{([^{}]*)\\}";
    do {
      before = s;
      s = s.replace(new RegExp("\\\\[dt]?frac\\s*" + group + "\\s*" + group, "g"), function (m, a, b) {
        var wrap = function (t) { return /^[\w.√π]+$/.test(t) ? t : "(" + t + ")"; };
        return wrap(a) + "/" + wrap(b);
      });
      s = s.replace(new RegExp("\\\\sqrt\\s*" + group, "g"), function (m, a) { return "√" + (/^[\w.]+$/.test(a) ? a : "(" + a + ")"); });
      s = s.replace(new RegExp("\\\\(?:text|mathrm|mathbf|textbf|operatorname|boxed)\\s*" + group, "g"), "$1");
      s = s.replace(new RegExp("\\^\\s*" + group, "g"), "^$1");
    } while (s !== before);
    var words = { times: "×", cdot: "·", div: "÷", pi: "π", le: "≤", leq: "≤", ge: "≥", geq: "≥", neq: "≠", ne: "≠", pm: "±", infty: "∞", degree: "°", circ: "°", approx: "≈", left: "", right: "", "%": "%", ",": " ", ";": " ", "!": "" };
    s = s.replace(/\\(%|,|;|!|[A-Za-z]+)\s*/g, function (m, w) { return Object.prototype.hasOwnProperty.call(words, w) ? words[w] : m; });
    return s.replace(/\^°/g, "°").replace(/\s+/g, " ").trim();
  }

  window.CrystalCharts = { scatter: scatter, lines: lines, bars: bars, forest: forest, esc: esc, plural: plural, plainMath: plainMath };
})();

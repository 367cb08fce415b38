/* crystalbench report: renders everything from the embedded JSON, on demand. */
(function () {
  "use strict";
  var C = window.CrystalCharts, esc = C.esc, plural = C.plural, plainMath = C.plainMath;
  /* An answer as the page shows it: simple LaTeX as plain text, the raw text on hover. */
  function answerHtml(text) {
    var plain = plainMath(text);
    return plain === text ? esc(text) : '<span class="math" title="' + esc(text) + '">' + esc(plain) + "</span>";
  }
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var RUNS = D.runs, ITEMS = D.items, META = D.meta, CH = D.charts;
  var NI = ITEMS.id.length;
  var METRICS = D.metrics; // [key, title, kind, higher]
  var METRIC = {};
  METRICS.concat(D.other_metrics || []).forEach(function (m) { METRIC[m[0]] = { title: m[1], kind: m[2], higher: m[3] }; });
  var PAGE_ITEMS = 50, PAGE_LIST = 12;

  function $(id) { return document.getElementById(id); }
  function fmtKind(v, kind) {
    if (v == null || isNaN(v)) return "—";
    if (kind === "pct") return (100 * v).toFixed(2);
    if (kind === "f2") return Number(v).toFixed(2);
    return Number(v).toFixed(3);
  }
  function fmtP(p) {
    if (p == null) return "—";
    if (p < 0.001) return "<0.001";
    return p.toFixed(3);
  }
  function signed(v, kind) {
    var s = fmtKind(Math.abs(v), kind);
    return (v > 0 ? "+" : v < 0 ? "−" : "±") + s;
  }
  function swatch(color) { return '<span class="swatch" style="background:' + color + '"></span>'; }

  // ---------------------------------------------------------------- index: global item -> run position
  RUNS.forEach(function (run) {
    var at = new Int32Array(NI).fill(-1);
    run.items.pos.forEach(function (g, k) { at[g] = k; });
    run.at = at;
    run.n = run.items.pos.length;
  });

  // ---------------------------------------------------------------- warnings
  (function warnings() {
    var box = $("warnings"), html = "";
    (META.warnings || []).forEach(function (w) { html += '<p class="banner warn">⚠ ' + esc(w) + "</p>"; });
    html += '<p class="banner info">' + esc(META.image_note) + "</p>";
    box.innerHTML = html;
  })();

  // ---------------------------------------------------------------- sortable tables
  function makeSortable(table, onSort) {
    var heads = table.querySelectorAll("thead th[data-key]");
    heads.forEach(function (th, col) {
      th.tabIndex = 0;
      function activate() {
        var dir = th.getAttribute("aria-sort") === "descending" ? "ascending" : "descending";
        if (th.dataset.type === "text" && !th.hasAttribute("aria-sort")) dir = "ascending";
        heads.forEach(function (other) { other.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir);
        if (onSort) { onSort(th.dataset.key, dir); return; }
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var index = Array.prototype.indexOf.call(th.parentNode.children, th);
        rows.sort(function (a, b) {
          var va = a.children[index].dataset.value, vb = b.children[index].dataset.value;
          var cmp = th.dataset.type === "num" ? parseFloat(va) - parseFloat(vb) : String(va).localeCompare(String(vb));
          return dir === "ascending" ? cmp : -cmp;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      th.addEventListener("click", activate);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); activate(); } });
    });
  }

  (function leaderboard() {
    var table = $("leaderboard");
    if (!table) return;
    // Bold the best value of every higher-is-better column (as shown, rounded).
    if (RUNS.length > 1) {
      var headers = table.querySelectorAll("thead th");
      headers.forEach(function (th, col) {
        var m = METRIC[th.dataset.key];
        if (!m || !m.higher || !METRICS.some(function (x) { return x[0] === th.dataset.key; })) return;
        var cells = Array.prototype.map.call(table.tBodies[0].rows, function (r) { return r.children[col]; });
        var shown = cells.map(function (td) { return parseFloat(td.querySelector(".v").textContent); });
        var top = Math.max.apply(null, shown);
        cells.forEach(function (td, i) { if (shown[i] === top) td.classList.add("best"); });
      });
    }
    makeSortable(table);
    var html = '<p class="hint">';
    RUNS.forEach(function (run) {
      var c = run.counts;
      html += swatch(run.color) + "<b>" + esc(run.name) + "</b>: " + plural(c.n_items, "item") + ", " + c.n_scored + " scored, " +
        (c.n_no_steps || 0) + " without steps, " + c.n_missing + " missing, " + plural(c.n_parse_failed, "parse failure") + ", " + c.n_judge_unscored + " judge-unscored" +
        (c.n_unknown_ids ? ", " + plural(c.n_unknown_ids, "unknown id") + " skipped" : "") +
        (c.n_invalid_records ? ", " + plural(c.n_invalid_records, "invalid record") + " skipped" : "") +
        (c.n_alt_chain_won ? ", " + c.n_alt_chain_won + " of " + plural(c.n_multi_chain, "multi-reference item") + " scored on an alternative chain" : "") +
        (c.n_compat_blank ? ", " + plural(c.n_compat_blank, "blank answer") + " credited by crystal-metrics 0.2's rules" : "") + "." +
        (c.n_order_undefined ? ' <span class="order-undefined">' + plural(c.n_order_undefined, "item") + (c.n_order_undefined === 1 ? " has" : " have") + " fewer than two matched steps: " + (c.n_order_undefined === 1 ? "its" : "their") + " LIS and Kendall are 1.0 by the paper's convention (an undefined order), which raises the LIS column.</span>" : "");
      if (run.guard && run.guard !== "none") {
        var reasons = Object.keys(run.vetoed_by_reason || {}).filter(function (key) { return run.vetoed_by_reason[key]; })
          .map(function (key) { return key + " " + run.vetoed_by_reason[key]; });
        html += ' <span class="guard-note" id="guard-' + RUNS.indexOf(run) + '">Fact guard <code>' + esc(run.guard) + "</code> (not in the paper): " + plural(c.n_vetoed_pairs || 0, "pair") + " vetoed in " +
          plural(c.n_vetoed_items || 0, "item") + (reasons.length ? " (" + esc(reasons.join(", ")) + ")" : "") + ".</span>";
      }
      var pr = run.pairs;
      if (pr) html += ' <span id="pairs-' + RUNS.indexOf(run) + '">Pairs (MMVP): ' + pr.n_pairs_right + " of " + pr.n_pairs + " right (" + (100 * pr.pair_accuracy).toFixed(2) + "%), " +
        pr.n_pairs_incomplete + " incomplete (counted as not right); paired questions " + (100 * pr.question_accuracy).toFixed(2) + "% right.</span>";
      html += "<br>";
    });
    $("counts").innerHTML = html + "</p>";
  })();

  // ---------------------------------------------------------------- legend and charts
  $("legend").innerHTML = RUNS.map(function (r) { return "<span>" + swatch(r.color) + esc(r.name) + "</span>"; }).join("");

  function plot(id) { return document.querySelector("#" + id + " .plot"); }
  function ciTitle(run, key) {
    var v = run.leaderboard[key];
    return METRIC[key].title + " " + fmtKind(v[0], METRIC[key].kind) + " [" + fmtKind(v[1], METRIC[key].kind) + ", " + fmtKind(v[2], METRIC[key].kind) + "]";
  }
  function drawPR() {
    var showSources = $("pr-sources").checked, pts = [];
    RUNS.forEach(function (run, r) {
      var p = CH.points[r];
      if (showSources) {
        Object.keys(CH.source_points[r]).forEach(function (src) {
          var s = CH.source_points[r][src];
          pts.push({ x: s.recall, y: s.precision, color: run.color, r: 4, hollow: true, label: src,
            title: run.name + " · " + src + " (" + s.n + " items): precision " + fmtKind(s.precision) + ", recall " + fmtKind(s.recall) });
        });
      }
      pts.push({ x: p.recall[0], y: p.precision[0], xlo: p.recall[1], xhi: p.recall[2], ylo: p.precision[1], yhi: p.precision[2],
        color: run.color, label: run.name, title: run.name + ": " + ciTitle(run, "precision") + "; " + ciTitle(run, "recall") });
    });
    C.scatter(plot("chart-pr"), { name: "precision-recall", points: pts, xLabel: "Recall", yLabel: "Precision", diagonal: true, diagonalLabel: "precision = recall" });
  }
  function drawCharts() {
    drawPR();
    C.scatter(plot("chart-accf1"), {
      name: "accuracy-f1", xLabel: "Match F1", yLabel: "Accuracy (%)", yFormat: function (v) { return Math.round(v * 100); },
      points: RUNS.map(function (run, r) {
        var p = CH.points[r];
        return { x: p.match_f1[0], y: p.accuracy[0], xlo: p.match_f1[1], xhi: p.match_f1[2], ylo: p.accuracy[1], yhi: p.accuracy[2],
          color: run.color, label: run.name, title: run.name + ": " + ciTitle(run, "accuracy") + " %; " + ciTitle(run, "match_f1") };
      })
    });
    C.lines(plot("chart-length"), {
      name: "f1-by-length", categories: CH.length_labels, yDomain: [0, 1], xLabel: "Reference steps", yLabel: "Mean Match F1",
      series: RUNS.map(function (run, r) {
        var bins = CH.f1_by_length[r];
        return { name: run.name, color: run.color, values: bins.map(function (b) { return b.mean; }),
          titles: bins.map(function (b, i) { return run.name + " · " + CH.length_labels[i] + " steps: F1 " + fmtKind(b.mean) + (b.sem != null ? " ± " + fmtKind(b.sem) + " (s.e.)" : "") + ", " + plural(b.n, "item"); }) };
      })
    });
    var lisLabels = [];
    for (var i = 0; i + 1 < CH.lis_edges.length; i++) lisLabels.push(CH.lis_edges[i].toFixed(1) + (i === CH.lis_edges.length - 2 ? "–1" : ""));
    C.lines(plot("chart-lis"), {
      name: "lis-distribution", categories: lisLabels, xLabel: "LIS ratio (bin start)", yLabel: "Share of items", yFormat: function (v) { return Math.round(v * 100) + "%"; },
      series: RUNS.map(function (run, r) {
        var h = CH.lis_hist[r];
        // One item is no distribution (a 100% spike): the note under the chart says so.
        return { name: run.name, color: run.color, values: h.n > 1 ? h.shares : h.shares.map(function () { return null; }),
          titles: h.shares.map(function (s, i) { return run.name + " · LIS " + lisLabels[i] + ": " + (100 * s).toFixed(1) + "% of " + plural(h.n, "item"); }) };
      })
    });
    var lisNotes = [];
    RUNS.forEach(function (run, r) {
      var h = CH.lis_hist[r];
      if (h.n > 1) return;
      var bin = h.shares.indexOf(Math.max.apply(null, h.shares));
      lisNotes.push(esc(run.name) + ": " + (h.n ? "only 1 item has at least two matched steps (LIS " + lisLabels[bin] + "): too few to draw a distribution" : "no item has at least two matched steps") + ".");
    });
    $("lis-note").innerHTML = lisNotes.join(" ");
    var stepSeries = RUNS.map(function (run, r) {
      var h = CH.steps_hist[r];
      return { name: run.name, color: run.color, values: h.shares,
        titles: h.shares.map(function (s, i) { return run.name + " · " + CH.step_labels[i] + " steps: " + (100 * s).toFixed(1) + "% (mean " + fmtKind(h.mean, "f2") + ")"; }) };
    });
    var ref = CH.ref_steps_hist;
    stepSeries.push({ name: "reference", color: "#5b6673", dashed: true, values: ref.shares, noDots: true });
    // Trim empty bins at the right.
    var last = 0;
    stepSeries.forEach(function (s) { s.values.forEach(function (v, i) { if (v > 0 && i > last) last = i; }); });
    stepSeries.forEach(function (s) { s.values = s.values.slice(0, last + 1); if (s.titles) s.titles = s.titles.slice(0, last + 1); });
    C.lines(plot("chart-steps"), {
      name: "steps-per-item", width: 920, height: 280, categories: CH.step_labels.slice(0, last + 1), xLabel: "Steps per item (reference mean " + fmtKind(ref.mean, "f2") + ")",
      yLabel: "Share of items", yFormat: function (v) { return Math.round(v * 100) + "%"; }, series: stepSeries
    });
  }
  $("pr-sources").addEventListener("change", drawPR);
  drawCharts();

  // ---------------------------------------------------------------- breakdowns
  (function breakdowns() {
    var sel = $("bd-metric");
    sel.innerHTML = METRICS.map(function (m) { return '<option value="' + m[0] + '"' + (m[0] === "match_f1" ? " selected" : "") + ">" + esc(m[1]) + "</option>"; }).join("");
    function draw() {
      var group = $("bd-group").value, key = sel.value, kind = METRIC[key].kind;
      var cats = [];
      RUNS.forEach(function (run) { Object.keys(run[group]).forEach(function (g) { if (cats.indexOf(g) < 0) cats.push(g); }); });
      if (group === "by_source") cats.sort();
      var maxv = 1;
      if (key === "steps") {
        maxv = 0;
        RUNS.forEach(function (run) { cats.forEach(function (g) { var b = run[group][g]; if (b) maxv = Math.max(maxv, b.metrics[key][2]); }); });
        maxv = Math.max(1, maxv * 1.1);
      }
      C.bars(plot("chart-breakdown"), {
        name: "breakdown", width: 920, height: 300, categories: cats, yDomain: [0, maxv], yLabel: METRIC[key].title,
        yFormat: kind === "pct" ? function (v) { return Math.round(v * 100); } : null,
        series: RUNS.map(function (run) {
          function get(g, i) { var b = run[group][g]; return b ? b.metrics[key][i] : null; }
          return { name: run.name, color: run.color,
            values: cats.map(function (g) { return get(g, 0); }), lo: cats.map(function (g) { return get(g, 1); }), hi: cats.map(function (g) { return get(g, 2); }),
            titles: cats.map(function (g) { var b = run[group][g]; return b ? run.name + " · " + g + " (" + b.n + " items): " + fmtKind(b.metrics[key][0], kind) + " [" + fmtKind(b.metrics[key][1], kind) + ", " + fmtKind(b.metrics[key][2], kind) + "]" : ""; }) };
        })
      });
      var html = '<table class="data" id="breakdown-table"><thead><tr><th>' + (group === "by_source" ? "Source" : "Difficulty") + "</th><th>Run</th><th>Items</th>";
      METRICS.forEach(function (m) { html += "<th>" + esc(m[1]) + "</th>"; });
      html += "<th>No steps</th><th>Missing</th><th>Parse fail</th></tr></thead><tbody>";
      cats.forEach(function (g) {
        RUNS.forEach(function (run, r) {
          var b = run[group][g];
          if (!b) return;
          html += "<tr><td>" + (r === 0 || !RUNS[0][group][g] ? "<b>" + esc(g) + "</b>" : "") + "</td><td style=\"text-align:left\">" + swatch(run.color) + esc(run.name) + "</td><td>" + b.n + "</td>";
          METRICS.forEach(function (m) {
            var v = b.metrics[m[0]];
            html += '<td><span class="v">' + fmtKind(v[0], m[2]) + '</span><span class="ci">' + fmtKind(v[1], m[2]) + "–" + fmtKind(v[2], m[2]) + "</span></td>";
          });
          html += "<td>" + (b.n_no_steps || 0) + "</td><td>" + b.n_missing + "</td><td>" + b.n_parse_failed + "</td></tr>";
        });
      });
      $("bd-table").innerHTML = html + "</tbody></table>";
    }
    $("bd-group").addEventListener("change", draw);
    sel.addEventListener("change", draw);
    draw();
  })();

  // ---------------------------------------------------------------- comparisons
  (function comparisons() {
    var box = $("compare");
    if (!D.comparisons.length) {
      box.innerHTML = '<p class="hint">One run only: give two or more results folders to compare them (paired bootstrap and permutation tests on the shared items).</p>';
      return;
    }
    var html = '<p class="hint">Each run against the baseline <b>' + esc(RUNS[META.baseline].name) + "</b> (" +
      (META.baseline_given ? "chosen with <code>--baseline</code>" : "the first run given; <code>crystal report --baseline RUN</code> picks another") + ") on the items both hold. Δ = run − baseline; " +
      (100 * META.confidence) + "% paired bootstrap intervals (" + META.n_resamples + " resamples); p-values: paired bootstrap and sign-flip permutation (exact when few items differ), two-sided, not adjusted for multiple comparisons.</p>";
    html += '<div class="scroll"><table class="data" id="compare-overview"><thead><tr><th>Run vs ' + esc(RUNS[META.baseline].name) + "</th><th>Items</th><th>Δ Match F1</th><th>CI</th><th>p (perm.)</th><th>Δ Accuracy (pts)</th><th>CI</th><th>p (perm.)</th></tr></thead><tbody>";
    D.comparisons.forEach(function (cmp) {
      var f = cmp.stats.metrics.match_f1, a = cmp.stats.metrics.accuracy, B = RUNS[cmp.b];
      function cls(t) { return t.low > 0 ? ' class="ok"' : t.high < 0 ? ' class="ko"' : ""; }
      html += "<tr><td>" + swatch(B.color) + esc(B.name) + "</td><td>" + cmp.n_common + "</td><td" + cls(f) + ">" + signed(f.delta, "f3") + "</td><td>[" + fmtKind(f.low, "f3") + ", " + fmtKind(f.high, "f3") + "]</td><td>" + fmtP(f.p_permutation) +
        "</td><td" + cls(a) + ">" + signed(a.delta, "pct") + "</td><td>[" + fmtKind(a.low, "pct") + ", " + fmtKind(a.high, "pct") + "]</td><td>" + fmtP(a.p_permutation) + "</td></tr>";
    });
    html += "</tbody></table></div>";
    D.comparisons.forEach(function (cmp, c) {
      var A = RUNS[cmp.a], B = RUNS[cmp.b];
      html += '<details class="comparison" data-b="' + cmp.b + '"' + (c === 0 || D.comparisons.length <= 2 ? " open" : "") + "><summary><h3>" + swatch(B.color) + esc(B.name) + " vs " + swatch(A.color) + esc(A.name) + "</h3></summary>";
      cmp.warnings.forEach(function (w) { html += '<p class="banner warn">⚠ ' + esc(w) + "</p>"; });
      html += '<p class="hint">' + plural(cmp.n_common, "shared item") + (cmp.n_only_a || cmp.n_only_b ? " (" + cmp.n_only_a + " only in " + esc(A.name) + ", " + cmp.n_only_b + " only in " + esc(B.name) + ")" : "") + ".</p>";
      html += '<div class="scroll"><table class="data compare-table"><thead><tr><th>Metric</th><th>' + esc(A.name) + "</th><th>" + esc(B.name) + "</th><th>Δ</th><th>" + (100 * META.confidence) + "% CI of Δ</th><th>p (bootstrap)</th><th>p (permutation)</th><th>Items differing</th></tr></thead><tbody>";
      D.compared_metrics.forEach(function (key) {
        var t = cmp.stats.metrics[key], kind = METRIC[key].kind;
        var sig = t.low > 0 || t.high < 0;
        html += "<tr><td>" + esc(METRIC[key].title) + "</td><td>" + fmtKind(t.mean_a, kind) + "</td><td>" + fmtKind(t.mean_b, kind) + "</td><td" + (sig ? ' class="' + (t.delta > 0 ? "ok" : "ko") + '"' : "") + ">" +
          signed(t.delta, kind) + "</td><td>[" + fmtKind(t.low, kind) + ", " + fmtKind(t.high, kind) + "]</td><td>" + fmtP(t.p_bootstrap) + "</td><td>" + fmtP(t.p_permutation) + (t.permutation_exact ? " (exact)" : "") + "</td><td>" + t.n_differing + "</td></tr>";
      });
      html += "</tbody></table></div>";
      var groups = Object.keys(cmp.stats.by_group);
      if (groups.length) {
        html += '<h4>By source</h4><div class="scroll"><table class="data compare-sources"><thead><tr><th>Source</th><th>Items</th><th>Δ Match F1</th><th>CI</th><th>p</th><th>Δ Accuracy (pts)</th><th>CI</th><th>p</th></tr></thead><tbody>';
        groups.forEach(function (g) {
          var f = cmp.stats.by_group[g].match_f1, a = cmp.stats.by_group[g].accuracy;
          html += "<tr><td>" + esc(g) + "</td><td>" + f.n + "</td><td>" + signed(f.delta, "f3") + "</td><td>[" + fmtKind(f.low, "f3") + ", " + fmtKind(f.high, "f3") + "]</td><td>" + fmtP(f.p_permutation) +
            "</td><td>" + signed(a.delta, "pct") + "</td><td>[" + fmtKind(a.low, "pct") + ", " + fmtKind(a.high, "pct") + "]</td><td>" + fmtP(a.p_permutation) + "</td></tr>";
        });
        html += "</tbody></table></div>";
        html += '<div class="grid charts"><figure class="chart" id="forest-f1-' + c + '"><figcaption>Δ Match F1 by source</figcaption><div class="plot"></div></figure>' +
          '<figure class="chart" id="forest-acc-' + c + '"><figcaption>Δ Accuracy (points) by source</figcaption><div class="plot"></div></figure></div>';
      }
      html += "</details>";
    });
    box.innerHTML = html;
    D.comparisons.forEach(function (cmp, c) {
      var groups = Object.keys(cmp.stats.by_group);
      if (!groups.length) return;
      ["match_f1", "accuracy"].forEach(function (key) {
        var scaleBy = key === "accuracy" ? 100 : 1;
        var rows = [{ label: "all items", bold: true, t: cmp.stats.metrics[key] }].concat(groups.map(function (g) { return { label: g, t: cmp.stats.by_group[g][key] }; }));
        C.forest(plot((key === "accuracy" ? "forest-acc-" : "forest-f1-") + c), {
          name: "forest-" + key, xLabel: "Δ (" + RUNS[cmp.b].name + " − " + RUNS[cmp.a].name + ")",
          xFormat: function (v) { return key === "accuracy" ? String(Math.round(v * 10) / 10) : String(Math.round(v * 1000) / 1000); },
          rows: rows.map(function (r) {
            return { label: r.label + " (" + r.t.n + ")", bold: r.bold, est: r.t.delta * scaleBy, lo: r.t.low * scaleBy, hi: r.t.high * scaleBy, color: RUNS[cmp.b].color,
              title: r.label + ": Δ " + signed(r.t.delta, key === "accuracy" ? "pct" : "f3") + " [" + fmtKind(r.t.low, key === "accuracy" ? "pct" : "f3") + ", " + fmtKind(r.t.high, key === "accuracy" ? "pct" : "f3") + "], p = " + fmtP(r.t.p_permutation) };
          })
        });
      });
    });
  })();

  // ---------------------------------------------------------------- run selectors
  document.querySelectorAll(".run-select").forEach(function (sel) {
    sel.innerHTML = RUNS.map(function (r, i) { return '<option value="' + i + '">' + esc(r.name) + "</option>"; }).join("");
  });

  function answerMark(run, k) {
    var ok = run.items.ok[k];
    if (run.items.miss[k]) return '<span class="ko" title="no prediction">missing</span>';
    if (ok === 1) return '<span class="ok" title="correct">✓</span>';
    if (ok === 0) return '<span class="ko" title="wrong">✗</span>';
    return '<span class="un" title="unscored">?</span>';
  }
  function short(text, n) {
    if (text == null) return "";
    text = String(text);
    return text.length > n ? text.slice(0, n - 1) + "…" : text;
  }

  // ---------------------------------------------------------------- failure lists
  var LISTS = [
    ["weak_reasoning", "Right answer, weak reasoning", function () { return "correct answer, Match F1 < " + META.weak_f1 + " (lowest F1 first)"; }],
    ["sound_wrong", "Sound reasoning, wrong answer", function () { return "Match F1 ≥ " + META.sound_f1 + ", wrong answer (highest F1 first)"; }],
    ["out_of_order", "Steps out of order", function () { return "matched pairs off the longest increasing subsequence (lowest LIS first)"; }],
    ["no_steps", "Answers without steps", function () { return "output parsed, but gave no reasoning step (an answer alone: step metrics 0)"; }],
    ["parse_failed", "Parse failures", function () { return "output with neither steps nor an answer"; }],
    ["missing", "Missing items", function () { return "no prediction for the item (scored 0)"; }]
  ];
  var listPages = {};
  function renderFailures() {
    var r = +$("fail-run").value, run = RUNS[r];
    var q = run.quadrants;
    $("quadrants").innerHTML = '<table class="quad" id="quadrant-table"><thead><tr><th></th><th>F1 &lt; ' + META.weak_f1 + "</th><th>" + META.weak_f1 + " ≤ F1 &lt; " + META.sound_f1 + "</th><th>F1 ≥ " + META.sound_f1 +
      "</th></tr></thead><tbody><tr><th>right answer</th><td>" + q.right_weak + "</td><td>" + q.right_middle + "</td><td>" + q.right_sound + "</td></tr><tr><th>wrong answer</th><td>" +
      q.wrong_weak + "</td><td>" + q.wrong_middle + "</td><td>" + q.wrong_sound + "</td></tr></tbody></table>" + (q.unscored ? '<p class="hint">' + plural(q.unscored, "answer") + " unscored by the judge.</p>" : "");
    var html = "";
    LISTS.forEach(function (L) {
      var list = run.failures[L[0]] || [];
      html += '<div class="list" id="list-' + L[0] + '"><h3>' + esc(L[1]) + '<span class="count-badge">' + list.length + '</span></h3><p class="why">' + esc(L[2]()) + '</p><ol></ol><div class="pager"></div></div>';
    });
    $("failures").innerHTML = html;
    LISTS.forEach(function (L) { renderList(r, L[0], listPages[r + L[0]] || 0); });
  }
  function renderList(r, key, page) {
    var run = RUNS[r], list = run.failures[key] || [], box = $("list-" + key);
    listPages[r + key] = page;
    var start = page * PAGE_LIST, html = "";
    if (!list.length) html = '<li class="empty-note">none</li>';
    list.slice(start, start + PAGE_LIST).forEach(function (k, n) {
      var g = run.items.pos[k];
      html += '<li><button type="button" data-open="' + k + '" data-list="' + key + '" data-index="' + (start + n) + '"><span class="mono">' + esc(ITEMS.id[g]) + "</span> " + answerMark(run, k) +
        ' <span class="meta">' + esc(ITEMS.source[g]) + " · F1 " + fmtKind(run.items.f1[k]) + " · LIS " + fmtKind(run.items.lis[k]) + " · pred " + esc(short(run.items.pa[k] == null ? "—" : plainMath(run.items.pa[k]), 24)) + " / gold " + esc(short(plainMath(ITEMS.gold[g]), 24)) + "</span></button></li>";
    });
    box.querySelector("ol").innerHTML = html;
    pager(box.querySelector(".pager"), page, list.length, PAGE_LIST, function (p) { renderList(r, key, p); });
    box.querySelectorAll("button[data-open]").forEach(function (b) {
      b.addEventListener("click", function () {
        openItem(r, run.items.pos[+b.dataset.open], { run: r, ks: list, index: +b.dataset.index, label: key });
      });
    });
  }
  function pager(box, page, total, size, go) {
    var pages = Math.max(1, Math.ceil(total / size));
    if (total <= size) { box.innerHTML = total ? '<span class="hint">' + total + " shown</span>" : ""; return; }
    box.innerHTML = '<button type="button" data-p="prev"' + (page === 0 ? " disabled" : "") + ">‹ prev</button><span>page " + (page + 1) + " / " + pages + " (" + total + ")</span>" +
      '<button type="button" data-p="next"' + (page >= pages - 1 ? " disabled" : "") + ">next ›</button>";
    box.querySelector('[data-p="prev"]').addEventListener("click", function () { if (page > 0) go(page - 1); });
    box.querySelector('[data-p="next"]').addEventListener("click", function () { if (page < pages - 1) go(page + 1); });
  }
  $("fail-run").addEventListener("change", renderFailures);
  renderFailures();

  // ---------------------------------------------------------------- item explorer
  var explorer = { sortKey: null, dir: "descending", page: 0, rows: [] };
  (function filters() {
    var sources = {}, tiers = {};
    for (var g = 0; g < NI; g++) { sources[ITEMS.source[g]] = 1; tiers[ITEMS.difficulty[g]] = 1; }
    $("f-source").innerHTML += Object.keys(sources).sort().map(function (s) { return '<option value="' + esc(s) + '">' + esc(s) + "</option>"; }).join("");
    $("f-difficulty").innerHTML += ["easy", "medium", "hard"].filter(function (t) { return tiers[t]; }).map(function (t) { return '<option value="' + t + '">' + t + "</option>"; }).join("");
  })();
  var COLS = [
    ["id", "Item", "text"], ["source", "Source", "text"], ["difficulty", "Difficulty", "text"], ["n_ref", "Ref steps", "num"],
    ["m", "Pred steps", "num"], ["p", "Precision", "num"], ["r", "Recall", "num"], ["f1", "Match F1", "num"], ["lis", "LIS", "num"],
    ["of1", "Ordered F1", "num"], ["ok", "Answer", "num"], ["status", "Parse", "text"]
  ];
  var searchCache = {};
  function searchText(r, k) {
    var key = r + ":" + k;
    if (searchCache[key] == null) {
      var run = RUNS[r], g = run.items.pos[k];
      searchCache[key] = [ITEMS.id[g], ITEMS.gold[g], run.items.pa[k] || "", ITEMS.question ? ITEMS.question[g] || "" : "",
        run.items.steps[k].join(" "), (run.items.ref[k] || ITEMS.ref[g] || []).join(" ")].join(" \n ").toLowerCase();
    }
    return searchCache[key];
  }
  function value(r, k, key) {
    var run = RUNS[r], g = run.items.pos[k];
    switch (key) {
      case "id": return ITEMS.id[g];
      case "source": return ITEMS.source[g];
      case "difficulty": return ["easy", "medium", "hard"].indexOf(ITEMS.difficulty[g]);
      case "n_ref": return ITEMS.n_ref[g];
      case "ok": return run.items.ok[k] == null ? -1 : run.items.ok[k];
      default: return run.items[key][k];
    }
  }
  function applyFilters() {
    var r = +$("items-run").value, run = RUNS[r];
    var src = $("f-source").value, tier = $("f-difficulty").value, ans = $("f-answer").value, st = $("f-status").value;
    var lo = parseFloat($("f-min").value), hi = parseFloat($("f-max").value), text = $("f-text").value.trim().toLowerCase();
    if (isNaN(lo)) lo = 0; if (isNaN(hi)) hi = 1;
    var rows = [];
    for (var k = 0; k < run.n; k++) {
      var g = run.items.pos[k];
      if (src && ITEMS.source[g] !== src) continue;
      if (tier && ITEMS.difficulty[g] !== tier) continue;
      var ok = run.items.ok[k];
      if (ans === "1" && ok !== 1) continue;
      if (ans === "0" && ok !== 0) continue;
      if (ans === "u" && !(ok == null && !run.items.miss[k])) continue;
      if ((st === "missing" || st === "failed" || st === "nosteps") && run.items.kind[k] !== st) continue;
      if (st === "think" && String(run.items.status[k]).indexOf("thinking_") !== 0) continue;
      if (st === "ooo" && !run.items.ooo[k].length) continue;
      if (st === "vetoed" && !(run.items.veto && run.items.veto[k])) continue;
      var f1 = run.items.f1[k];
      if (f1 < lo - 1e-12 || f1 > hi + 1e-12) continue;
      if (text && searchText(r, k).indexOf(text) < 0) continue;
      rows.push(k);
    }
    if (explorer.sortKey) {
      var key = explorer.sortKey, sign = explorer.dir === "ascending" ? 1 : -1;
      rows.sort(function (a, b) {
        var va = value(r, a, key), vb = value(r, b, key);
        var cmp = typeof va === "string" ? va.localeCompare(vb, undefined, { numeric: true }) : va - vb;
        return sign * cmp || a - b;
      });
    }
    explorer.rows = rows;
    explorer.page = 0;
    renderItems();
  }
  function renderItems() {
    var r = +$("items-run").value, run = RUNS[r], rows = explorer.rows, table = $("items");
    var start = explorer.page * PAGE_ITEMS;
    var body = "";
    rows.slice(start, start + PAGE_ITEMS).forEach(function (k, n) {
      var g = run.items.pos[k];
      body += '<tr data-k="' + k + '"><td class="id"><button type="button" class="open" data-index="' + (start + n) + '">' + esc(ITEMS.id[g]) + "</button></td><td>" + esc(ITEMS.source[g]) + "</td><td>" + esc(ITEMS.difficulty[g]) +
        "</td><td>" + ITEMS.n_ref[g] + "</td><td>" + run.items.m[k] + "</td><td>" + fmtKind(run.items.p[k]) + "</td><td>" + fmtKind(run.items.r[k]) + "</td><td>" + fmtKind(run.items.f1[k]) +
        "</td><td>" + fmtKind(run.items.lis[k]) + "</td><td>" + fmtKind(run.items.of1[k]) + "</td><td>" + answerMark(run, k) + "</td><td>" + esc(run.items.status[k]) + "</td></tr>";
    });
    if (!rows.length) body = '<tr><td colspan="' + COLS.length + '" class="empty-note">no item matches the filters</td></tr>';
    table.tBodies[0].innerHTML = body;
    table.tBodies[0].querySelectorAll("button.open").forEach(function (b) {
      b.addEventListener("click", function () {
        var i = +b.dataset.index;
        openItem(r, run.items.pos[rows[i]], { run: r, ks: rows, index: i, label: "items" });
      });
    });
    pager($("items-pager"), explorer.page, rows.length, PAGE_ITEMS, function (p) { explorer.page = p; renderItems(); });
  }
  (function itemsTable() {
    var table = $("items");
    table.innerHTML = "<thead><tr>" + COLS.map(function (c) { return '<th scope="col" data-key="' + c[0] + '" data-type="' + c[2] + '">' + esc(c[1]) + "</th>"; }).join("") + "</tr></thead><tbody></tbody>";
    makeSortable(table, function (key, dir) { explorer.sortKey = key; explorer.dir = dir; applyFilters(); });
    ["items-run", "f-source", "f-difficulty", "f-answer", "f-status", "f-min", "f-max"].forEach(function (id) { $(id).addEventListener("change", applyFilters); });
    var timer = null;
    $("f-text").addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(applyFilters, 200); });
    applyFilters();
  })();

  // ---------------------------------------------------------------- item view
  var view = { r: 0, g: 0, context: null };
  var overlay = $("item-view");

  function imageFor(g) {
    var block = document.getElementById("img-" + g);
    if (!block) return null;
    return "data:" + block.dataset.mime + ";base64," + block.textContent.trim();
  }
  function optionIndex(answer, options) {
    if (answer == null || !options || !options.length) return -1;
    var a = String(answer).trim(), m = /^\(?([A-Za-z])[).:]?$/.exec(a);
    if (m) { var i = m[1].toUpperCase().charCodeAt(0) - 65; if (i >= 0 && i < options.length) return i; }
    var low = a.toLowerCase();
    for (var j = 0; j < options.length; j++) if (String(options[j]).trim().toLowerCase() === low) return j;
    return -1;
  }

  function openItem(r, g, context) {
    if (RUNS[r].at[g] < 0) {
      for (var i = 0; i < RUNS.length; i++) if (RUNS[i].at[g] >= 0) { r = i; break; }
    }
    view.r = r; view.g = g;
    view.context = context || null;
    var hash = "#item=" + encodeURIComponent(ITEMS.id[g]) + "&run=" + r;
    if (location.hash !== hash) history.replaceState(null, "", hash);
    renderItem();
    overlay.hidden = false;
    document.body.style.overflow = "hidden";
    $("iv-close").focus({ preventScroll: true });
  }
  function closeItem() {
    overlay.hidden = true;
    document.body.style.overflow = "";
    if (location.hash.indexOf("#item=") === 0) history.replaceState(null, "", location.pathname + location.search);
  }
  function step(delta) {
    var c = view.context;
    if (c && c.ks && c.ks.length) {
      var i = Math.min(c.ks.length - 1, Math.max(0, c.index + delta));
      c.index = i;
      view.r = c.run;
      view.g = RUNS[c.run].items.pos[c.ks[i]];
    } else {
      var run = RUNS[view.r], k = run.at[view.g] + delta;
      if (k < 0 || k >= run.n) return;
      view.g = run.items.pos[k];
    }
    history.replaceState(null, "", "#item=" + encodeURIComponent(ITEMS.id[view.g]) + "&run=" + view.r);
    renderItem();
  }

  function renderItem() {
    var r = view.r, g = view.g, run = RUNS[r], k = run.at[g], it = run.items;
    var c = view.context;
    $("iv-title").textContent = "Item " + ITEMS.id[g] + " · " + ITEMS.source[g] + " · " + ITEMS.difficulty[g] +
      (c && c.ks ? "  (" + (c.index + 1) + " / " + c.ks.length + ")" : "");
    $("iv-prev").disabled = c && c.ks ? c.index <= 0 : k <= 0;
    $("iv-next").disabled = c && c.ks ? c.index >= c.ks.length - 1 : k >= run.n - 1;
    var html = '<div class="run-tabs" role="group" aria-label="Run">';
    RUNS.forEach(function (other, i) {
      var kk = other.at[g];
      if (kk < 0) return;
      html += '<button type="button" data-run="' + i + '" aria-pressed="' + (i === r) + '">' + swatch(other.color) + esc(other.name) + " · F1 " + fmtKind(other.items.f1[kk]) + " " +
        (other.items.ok[kk] === 1 ? "✓" : other.items.ok[kk] === 0 ? "✗" : "?") + "</button>";
    });
    html += "</div>";
    var img = ITEMS.image[g] ? imageFor(g) : null;
    var question = ITEMS.question ? ITEMS.question[g] : null, options = ITEMS.options ? ITEMS.options[g] : null;
    html += '<div class="item-top' + (img ? " with-image" : "") + '">';
    if (img) html += '<div class="item-image"><img alt="item image" decoding="async" src="' + img + '"></div>';
    html += "<div>";
    if (question != null) {
      html += '<p class="question">' + esc(question) + "</p>";
    } else {
      html += '<p class="empty-note">Question, options and image are not in the results files; build the report with --benchmark to show them.</p>';
    }
    if (!img && question != null) html += '<p class="empty-note">' + esc(META.image_note) + "</p>";
    var goldIdx = optionIndex(ITEMS.gold[g], options), predIdx = optionIndex(it.pa[k], options);
    if (options && options.length) {
      html += '<ol class="options">';
      options.forEach(function (o, i) {
        html += '<li class="' + (i === goldIdx ? "gold " : "") + (i === predIdx ? "pred" : "") + '"><b>' + String.fromCharCode(65 + i) + ")</b> " + esc(o) +
          (i === goldIdx ? ' <span class="tag okt">gold</span>' : "") + (i === predIdx ? ' <span class="tag">predicted</span>' : "") + "</li>";
      });
      html += "</ol>";
    }
    var ok = it.ok[k];
    var verdict = it.miss[k] ? '<span class="ko">missing prediction</span>' : ok === 1 ? '<span class="ok">✓ correct</span>' : ok === 0 ? '<span class="ko">✗ wrong</span>' : '<span class="un">? unscored</span>';
    html += '<dl class="answers"><dt>Gold answer</dt><dd id="iv-gold">' + answerHtml(ITEMS.gold[g]) + "</dd><dt>Predicted</dt><dd id=\"iv-pred\">" + (it.pa[k] == null ? '<span class="empty-note">none</span>' : answerHtml(it.pa[k])) +
      "</dd><dt>Verdict</dt><dd id=\"iv-verdict\">" + verdict + ' <span class="tag">rule: ' + esc(it.rule[k]) + '</span><span class="tag">type: ' + esc(it.atype[k]) + "</span></dd><dt>Extraction</dt><dd id=\"iv-extraction\">" + (it.ext && it.ext[k] ? esc(it.ext[k]) : "no rule committed") + (it.trunc && it.trunc[k] ? ' <span class="tag">truncated</span>' : "") + "</dd><dt>Parse</dt><dd>" + esc(it.status[k]) +
      (it.blank[k] ? ' <span class="tag">' + it.blank[k] + " blank steps dropped</span>" : "") + "</dd></dl>";
    html += "</div></div>";
    var steps = it.steps[k], refs = it.ref[k] || ITEMS.ref[g] || [], matches = it.matches[k], ooo = it.ooo[k];
    var vetoes = it.veto ? it.veto[k] || [] : [], predVeto = {}, refVeto = {};
    html += '<div class="metrics-row" id="iv-metrics"><span>Precision <b>' + fmtKind(it.p[k]) + "</b></span><span>Recall <b>" + fmtKind(it.r[k]) + "</b></span><span>Match F1 <b>" + fmtKind(it.f1[k]) +
      "</b></span><span>LIS <b>" + fmtKind(it.lis[k]) + "</b></span><span>Kendall <b>" + fmtKind(it.kt[k]) + "</b></span><span>Ordered F1 <b>" + fmtKind(it.of1[k]) + "</b></span><span>" +
      matches.length + " matched of " + steps.length + " predicted / " + refs.length + " reference steps</span></div>";
    html += '<div class="legend-steps"><span><svg width="28" height="8"><line x1="0" y1="4" x2="28" y2="4" stroke="#4a8bd0" stroke-width="2"/></svg> matched (cosine)</span>' +
      '<span><svg width="28" height="8"><line x1="0" y1="4" x2="28" y2="4" stroke="#d97706" stroke-width="2" stroke-dasharray="6 4"/></svg> matched, out of order</span>' +
      '<span class="tag fp">FP</span> predicted step matching nothing <span class="tag fn">FN</span> reference step not covered' +
      (vetoes.length ? ' <span><svg width="28" height="8"><line x1="0" y1="4" x2="28" y2="4" stroke="#b42318" stroke-width="2" stroke-dasharray="2 3"/></svg> vetoed by the fact guard</span>' : "") +
      ((it.verd && it.verd[k]) ? ' <span class="verdict-legend" id="iv-verdict-legend">step verifier (not in the paper): <span class="tag verdict verdict-supported">supported</span> <span class="tag verdict verdict-wrong_perception">wrong perception</span> <span class="tag verdict verdict-wrong_logic">wrong logic</span> <span class="tag verdict verdict-irrelevant">irrelevant</span></span>' : "") + "</div>";
    if (vetoes.length) {
      // The fact guard kept these pairs from matching: each with its reason, and the two
      // stretches of text that conflict highlighted in both steps.
      html += '<div class="veto-note" id="iv-vetoes"><p><span class="tag veto">fact guard</span> The guard <code>' + esc(run.guard || "facts") + "</code> kept " + vetoes.length +
        (vetoes.length === 1 ? " pair" : " pairs") + " from matching (the steps state incompatible facts):</p><ul>";
      vetoes.forEach(function (v) {
        (predVeto[v[0]] = predVeto[v[0]] || []).push(v);
        (refVeto[v[1]] = refVeto[v[1]] || []).push(v);
        var ps = (steps[v[0]] || "").slice(v[5][0], v[5][1]), rs = (refs[v[1]] || "").slice(v[6][0], v[6][1]);
        html += '<li data-pred="' + v[0] + '" data-ref="' + v[1] + '" data-reason="' + esc(v[3]) + '"><b>P' + (v[0] + 1) + " ↔ R" + (v[1] + 1) + "</b> · cos " + v[2].toFixed(3) + ' · <span class="tag veto">' + esc(v[3]) + "</span> " +
          '<mark class="veto-span">' + esc(ps) + '</mark> vs <mark class="veto-span">' + esc(rs) + "</mark>" +
          (v[4] === "step" ? ' <span class="tag veto">whole step</span> P' + (v[0] + 1) + " contradicts the reference step it restates, so it matches nothing" : "") + "</li>";
      });
      html += "</ul></div>";
    }
    function marked(text, found, at) {
      // ``text`` escaped, with the veto spans at ``at`` (5: predicted, 6: reference) in <mark>.
      if (!found) return esc(text);
      var spans = found.map(function (v) { return v[at]; }).sort(function (a, b) { return a[0] - b[0]; }), out = "", pos = 0;
      spans.forEach(function (s) {
        var start = Math.max(s[0], pos), end = Math.min(s[1], text.length);
        if (end <= start) return;
        out += esc(text.slice(pos, start)) + '<mark class="veto-span">' + esc(text.slice(start, end)) + "</mark>";
        pos = end;
      });
      return out + esc(text.slice(pos));
    }
    function vetoTags(found, own) {
      if (!found) return "";
      return found.map(function (v) {
        var other = own === "pred" ? "R" + (v[1] + 1) : "P" + (v[0] + 1);
        return ' <span class="tag veto" title="cosine ' + v[2].toFixed(3) + '">✕ ' + other + " vetoed: " + esc(v[3]) + (v[4] === "step" && own === "pred" ? ", whole step" : "") + "</span>";
      }).join("");
    }
    var predOf = {}, refOf = {}, oooSet = {};
    ooo.forEach(function (p) { oooSet[p[0] + ":" + p[1]] = 1; });
    matches.forEach(function (m) { predOf[m[1]] = m; refOf[m[0]] = m; });
    var rc = it.rc ? it.rc[k] : 0, nrc = it.nrc ? it.nrc[k] : 1;
    var refTitle = nrc > 1 ? "Reference chain " + (rc + 1) + " of " + nrc + (rc ? " (an alternative" : " (the primary") + ", best by Match F1)" : "Reference";
    var prec = it.prec ? it.prec[k] : null, freeWith = {};
    if (prec) {
      // The order metrics were read against a partial order: say which steps may swap.
      prec.free.forEach(function (p) {
        (freeWith[p[0]] = freeWith[p[0]] || []).push(p[1]);
        (freeWith[p[1]] = freeWith[p[1]] || []).push(p[0]);
      });
      var shown = prec.free.slice(0, 12).map(function (p) { return "R" + (p[0] + 1) + " and R" + (p[1] + 1); });
      html += '<p class="order-note" id="iv-order"><span class="tag free">partial order</span> LIS, Kendall and out-of-order are read against the item\'s partial order of its reference steps (<code>reference_precedence</code>): ' +
        (!prec.free.length ? "it orders every step here, as the chain does." :
          prec.free.length === prec.n_pairs ? "every reference step may come in any order." :
          "steps " + shown.join(", ") + (prec.free.length > shown.length ? " and " + (prec.free.length - shown.length) + " more pairs" : "") + " may come in either order.") + "</p>";
    }
    html += '<div class="align" id="iv-align"><div class="col"><h4 id="iv-ref-title">' + esc(refTitle) + " (" + refs.length + ")</h4><ol>";
    refs.forEach(function (s, j) {
      var m = predOf[j], out = m && oooSet[m[0] + ":" + m[1]], free = freeWith[j];
      html += '<li class="step ' + (m ? (out ? "matched ooo" : "matched") : "fn") + (refVeto[j] ? " vetoed" : "") + '" id="ref-' + j + '" data-ref="' + j + '"><span class="idx">R' + (j + 1) + "</span>" + marked(s, refVeto[j], 6) + vetoTags(refVeto[j], "ref") +
        (free ? ' <span class="tag free" title="may come in either order with these steps">⇄ ' + free.map(function (x) { return "R" + (x + 1); }).join(", ") + "</span>" : "") +
        (m ? '<span class="pair">↔ P' + (m[0] + 1) + " · cos " + m[2].toFixed(3) + (out ? ' <span class="tag ooo">out of order</span>' : "") + "</span>" : ' <span class="tag fn">FN</span>') + "</li>";
    });
    html += '</ol></div><div class="gutter"></div><div class="col"><h4>Predicted (' + steps.length + ")</h4><ol>";
    if (!steps.length) html += '<li class="empty-note">' + (it.miss[k] ? "No prediction for this item." : "No predicted steps (" + esc(it.status[k]) + ").") + "</li>";
    // The step verifier's verdicts (not in the paper): [pred, label, p_correct, judge, reason].
    var verdictOf = {};
    (it.verd ? it.verd[k] || [] : []).forEach(function (v) { verdictOf[v[0]] = v; });
    function verdictTag(i) {
      var v = verdictOf[i];
      if (!v) return "";
      var label = v[1] || "unverified";
      var title = (v[3] ? v[3] + ": " : "") + (v[4] || "") + (v[2] === null ? "" : " (p_correct " + v[2].toFixed(3) + ")");
      return ' <span class="tag verdict verdict-' + esc(label) + '" data-verdict="' + esc(label) + '" title="' + esc(title) + '">' + esc(label.replace("_", " ")) +
        (v[2] === null ? "" : " " + v[2].toFixed(2)) + "</span>";
    }
    steps.forEach(function (s, i) {
      var m = refOf[i], out = m && oooSet[m[0] + ":" + m[1]], verdict = verdictOf[i] ? " verdict-" + (verdictOf[i][1] || "unverified") : "";
      html += '<li class="step ' + (m ? (out ? "matched ooo" : "matched") : "fp") + (predVeto[i] ? " vetoed" : "") + verdict + '" id="pred-' + i + '" data-pred="' + i + '"><span class="idx">P' + (i + 1) + "</span>" + marked(s, predVeto[i], 5) + vetoTags(predVeto[i], "pred") +
        (m ? '<span class="pair">↔ R' + (m[1] + 1) + " · cos " + m[2].toFixed(3) + (out ? ' <span class="tag ooo">out of order</span>' : "") + "</span>" : ' <span class="tag fp">FP</span>') + verdictTag(i) + "</li>";
    });
    html += '</ol></div><svg class="links" id="iv-links" aria-hidden="true"></svg></div>';
    var chains = ITEMS.chains ? ITEMS.chains[g] : null;
    if (chains && chains.length > 1) {
      html += '<details class="chains" id="iv-chains"><summary>All ' + chains.length + " reference chains of this item</summary>";
      chains.forEach(function (chain, c) {
        html += "<h4>Chain " + (c + 1) + (c === 0 ? " (primary)" : "") + (c === rc && nrc > 1 ? ' <span class="tag okt">scored</span>' : "") + "</h4><ol>";
        chain.forEach(function (s) { html += "<li>" + esc(s) + "</li>"; });
        html += "</ol>";
      });
      html += "</details>";
    }
    var body = $("iv-body");
    body.innerHTML = html;
    body.querySelectorAll(".run-tabs button").forEach(function (b) {
      b.addEventListener("click", function () {
        view.r = +b.dataset.run;
        view.context = null;
        history.replaceState(null, "", "#item=" + encodeURIComponent(ITEMS.id[view.g]) + "&run=" + view.r);
        renderItem();
      });
    });
    var image = body.querySelector(".item-image img");
    if (image) image.addEventListener("load", drawLinks);
    body.querySelectorAll(".step").forEach(function (el) {
      el.addEventListener("mouseenter", function () { highlight(el, true); });
      el.addEventListener("mouseleave", function () { highlight(el, false); });
    });
    view.links = { matches: matches, ooo: oooSet, vetoes: vetoes };
    requestAnimationFrame(drawLinks);
  }
  function highlight(el, on) {
    var m = null, lk = view.links;
    if (!lk) return;
    if (el.dataset.ref != null) m = lk.matches.filter(function (x) { return x[1] === +el.dataset.ref; })[0];
    if (el.dataset.pred != null) m = lk.matches.filter(function (x) { return x[0] === +el.dataset.pred; })[0];
    if (!m) return;
    [$("ref-" + m[1]), $("pred-" + m[0])].forEach(function (s) { if (s) s.classList.toggle("hl", on); });
  }
  function drawLinks() {
    var align = $("iv-align"), svg = $("iv-links");
    if (!align || !svg || !view.links) return;
    var box = align.getBoundingClientRect();
    var out = "";
    view.links.matches.forEach(function (m) {
      var a = $("ref-" + m[1]), b = $("pred-" + m[0]);
      if (!a || !b) return;
      var ra = a.getBoundingClientRect(), rb = b.getBoundingClientRect();
      var x1 = ra.right - box.left, y1 = ra.top + Math.min(ra.height / 2, 18) - box.top;
      var x2 = rb.left - box.left, y2 = rb.top + Math.min(rb.height / 2, 18) - box.top;
      var mx = (x1 + x2) / 2, isOoo = !!view.links.ooo[m[0] + ":" + m[1]];
      out += '<path class="link' + (isOoo ? " ooo" : "") + '" data-pred="' + m[0] + '" data-ref="' + m[1] + '" data-cos="' + m[2] + '" d="M' + x1.toFixed(1) + " " + y1.toFixed(1) +
        " C" + mx.toFixed(1) + " " + y1.toFixed(1) + " " + mx.toFixed(1) + " " + y2.toFixed(1) + " " + x2.toFixed(1) + " " + y2.toFixed(1) + '"><title>R' + (m[1] + 1) + " ↔ P" + (m[0] + 1) +
        ": cosine " + m[2].toFixed(3) + (isOoo ? " (out of order)" : "") + "</title></path>";
      out += '<text class="' + (isOoo ? "ooo" : "") + '" x="' + mx.toFixed(1) + '" y="' + ((y1 + y2) / 2 - 3).toFixed(1) + '" text-anchor="middle">' + m[2].toFixed(2) + "</text>";
    });
    (view.links.vetoes || []).forEach(function (v) {
      var a = $("ref-" + v[1]), b = $("pred-" + v[0]);
      if (!a || !b) return;
      var ra = a.getBoundingClientRect(), rb = b.getBoundingClientRect();
      var x1 = ra.right - box.left, y1 = ra.top + Math.min(ra.height / 2, 18) - box.top;
      var x2 = rb.left - box.left, y2 = rb.top + Math.min(rb.height / 2, 18) - box.top;
      var mx = (x1 + x2) / 2;
      out += '<path class="link veto" data-pred="' + v[0] + '" data-ref="' + v[1] + '" d="M' + x1.toFixed(1) + " " + y1.toFixed(1) + " C" + mx.toFixed(1) + " " + y1.toFixed(1) + " " + mx.toFixed(1) + " " + y2.toFixed(1) +
        " " + x2.toFixed(1) + " " + y2.toFixed(1) + '"><title>R' + (v[1] + 1) + " ✕ P" + (v[0] + 1) + ": vetoed (" + v[3] + "), cosine " + v[2].toFixed(3) + "</title></path>";
    });
    svg.setAttribute("viewBox", "0 0 " + box.width.toFixed(1) + " " + box.height.toFixed(1));
    svg.innerHTML = out;
  }

  $("iv-close").addEventListener("click", closeItem);
  $("iv-prev").addEventListener("click", function () { step(-1); });
  $("iv-next").addEventListener("click", function () { step(1); });
  overlay.addEventListener("click", function (e) { if (e.target === overlay) closeItem(); });
  document.addEventListener("keydown", function (e) {
    if (overlay.hidden) return;
    if (e.key === "Escape") closeItem();
    else if (e.key === "ArrowLeft") step(-1);
    else if (e.key === "ArrowRight") step(1);
  });
  var resizeTimer = null;
  window.addEventListener("resize", function () {
    if (overlay.hidden) return;
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(drawLinks, 60);
  });

  function fromHash() {
    var m = /^#item=([^&]*)(?:&run=(\d+))?/.exec(location.hash);
    if (!m) return;
    var id = decodeURIComponent(m[1]), g = ITEMS.id.indexOf(id);
    if (g < 0) return;
    var r = m[2] != null ? Math.min(RUNS.length - 1, +m[2]) : 0;
    openItem(r, g, null);
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();

  // Exposed for tests and for the console: open an item by id (and run index).
  window.crystalReport = {
    data: D,
    openItem: function (id, r) { var g = ITEMS.id.indexOf(String(id)); if (g >= 0) openItem(r || 0, g, null); return g >= 0; },
    closeItem: closeItem
  };
  document.documentElement.setAttribute("data-ready", "1");
})();

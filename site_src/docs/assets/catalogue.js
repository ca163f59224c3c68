// Sort and filter the catalogue index. No dependencies; works with Material's instant loading off.
(function () {
  function cellValue(row, index, kind) {
    var cell = row.cells[index];
    var raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
    if (kind === "num") { return raw === "" ? -Infinity : parseFloat(raw); }
    return raw.toLowerCase();
  }

  // Sort the recipe rows by one column (model group headings hide meanwhile); empty cells always go last.
  function sortBy(table, index, kind, ascending) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.querySelectorAll("tr[data-model]"));
    rows.sort(function (a, b) {
      var x = cellValue(a, index, kind), y = cellValue(b, index, kind);
      var xe = kind === "num" ? x === -Infinity : x === "", ye = kind === "num" ? y === -Infinity : y === "";
      if (xe !== ye) { return xe ? 1 : -1; }
      return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
    });
    table.classList.add("rc-sorted");
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function mark(headers, th, ascending) {
    Array.prototype.forEach.call(headers, function (h) { h.removeAttribute("aria-sort"); });
    if (th) { th.setAttribute("aria-sort", ascending ? "ascending" : "descending"); }
  }

  function makeSortable(table) {
    var headers = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(headers, function (th, index) {
      th.setAttribute("tabindex", "0");
      function click() {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        mark(headers, th, ascending);
        sortBy(table, index, th.getAttribute("data-sort") || "text", ascending);
      }
      th.addEventListener("click", click);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); click(); } });
    });
  }

  // The "Sort by" choice: best first (highest number; lowest for a column marked data-order="asc"); none: by model.
  function makeSortChoice(table, select) {
    var headers = table.tHead.rows[0].cells;
    var original = Array.prototype.slice.call(table.tBodies[0].rows);
    select.addEventListener("change", function () {
      var key = select.value;
      var th = table.tHead.querySelector('th[data-key="' + key + '"]');
      if (!th) {
        mark(headers, null, true);
        table.classList.remove("rc-sorted");
        original.forEach(function (row) { table.tBodies[0].appendChild(row); });
        return;
      }
      var ascending = th.getAttribute("data-order") === "asc";
      mark(headers, th, ascending);
      sortBy(table, th.cellIndex, th.getAttribute("data-sort") || "text", ascending);
    });
  }

  function matches(row, input) {
    var key = input.getAttribute("data-filter"), want = input.value.trim().toLowerCase();
    if (!want) { return true; }
    var have = (row.getAttribute("data-" + key) || "").toLowerCase();
    if (key === "text") { return have.indexOf(want) !== -1; }
    if (input.getAttribute("data-match") === "word") { return have.split(" ").indexOf(want) !== -1; }
    if (input.getAttribute("data-match") === "max") { return have !== "" && parseFloat(have) <= parseFloat(want); }
    return have === want;
  }

  // "What fits my machine": of the rows that fit, each model keeps the one with the best generation.
  function bestPerModel(rows) {
    var best = {};
    rows.forEach(function (row) {
      var model = row.getAttribute("data-model"), value = parseFloat(row.getAttribute("data-best"));
      var known = best[model];
      if (!known || (!isNaN(value) && (isNaN(known.value) || value > known.value))) { best[model] = {row: row, value: value}; }
    });
    return rows.filter(function (row) { return best[row.getAttribute("data-model")].row === row; });
  }

  function makeFilterable(page, controls, counter) {
    var inputs = controls.querySelectorAll("[data-filter]"), fit = controls.querySelectorAll("[data-fit]");
    var rows = Array.prototype.slice.call(page.querySelectorAll("tr[data-model]"));
    var groups = page.querySelectorAll("tr.rc-group"), launch = document.getElementById("rc-launch-count");
    function apply() {
      var shown = rows.filter(function (row) {
        return Array.prototype.every.call(inputs, function (input) { return matches(row, input); });
      });
      if (Array.prototype.some.call(fit, function (input) { return input.value !== ""; })) { shown = bestPerModel(shown); }
      rows.forEach(function (row) { row.hidden = shown.indexOf(row) === -1; });
      var models = {};
      shown.forEach(function (row) { models[row.getAttribute("data-model")] = true; });
      Array.prototype.forEach.call(groups, function (g) { g.hidden = !models[g.getAttribute("data-group")]; });
      if (counter) { counter.textContent = shown.length + " recipe(s)"; }
      if (launch) { launch.textContent = shown.filter(function (r) { return r.closest("#rc-launch"); }).length; }
    }
    Array.prototype.forEach.call(inputs, function (input) {
      input.addEventListener("input", apply);
      input.addEventListener("change", apply);
    });
    apply();
  }

  // Chart points: show the point's reading next to it on hover and focus; legend buttons show or hide a series.
  function addChartTips(chart) {
    var tip = document.createElement("div");
    tip.className = "rc-tip";
    tip.hidden = true;
    chart.appendChild(tip);
    chart.querySelectorAll(".rc-pt").forEach(function (point) {
      var text = point.getAttribute("data-tip");
      point.setAttribute("tabindex", "0");
      point.setAttribute("role", "img");
      point.setAttribute("aria-label", text);
      function show() {
        var box = point.getBoundingClientRect(), frame = chart.getBoundingClientRect();
        tip.textContent = text;
        tip.hidden = false;
        var left = box.left - frame.left + box.width + 4;
        tip.style.left = Math.max(0, Math.min(left, frame.width - tip.offsetWidth)) + "px";
        tip.style.top = (box.top - frame.top - 26) + "px";
      }
      function hide() { tip.hidden = true; }
      point.addEventListener("mouseenter", show);
      point.addEventListener("focus", show);
      point.addEventListener("mouseleave", hide);
      point.addEventListener("blur", hide);
    });
    chart.querySelectorAll("button.rc-key").forEach(function (key) {
      key.addEventListener("click", function () {
        var on = key.getAttribute("aria-pressed") !== "true";
        key.setAttribute("aria-pressed", on ? "true" : "false");
        chart.querySelectorAll('.rc-series[data-index="' + key.getAttribute("data-index") + '"], .rc-pts[data-index="' +
          key.getAttribute("data-index") + '"]').forEach(function (part) { part.classList.toggle("rc-off", !on); });
      });
    });
  }

  // A table wider than its box scrolls inside it: keyboard users reach it too (a focusable, named region).
  function makeScrollable(box) {
    if (box.scrollWidth <= box.clientWidth || box.hasAttribute("tabindex")) { return; }
    var caption = box.querySelector("caption, th");
    box.setAttribute("tabindex", "0");
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", "Scrollable table" + (caption ? ": " + caption.textContent.trim() : ""));
  }

  function init() {
    // Material's search panel is a dialog without a name (axe aria-dialog-name): name it.
    document.querySelectorAll('.md-search[role="dialog"]:not([aria-label])').forEach(function (d) { d.setAttribute("aria-label", "Search"); });
    document.querySelectorAll("div.rc-scroll").forEach(makeScrollable);
    document.querySelectorAll("div.rc-chart").forEach(addChartTips);
    document.querySelectorAll("table.rc-sortable").forEach(makeSortable);
    var index = document.getElementById("rc-index"), filters = document.getElementById("rc-filters");
    if (index && filters) { makeFilterable(filters.closest(".rc-page") || document, filters, document.getElementById("rc-count")); }
    var box = document.getElementById("rc-filterbox");  // folded on a phone: the list comes first
    if (box && window.matchMedia("(max-width: 47.9375em)").matches) { box.open = false; }
    var choice = document.getElementById("rc-sort");
    if (index && choice) { makeSortChoice(index, choice); }
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();

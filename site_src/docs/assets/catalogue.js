// Sort and filter the catalogue index. No dependencies; works with Material's instant loading off.
(function () {
  function cellValue(row, index, kind) {
    var cell = row.cells[index];
    var raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
    if (kind === "num") { return raw === "" ? -Infinity : parseFloat(raw); }
    return raw.toLowerCase();
  }

  function makeSortable(table) {
    var headers = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(headers, function (th, index) {
      th.setAttribute("role", "button");
      th.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(headers, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var kind = th.getAttribute("data-sort") || "text";
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a, index, kind), y = cellValue(b, index, kind);
          return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  }

  function makeFilterable(table, controls, counter) {
    var inputs = controls.querySelectorAll("[data-filter]");
    function apply() {
      var shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var visible = Array.prototype.every.call(inputs, function (input) {
          var key = input.getAttribute("data-filter"), want = input.value.trim().toLowerCase();
          if (!want) { return true; }
          var have = (row.getAttribute("data-" + key) || "").toLowerCase();
          if (key === "text") { return have.indexOf(want) !== -1; }
          if (input.getAttribute("data-match") === "word") { return have.split(" ").indexOf(want) !== -1; }
          return have === want;
        });
        row.hidden = !visible;
        if (visible) { shown += 1; }
      });
      if (counter) { counter.textContent = shown + " recipe(s)"; }
    }
    Array.prototype.forEach.call(inputs, function (input) {
      input.addEventListener("input", apply);
      input.addEventListener("change", apply);
    });
    apply();
  }

  // Chart points: show "series: value at c=N" next to the pointer; the figure tables hold the same numbers.
  function addChartTips(svg) {
    var tip = document.createElement("div");
    tip.className = "rc-tip";
    tip.hidden = true;
    svg.parentNode.appendChild(tip);
    svg.querySelectorAll("g.rc-series circle").forEach(function (point) {
      var series = point.parentNode.getAttribute("data-series");
      var text = series + ": " + Number(point.getAttribute("data-y")).toLocaleString("en") + " at c=" + point.getAttribute("data-x");
      point.setAttribute("tabindex", "0");
      point.setAttribute("aria-label", text);
      function show() {
        var box = point.getBoundingClientRect(), frame = svg.parentNode.getBoundingClientRect();
        tip.textContent = text;
        tip.style.left = (box.left - frame.left + box.width + 4) + "px";
        tip.style.top = (box.top - frame.top - 24) + "px";
        tip.hidden = false;
      }
      function hide() { tip.hidden = true; }
      point.addEventListener("mouseenter", show);
      point.addEventListener("focus", show);
      point.addEventListener("mouseleave", hide);
      point.addEventListener("blur", hide);
    });
  }

  function init() {
    document.querySelectorAll("svg.rc-chart").forEach(addChartTips);
    document.querySelectorAll("table.rc-sortable").forEach(makeSortable);
    var index = document.getElementById("rc-index"), filters = document.getElementById("rc-filters");
    if (index && filters) { makeFilterable(index, filters, document.getElementById("rc-count")); }
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();

// perfdag serve: the live node table (tooltips are svgchart.js's). Every string from the
// server is set with textContent, never parsed as HTML.
"use strict";
(function () {
  function live() {
    var line = document.getElementById("runline");
    var table = document.getElementById("nodes");
    if (!line || !table || !window.EventSource) return;
    var rows = new Map();
    table.querySelectorAll("tbody tr[data-node]").forEach(function (tr) { rows.set(tr.dataset.node, tr); });
    function cell(tr, cls) { return tr.querySelector("td." + cls); }
    function row(u) {
      var tr = rows.get(u.node);
      if (tr) return tr;
      tr = document.createElement("tr");
      tr.dataset.node = u.node;
      ["node", "kind", "state", "started", "secs num", "lastrun", "why", "gates", "note"].forEach(function (c) {
        var td = document.createElement("td");
        td.className = c;
        tr.appendChild(td);
      });
      cell(tr, "node").textContent = u.node;
      cell(tr, "kind").textContent = u.kind || "";
      table.tBodies[0].appendChild(tr);
      rows.set(u.node, tr);
      return tr;
    }
    function apply(u) {
      if (u.type === "run_start") {
        var r = document.getElementById("running");
        r.textContent = "running now"; r.dataset.running = "true";
        return;
      }
      if (u.type === "run_end") {
        var r2 = document.getElementById("running");
        r2.textContent = "idle (" + (u.state || "ended") + ")"; r2.dataset.running = "false";
        return;
      }
      if (!u.node) return;
      var tr = row(u);
      if (u.type === "progress") { cell(tr, "note").textContent = u.message; return; }
      if (u.type === "expand") { cell(tr, "note").textContent = "expanded: " + u.message; return; }
      if (u.type === "gate") {
        var g = document.createElement("span");
        g.className = "gate " + (u.verdict === "passed" ? "ok" : (u.severity === "fail" ? "failed" : "warned"));
        g.textContent = u.gate;
        g.setAttribute("data-tip", u.gate + ": " + u.verdict + (u.message ? " — " + u.message : ""));
        cell(tr, "gates").appendChild(g);
        return;
      }
      var st = cell(tr, "state");
      st.textContent = u.state; st.dataset.state = u.state;
      if (u.type === "node_start") {
        cell(tr, "started").textContent = u.time;
        cell(tr, "gates").textContent = "";
      }
      if (u.gates) {
        var gc = cell(tr, "gates");
        gc.textContent = "";
        u.gates.forEach(function (m) {
          var sp = document.createElement("span");
          sp.className = "gate " + m.class; sp.textContent = m.gate; sp.setAttribute("data-tip", m.tip);
          gc.appendChild(sp);
        });
      }
      if (u.seconds) cell(tr, "secs").textContent = u.seconds.toFixed(1);
      if (u.last_run) cell(tr, "lastrun").textContent = u.last_run;
      if (u.why) cell(tr, "why").textContent = u.why;
      if (u.message) cell(tr, "note").textContent = u.message;
      tr.classList.remove("flash"); void tr.offsetWidth; tr.classList.add("flash");
    }
    function counts() {
      var by = {};
      rows.forEach(function (tr) { var s = cell(tr, "state").dataset.state || "pending"; by[s] = (by[s] || 0) + 1; });
      var box = document.getElementById("counts");
      box.textContent = "";
      Object.keys(by).sort().forEach(function (k) {
        box.appendChild(document.createTextNode(" · "));
        var sp = document.createElement("span");
        sp.className = "count"; sp.dataset.state = k; sp.textContent = by[k] + " " + k;
        box.appendChild(sp);
      });
    }
    var es = new EventSource(line.dataset.live);
    es.onmessage = function (ev) {
      var us = JSON.parse(ev.data);
      us.forEach(apply);
      if (us.some(function (u) { return u.type === "node_end" || u.type === "node_start" || u.type === "node_reused" || u.type === "node_skipped"; })) counts();
      if (us.some(function (u) { return u.type === "node_end" && u.state === "succeeded"; })) document.getElementById("fresh").hidden = false;
    };
    es.addEventListener("reload", function () { es.close(); location.reload(); });
  }
  // perfdagUsable: when the page is interactive, its live table attached (make bench reads it)
  function init() { live(); window.perfdagUsable = performance.now(); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();

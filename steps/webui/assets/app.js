// perfdag serve: the live node table (tooltips are svgchart.js's). Every string of the live
// stream is set with textContent, never parsed as HTML; a step's rows load as HTML the server
// rendered and escaped exactly as it renders the page.
"use strict";
(function () {
  function live() {
    var line = document.getElementById("runline");
    var table = document.getElementById("nodes");
    if (!line || !table || !window.EventSource) return;
    var grouped = document.querySelector("details.group") !== null;
    var rows = new Map();   // node → its rows on the page (a changed node may show twice)
    var states = new Map(); // node → state, for every node of the campaign
    var groupOf = new Map(); // node → its step's <details>
    function addRow(tr) {
      var list = rows.get(tr.dataset.node) || [];
      list.push(tr);
      rows.set(tr.dataset.node, list);
    }
    document.querySelectorAll("tr[data-node]").forEach(function (tr) {
      addRow(tr);
      states.set(tr.dataset.node, cell(tr, "state").dataset.state);
    });
    document.querySelectorAll("details.group").forEach(function (d) {
      d.dataset.states.split("\n").forEach(function (l) {
        var i = l.indexOf("\t");
        if (i < 0) return;
        states.set(l.slice(0, i), l.slice(i + 1));
        groupOf.set(l.slice(0, i), d);
      });
      d.addEventListener("toggle", function () { if (d.open) load(d); });
    });
    function cell(tr, cls) { return tr.querySelector("td." + cls); }
    // load fills a collapsed step's rows (rendered and escaped by the server like the page)
    // and brings them up to what arrived live since the page loaded.
    function load(d) {
      var t = d.querySelector("table.lazy");
      if (!t || t.dataset.loaded) return;
      t.dataset.loaded = "1";
      fetch(t.dataset.src, {credentials: "same-origin"}).then(function (r) { return r.text(); }).then(function (html) {
        t.tBodies[0].insertAdjacentHTML("beforeend", html);
        t.querySelectorAll("tr[data-node]").forEach(function (tr) {
          addRow(tr);
          var st = states.get(tr.dataset.node), c = cell(tr, "state");
          if (st && c.dataset.state !== st) { c.textContent = st; c.dataset.state = st; }
        });
      });
    }
    function row(u) {
      var list = rows.get(u.node);
      if (list) return list;
      var tr = document.createElement("tr");
      tr.dataset.node = u.node;
      ["node", "kind", "state", "started", "secs num", "lastrun", "why", "gates", "note"].forEach(function (c) {
        var td = document.createElement("td");
        td.className = c;
        tr.appendChild(td);
      });
      cell(tr, "node").textContent = u.node;
      cell(tr, "kind").textContent = u.kind || "";
      var body = table.tBodies[0];
      if (grouped) body.insertBefore(tr, body.firstChild); else body.appendChild(tr);
      addRow(tr);
      return rows.get(u.node);
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
      if (u.state && u.type !== "progress" && u.type !== "expand") states.set(u.node, u.state);
      row(u).forEach(function (tr) { show(tr, u); });
    }
    function show(tr, u) {
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
    function fill(box, by) {
      box.textContent = "";
      Object.keys(by).sort().forEach(function (k) {
        box.appendChild(document.createTextNode(" · "));
        var sp = document.createElement("span");
        sp.className = "count"; sp.dataset.state = k; sp.textContent = by[k] + " " + k;
        box.appendChild(sp);
      });
    }
    function counts() {
      var all = {}, per = new Map();
      states.forEach(function (s, node) {
        all[s] = (all[s] || 0) + 1;
        var d = groupOf.get(node);
        if (!d) return;
        var by = per.get(d) || {};
        by[s] = (by[s] || 0) + 1;
        per.set(d, by);
      });
      fill(document.getElementById("counts"), all);
      per.forEach(function (by, d) { fill(d.querySelector(".gcounts"), by); });
    }
    var es = new EventSource(line.dataset.live);
    es.onmessage = function (ev) {
      window.perfdagLiveMessages = (window.perfdagLiveMessages || 0) + 1; // make bench reads it
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

package svgchart

// Style is the CSS the charts need (fonts, grid, hover, the tooltip box); put it once in a
// page's <style>.
const Style = `
svg.svgchart, svg.svglegend { max-width: 100%; height: auto; font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
svg.svgchart { background: #fff; }
svg.svgchart .title { font-size: 13px; font-weight: 600; fill: #1f3a5f; }
svg.svgchart .tick, svg.svgchart .na { font-size: 10px; fill: #555; }
svg.svgchart .axis { font-size: 11px; fill: #333; }
svg.svgchart .lbl { font-size: 9px; fill: #444; pointer-events: none; }
svg.svgchart .empty { font-size: 12px; fill: #777; font-style: italic; }
svg.svgchart .plot { fill: none; stroke: #999; stroke-width: 0.8; }
svg.svgchart .grid { stroke: #e3e3e3; stroke-width: 0.7; }
svg.svgchart .line { fill: none; stroke-width: 1.4; }
svg.svgchart .ref { stroke-width: 1.2; }
svg.svgchart .hit { fill: transparent; }
svg.svgchart .pt { cursor: crosshair; outline: none; }
svg.svgchart .pt:hover .mk, svg.svgchart .pt:focus .mk { stroke-width: 2.5; }
svg.svgchart .pt:hover .bar, svg.svgchart .pt:hover .cell { opacity: 0.8; }
svg.svgchart .tl-mark { stroke-width: 1.5; pointer-events: none; }
svg.svgchart .cellv, svg.svgchart .cellna { font-size: 10px; pointer-events: none; }
svg.svglegend .keytext, svg.svgchart .keytext { font-size: 11px; fill: #333; }
svg.svglegend .line { fill: none; stroke-width: 1.4; }
.svgchart-tip { position: absolute; z-index: 10; pointer-events: none; white-space: pre-line; background: #1f2933; color: #fff;
  font: 12px/1.35 system-ui, Arial, sans-serif; padding: 5px 8px; border-radius: 4px; box-shadow: 0 2px 6px rgba(0,0,0,.25); max-width: 420px; }
`

// Script shows a mark's data-tip in a floating box on hover or keyboard focus. It sets the
// text with textContent (never as HTML) and moves each mark's <title> into aria-label so the
// browser's native tooltip does not double it. Put it once at the end of a page's <body>.
const Script = `(function () {
  "use strict";
  var tip = document.createElement("div");
  tip.className = "svgchart-tip";
  tip.setAttribute("role", "tooltip");
  tip.hidden = true;
  document.body.appendChild(tip);
  document.querySelectorAll("svg.svgchart [data-tip]").forEach(function (m) {
    var t = m.querySelector("title");
    if (t) { m.setAttribute("aria-label", t.textContent); t.remove(); }
  });
  function mark(e) { return e.target && e.target.closest ? e.target.closest("[data-tip]") : null; }
  function show(e) {
    var m = mark(e);
    if (!m) { tip.hidden = true; return; }
    tip.textContent = m.getAttribute("data-tip");
    tip.hidden = false;
    var x = e.clientX, y = e.clientY;
    if (x === undefined) { var r = m.getBoundingClientRect(); x = r.right; y = r.top; }
    var left = x + 14 + window.scrollX, maxLeft = window.scrollX + document.documentElement.clientWidth - tip.offsetWidth - 8;
    tip.style.left = Math.max(window.scrollX + 4, Math.min(left, maxLeft)) + "px";
    tip.style.top = (y + 14 + window.scrollY) + "px";
  }
  document.addEventListener("mouseover", show);
  document.addEventListener("mousemove", show);
  document.addEventListener("focusin", show);
  document.addEventListener("mouseout", function (e) {
    var to = e.relatedTarget;
    if (!to || !to.closest || !to.closest("[data-tip]")) tip.hidden = true;
  });
})();`

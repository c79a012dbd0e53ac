package report

// pageStyle is the HTML report's style sheet: the PDF's look (navy title bands, compact
// bordered tables) on a screen-width page, a navigation bar, and one page per printed sheet
// when printed.
const pageStyle = `
* { box-sizing: border-box; }
body { margin: 0; background: #eef1f5; color: #1b1f24; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
header.top { background: #1f3a5f; color: #fff; padding: 8px 20px; display: flex; flex-wrap: wrap; gap: 6px 16px; align-items: baseline; box-shadow: 0 1px 4px rgba(0,0,0,.25); }
header.top .brand { font-weight: 700; }
header.top .camp { opacity: .85; overflow-wrap: anywhere; }
header.top nav { display: flex; flex-wrap: wrap; gap: 4px 12px; font-size: 12.5px; }
header.top nav a { color: #cfe0f5; text-decoration: none; }
header.top nav a:hover, header.top nav a:focus { color: #fff; text-decoration: underline; }
main { max-width: 1140px; margin: 18px auto; padding: 0 16px; }
section.page { background: #fff; margin: 0 0 22px; padding: 0 22px 18px; border-radius: 6px; box-shadow: 0 1px 3px rgba(0,0,0,.12); overflow: hidden; }
section.page > h2 { margin: 0 -22px 12px; padding: 8px 22px; background: #1f3a5f; color: #fff; font-size: 18px; font-weight: 600; }
h3 { font-size: 15px; margin: 16px 0 6px; color: #1f3a5f; }
p { margin: 4px 0; overflow-wrap: anywhere; }
p.title { font-size: 26px; font-weight: 700; margin: 8px 0 2px; }
p.lead { font-size: 16px; }
p.strong { font-size: 14px; }
p.note { font-size: 12.5px; }
p.missing { font-style: italic; color: #555; font-size: 15px; }
.b { font-weight: 700; }
.i { font-style: italic; }
.figs { display: grid; gap: 10px; margin: 10px 0; }
.figs.n2 { grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); }
figure.chart { margin: 0; }
figure.chart svg, .legend svg { width: 100%; }
.tablewrap { overflow-x: auto; margin: 8px 0 12px; }
table { border-collapse: collapse; font-size: 12.5px; width: 100%; }
th, td { border: 1px solid #b0b0b0; padding: 3px 6px; vertical-align: top; overflow-wrap: break-word; }
th { background: #e4e9f0; font-weight: 700; }
td.r, th.r { text-align: right; font-variant-numeric: tabular-nums; }
td.c, th.c { text-align: center; font-variant-numeric: tabular-nums; }
td.r, td.c { white-space: nowrap; }
tbody tr:hover td { outline: 1px solid #7a99c2; outline-offset: -1px; }
footer { max-width: 1140px; margin: 0 auto 30px; padding: 0 16px; color: #555; font-size: 12px; }
@media print {
  body { background: #fff; }
  header.top { box-shadow: none; }
  section.page { box-shadow: none; break-before: page; border-radius: 0; }
  .svgchart-tip { display: none; }
}
`

// Package steps holds every inference-domain piece of perfdag. Its folders show the
// architecture, in layers, lowest first: a package imports its own folder's packages and the
// layers below it, never a folder beside it or above it (layers_test.go holds the order and
// fails on an arrow back up). Below steps/ are schema/ and engine/; above it, cmd/.
//
//   - catalog/: the figures that may need correcting (AA shapes, GPU peaks, $/GPU-hour);
//   - measure/: what puts load on an endpoint and turns it into numbers (session, openai, sse,
//     loadgen, stats, interval, tokens, workload, textgen, endpoint, benchfile, …), and
//     telemetry/: what the servers and GPUs report (promscrape, dcgm);
//   - analysis/: what the numbers become (atlas, tpm, roofline, champion, baseline), and sim/:
//     the built-in simulator, a test double;
//   - report/ (the PDF and HTML pages) and lake/ (the published tables);
//   - one folder per step kind, named exactly as the kind (prewarm, burn-in, settle, run-shape,
//     scrape-spec, dcgm-correlate, roofline-import, aggregate, render, strict-publish,
//     champion-select, exec, import, sweep); kinds never import kinds;
//   - this package (registry.go lists the kinds; pipeline.go expands a campaign without
//     `pipeline:`), calibrate/ (perfdag calibrate: the client's own overhead, measured against
//     sim/) and webui/ (perfdag serve);
//   - testkit/: test helpers and doubles (fixture, stepstest, campaigntest, laketest, browser).
package steps

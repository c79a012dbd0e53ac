// Package steps holds every inference-domain piece of perfdag. Its folders show the
// architecture:
//
//   - one folder per step kind, named exactly as the kind (prewarm, burn-in, settle, run-shape,
//     scrape-spec, dcgm-correlate, roofline-import, aggregate, render, strict-publish,
//     champion-select, exec); kinds never import kinds;
//   - measure/: what puts load on an endpoint and turns it into numbers (session, openai, sse,
//     loadgen, stats, tokens, workload, textgen, endpoint);
//   - telemetry/: what the servers and GPUs report (promscrape, dcgm);
//   - analysis/: what the numbers become (atlas, tpm, roofline, champion, baseline, catalog);
//   - report/ (the PDF), lake/ (the published tables), sim/ (the built-in simulator, a test
//     double), testkit/ (test helpers).
//
// registry.go lists the kinds; pipeline.go expands a campaign without `pipeline:`.
package steps

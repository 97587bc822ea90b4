#include "serve/dashboard_page.hpp"

namespace overhead::serve {

// Nothing inline: no <script> body, no style attribute, no event-handler attribute, so the
// Content-Security-Policy can be 'self' only (dashboard_routes.cpp). Every cell the script writes
// has an id or sits in a table body it rebuilds; the tests read them by those ids.
std::string_view dashboard_html() {
  return R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>overhead serve</title>
<link rel="stylesheet" href="/dashboard.css">
<script src="/dashboard.js" defer></script>
</head>
<body data-state="loading" data-polls="0">
<header>
<h1>overhead serve</h1>
<p id="status" role="status">Loading&hellip;</p>
</header>

<form id="token-form" hidden>
<label for="token">This server requires a bearer token for <code>/metrics</code>:</label>
<input id="token" type="password" autocomplete="off" spellcheck="false">
<button type="submit">Use token</button>
<p class="note">The token stays in this page's memory: it is sent only to this server's <code>/metrics</code>, never stored, and forgotten on reload.</p>
</form>

<main>
<section>
<h2>Now</h2>
<table id="overview">
<tbody>
<tr><th scope="row">Throughput, last poll</th><td id="throughput">&mdash;</td><td>requests/s</td></tr>
<tr><th scope="row">Throughput, last 10 s</th><td id="throughput-window">&mdash;</td><td>requests/s</td></tr>
<tr><th scope="row">Requests answered</th><td id="requests-total">&mdash;</td><td>on <code>/v1</code> routes, since start</td></tr>
<tr><th scope="row">In flight</th><td id="in-flight">&mdash;</td><td>requests admitted, not yet answered</td></tr>
<tr><th scope="row">Awaiting a worker</th><td id="awaiting-reply">&mdash;</td><td>chat requests queued, no reply yet</td></tr>
<tr><th scope="row">Queue depth</th><td id="queue-depth">&mdash;</td><td>input queue messages waiting</td></tr>
<tr><th scope="row">Queue taken</th><td id="queue-taken">&mdash;</td><td>received by a worker, not yet deleted</td></tr>
</tbody>
</table>
<figure>
<svg id="sparkline" viewBox="0 0 240 48" width="480" height="96" role="img" aria-labelledby="sparkline-caption">
<line x1="0" y1="47" x2="240" y2="47" class="axis"></line>
<polyline id="spark-line" points=""></polyline>
</svg>
<figcaption id="sparkline-caption">Throughput per poll, last 2 minutes (peak <span id="spark-peak">&mdash;</span> requests/s)</figcaption>
</figure>
</section>

<section>
<h2>Pipeline stages</h2>
<p class="note">Chat requests, from <code>overhead_stage_duration_seconds</code>. The last-10-s columns come from the histogram's change over the window; p50 and p99 are interpolated inside buckets.</p>
<table id="stages">
<thead><tr><th scope="col">Stage</th><th scope="col">Requests, 10 s</th><th scope="col">Mean, 10 s</th><th scope="col">p50, 10 s</th><th scope="col">p99, 10 s</th><th scope="col">Requests, all</th><th scope="col">Mean, all</th></tr></thead>
<tbody id="stages-body"><tr><td colspan="7">No chat request yet.</td></tr></tbody>
</table>
</section>

<section>
<h2>Routes</h2>
<p class="note">Time from routing to the answer written, from <code>overhead_http_request_duration_seconds</code>.</p>
<table id="routes">
<thead><tr><th scope="col">Route</th><th scope="col">Requests, 10 s</th><th scope="col">Mean, 10 s</th><th scope="col">p50, 10 s</th><th scope="col">p99, 10 s</th><th scope="col">Requests, all</th><th scope="col">Mean, all</th></tr></thead>
<tbody id="routes-body"><tr><td colspan="7">No request yet.</td></tr></tbody>
</table>
</section>

<section>
<h2>Errors</h2>
<p class="note">Answers with status 400 or above by route and status, and the pipeline's dead letters by kind.</p>
<table id="errors">
<thead><tr><th scope="col">Kind</th><th scope="col">Last 10 s</th><th scope="col">Since start</th></tr></thead>
<tbody id="errors-body"><tr><td colspan="3">None.</td></tr></tbody>
</table>
</section>

<section>
<h2>API keys</h2>
<p class="note">Per key (<code>--api-keys</code>): requests admitted and refused (rate limits, budget, model), tokens of the answers and their priced cost, from <code>overhead_key_*</code>.</p>
<table id="keys">
<thead><tr><th scope="col">Key</th><th scope="col">Admitted, 10 s</th><th scope="col">Admitted, all</th><th scope="col">Refused, all</th><th scope="col">Prompt tokens</th><th scope="col">Completion tokens</th><th scope="col">Cost</th></tr></thead>
<tbody id="keys-body"><tr><td colspan="7">No API key used yet.</td></tr></tbody>
</table>
</section>
</main>

<footer><p>Polls <a href="/metrics"><code>/metrics</code></a> every second. Updated <span id="updated">never</span>.</p></footer>
</body>
</html>
)html";
}

std::string_view dashboard_css() {
  return R"css(:root { color-scheme: light dark; --muted: #6b7280; --line: #d1d5db; --accent: #2563eb; --bad: #b91c1c; }
body { font: 15px/1.4 system-ui, sans-serif; margin: 1.5rem auto; max-width: 60rem; padding: 0 1rem; }
h1 { font-size: 1.4rem; margin: 0; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 0.4rem; }
header { display: flex; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
#status { margin: 0; color: var(--muted); }
body[data-state="error"] #status, body[data-state="auth"] #status { color: var(--bad); }
.note { color: var(--muted); font-size: 0.85rem; margin: 0.2rem 0 0.5rem; }
table { border-collapse: collapse; }
th, td { padding: 0.2rem 0.7rem 0.2rem 0; border-bottom: 1px solid var(--line); text-align: left; }
td { font-variant-numeric: tabular-nums; }
#overview td:nth-child(2), #stages td, #routes td, #errors td { text-align: right; }
#stages td:first-child, #routes td:first-child, #errors td:first-child { text-align: left; }
#overview td:nth-child(3) { color: var(--muted); font-size: 0.85rem; }
form { margin: 1rem 0; padding: 0.7rem; border: 1px solid var(--bad); }
input { font: inherit; width: 22rem; max-width: 100%; }
figure { margin: 0.8rem 0; }
figcaption { color: var(--muted); font-size: 0.85rem; }
#sparkline { max-width: 100%; height: auto; }
#sparkline .axis { stroke: var(--line); stroke-width: 1; }
#spark-line { fill: none; stroke: var(--accent); stroke-width: 1.5; }
footer { margin-top: 2rem; color: var(--muted); font-size: 0.85rem; }
)css";
}

}  // namespace overhead::serve

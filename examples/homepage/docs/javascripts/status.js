/* Inference status page: draws the gateway's /metrics (site-knowledge). No dependencies. */
(function () {
  "use strict";
  var REFRESH_MS = 5000;
  var timer = null;
  var SVG = "http://www.w3.org/2000/svg";

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  function fmt(value, unit) {
    if (value === null || value === undefined) return "–";
    if (typeof value === "number" && !Number.isInteger(value)) value = value.toFixed(1);
    return unit ? value + " " + unit : String(value);
  }

  function seconds(ms) {
    if (ms === null || ms === undefined) return "–";
    return ms >= 1000 ? (ms / 1000).toFixed(2) + " s" : Math.round(ms) + " ms";
  }

  function table(caption, rows) {
    return el("table", {}, [
      el("caption", {}, [caption]),
      el("tbody", {}, rows.map(function (r) {
        return el("tr", {}, [el("th", { scope: "row" }, [r[0]]), el("td", {}, [r[1]])]);
      }))
    ]);
  }

  /* A small line chart of one series; label says what it shows. */
  function spark(label, values, unit) {
    var w = 240, h = 60, pad = 4;
    var svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    svg.setAttribute("width", w);
    svg.setAttribute("height", h);
    svg.setAttribute("role", "img");
    var last = values.length ? values[values.length - 1] : null;
    svg.setAttribute("aria-label", label + ": " + values.length + " samples, latest " +
      fmt(last, unit));
    if (values.length > 1) {
      var max = Math.max.apply(null, values) || 1;
      var points = values.map(function (v, i) {
        var x = pad + (i * (w - 2 * pad)) / (values.length - 1);
        var y = h - pad - (v / max) * (h - 2 * pad);
        return x.toFixed(1) + "," + y.toFixed(1);
      }).join(" ");
      var line = document.createElementNS(SVG, "polyline");
      line.setAttribute("points", points);
      line.setAttribute("fill", "none");
      line.setAttribute("stroke", "currentColor");
      line.setAttribute("stroke-width", "1.5");
      svg.appendChild(line);
    }
    return el("figure", { class: "sk-chart" }, [svg, el("figcaption", {}, [
      label + (values.length ? " (latest " + fmt(last, unit) + ", max " +
        fmt(Math.max.apply(null, values), unit) + ")" : " (no samples yet)")])]);
  }

  function bars(label, counts) {
    var keys = Object.keys(counts);
    var max = Math.max.apply(null, keys.map(function (k) { return counts[k]; }).concat([1]));
    var w = 240, row = 16;
    var svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 " + w + " " + row * keys.length);
    svg.setAttribute("width", w);
    svg.setAttribute("height", row * keys.length);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", label + ": " + keys.map(function (k) {
      return k + " " + counts[k];
    }).join(", "));
    keys.forEach(function (k, i) {
      var rect = document.createElementNS(SVG, "rect");
      rect.setAttribute("x", 80);
      rect.setAttribute("y", i * row + 3);
      rect.setAttribute("height", row - 6);
      rect.setAttribute("width", Math.max(1, (counts[k] / max) * (w - 120)));
      rect.setAttribute("fill", "currentColor");
      svg.appendChild(rect);
      var text = document.createElementNS(SVG, "text");
      text.setAttribute("x", 0);
      text.setAttribute("y", i * row + 12);
      text.setAttribute("font-size", "11");
      text.setAttribute("fill", "currentColor");
      text.textContent = k + " " + counts[k];
      svg.appendChild(text);
    });
    return el("figure", { class: "sk-chart" }, [svg, el("figcaption", {}, [label])]);
  }

  function series(samples, name) {
    return samples.map(function (s) { return s[name]; })
      .filter(function (v) { return typeof v === "number"; });
  }

  function render(root, m, gateway) {
    var answered = (m.samples || []).filter(function (s) {
      return s.outcome === "completed" || s.outcome === "truncated";
    });
    root.replaceChildren(
      el("p", { class: "sk-ready" }, [
        el("strong", {}, [m.ready ? "Ready" : "Not ready"]),
        m.ready ? ": the model is loaded and answering." :
          ": the gateway is up but no model server is answering; the box falls back to your browser.",
        " Gateway: " + gateway + ", up " + fmt(m.uptime_s, "s") + "."
      ]),
      table("Now", [
        ["Answering", fmt(m.queue.active)],
        ["Waiting", fmt(m.queue.waiting)],
        ["Left while waiting", fmt(m.queue.left_waiting)]
      ]),
      table("Outcomes since start", Object.keys(m.outcomes).map(function (k) {
        return [k, fmt(m.outcomes[k])];
      }).concat([["completion rate", m.rates.completion === null ? "–" :
        (100 * m.rates.completion).toFixed(1) + " %"]])),
      table("Speed (recent answers)", [
        ["Latency p50 / p95", seconds(m.latency_ms.p50) + " / " + seconds(m.latency_ms.p95)],
        ["Time to first token p50 / p95", seconds(m.ttft_ms.p50) + " / " + seconds(m.ttft_ms.p95)],
        ["Queue wait p50 / p95", seconds(m.queue_wait_ms.p50) + " / " + seconds(m.queue_wait_ms.p95)],
        ["Decode speed p50", fmt(m.decode_tokens_per_s.p50, "tokens/s")]
      ].concat(m.tokens ? [["Prompt / output / cached tokens", fmt(m.tokens.prompt) + " / " +
        fmt(m.tokens.output) + " / " + fmt(m.tokens.cached)]] : [])),
      bars("Outcomes", m.outcomes)
    );
    // Per-answer series exist only for the owner (the gateway shows them with its token);
    // the public figures are aggregates.
    if (m.samples) {
      root.append(
        spark("Latency per answer", series(answered, "latency_ms"), "ms"),
        spark("Time to first token", series(answered, "ttft_ms"), "ms"),
        spark("Decode tokens/s", series(answered, "decode_tps"), "tok/s"));
    }
  }

  function unreachable(root, gateway, why) {
    root.replaceChildren(el("p", { class: "sk-down", role: "status" }, [
      el("strong", {}, ["The gateway is unreachable"]),
      " (" + gateway + ": " + why + "). Questions are then answered in your browser, " +
      "or with search results only. This page retries every few seconds."
    ]));
  }

  /* The first gateway the chat box asks (the plugin's config on this page), or "". */
  function configuredGateway() {
    var tag = document.getElementById("site-knowledge-config");
    try {
      return (JSON.parse(tag.textContent).gateways || [])[0] || "";
    } catch (e) {
      return "";
    }
  }

  function start() {
    var root = document.getElementById("sk-status");
    if (timer) { clearTimeout(timer); timer = null; }
    if (!root) return;
    var param = new URLSearchParams(window.location.search).get("gateway");
    var gateway = (param || configuredGateway()).replace(/\/+$/, "");
    if (!gateway) {
      root.replaceChildren(el("p", { class: "sk-down", role: "status" }, [
        el("strong", {}, ["This site names no gateway."]),
        " Questions are answered in your browser, or with search results only."
      ]));
      return;
    }
    function tick() {
      if (!document.body.contains(root)) return;
      var controller = new AbortController();
      var abort = setTimeout(function () { controller.abort(); }, 4000);
      fetch(gateway + "/metrics", { signal: controller.signal, cache: "no-store" })
        .then(function (r) {
          if (!r.ok) throw new Error("HTTP " + r.status);
          return r.json();
        })
        .then(function (m) { render(root, m, gateway); })
        .catch(function (e) { unreachable(root, gateway, e.name === "AbortError" ? "timed out" : e.message); })
        .finally(function () { clearTimeout(abort); timer = setTimeout(tick, REFRESH_MS); });
    }
    tick();
  }

  /* Material's instant navigation swaps pages without a reload: follow its document$. */
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(start);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();

// The site's gateway: POST {gateway}/api/ask, Server-Sent Events back (DESIGN.md, "Gateway").
// Only a failure before any answer text moves on; 429 and quota refusals never fall back.

import { pageLanguage } from "../strings.js";

const NO_FALLBACK = /quota|rate|limit|queue_full|busy/i;

async function* sseEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += value;
    let cut;
    while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
      const data = block
        .split(/\r?\n/)
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n");
      if (data) yield JSON.parse(data);
    }
  }
}

export async function runGateway(ctx) {
  const { config, question, history, view } = ctx;
  for (const gateway of config.gateways) {
    const url = new URL("api/ask", gateway.endsWith("/") ? gateway : gateway + "/");
    const host = url.host;
    let response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({
          question,
          history: history.map(({ question: q, answer }) => ({ question: q, answer })),
          ...(pageLanguage() ? { lang: pageLanguage() } : {}),
        }),
      });
    } catch {
      view.note(`The site's answer server (${host}) cannot be reached.`);
      continue;
    }
    if (response.status === 429) {
      const wait = Number(response.headers.get("retry-after")) || 15;
      return {
        status: "stop",
        text: `The site's answer server is busy. Please try again in about ${wait} seconds.`,
        retryAfter: wait,
      };
    }
    if (!response.ok || !response.body) {
      let code = `HTTP ${response.status}`;
      try {
        const body = await response.json();
        if (body && body.error) code = body.error.code || code;
      } catch {}
      if (NO_FALLBACK.test(code)) {
        return { status: "stop", text: `The site's answer server refused the question (${code}). Please try again later.` };
      }
      view.note(`The site's answer server (${host}) is unavailable (${code}).`);
      continue;
    }
    let text = "";
    let sources = [];
    let model = null;
    try {
      for await (const event of sseEvents(response.body)) {
        if (event.queued) view.queued(event.queued.position);
        else if (event.sources) {
          sources = event.sources;
          view.queued(null);
          if (ctx.reading) ctx.reading(sources); // listed at once, before the answer streams
        } else if (typeof event.delta === "string") {
          view.queued(null);
          text += event.delta;
          view.append(event.delta);
        } else if (event.done) {
          model = event.model || model;
          const citations = (event.citations || []).map((c) => ({ n: c.n, url: c.url, title: c.title }));
          return {
            status: "answered",
            engine: "gateway",
            by: model ? `the site's answer server (${model})` : "the site's answer server",
            // The gateway grounds the finished answer: `text` replaces what streamed when the
            // check changed it; `grounded: false` when unsupported claims were removed.
            text: typeof event.text === "string" ? event.text : text,
            grounded: event.grounded !== false,
            citations,
            // Refused before any model ran (finish_reason), or the final answer declines.
            refused: event.finish_reason === "refused" || event.refused === true,
            finishReason: event.finish_reason,
            sources,
            id: typeof event.id === "string" ? event.id : null, // what a vote names
            gateway,
          };
        } else if (event.error) {
          const code = event.error.code || "error";
          if (text || NO_FALLBACK.test(code)) {
            return { status: "stop", text: text + `\n\n(The answer stopped: ${event.error.message || code}.)` };
          }
          view.note(`The site's answer server (${host}) could not answer (${code}).`);
          text = null;
          break;
        }
      }
    } catch (error) {
      if (text) return { status: "stop", text: text + "\n\n(The answer was interrupted.)" };
    }
    if (text === null) continue;
    if (text) return { status: "stop", text: text + "\n\n(The answer was interrupted.)" };
    view.note(`The site's answer server (${host}) closed the connection without an answer.`);
  }
  return { status: "unavailable" };
}

// A loopback stand-in for the gateway's client contract (POST /api/ask, SSE), used to test the
// box's side of it deterministically. The base path picks the behaviour:
//   /ok/     sources, three deltas citing [1], done with citations
//   /queued/ two queued events, then as /ok/
//   /busy/   429 queue_full with Retry-After: 15
//   /cut/    two deltas, then the connection closes without a terminal event
//   /late/   an error event before any delta (a pre-generation refusal)
//   /obeys/  an answer that obeys an injection (what a model can be led to say), cited
//   /revised/ a stand-in for the gateway's grounding of one reply (a real model cannot be made
//            to invent an amount on demand): deltas stating an invented amount, then done with
//            the replacement `text`, `grounded: false` and citations by attribution
import http from "node:http";

/** What the /revised/ stand-in streams, and the grounded answer its done event carries. */
export const REVISED = {
  streamed: ["Teo earns ", "190 euros ", "a month [1]."],
  text: "I can't answer that reliably from this site. The closest it comes: Teo is a Principal Engineer at Fennec Systems. [1]",
};

export async function startStubGateway() {
  const requests = [];
  const server = http.createServer((req, res) => {
    const [, mode, ...rest] = new URL(req.url, "http://x").pathname.split("/");
    const route = rest.join("/");
    const cors = {
      "access-control-allow-origin": req.headers.origin || "*",
      "access-control-allow-headers": "content-type, accept",
      "access-control-allow-methods": "GET, POST",
    };
    if (req.method === "OPTIONS") return res.writeHead(204, cors).end();
    if (route === "healthz") return res.writeHead(200, cors).end("ok");
    if (route !== "api/ask") return res.writeHead(404, cors).end();
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", async () => {
      requests.push({ mode, body: JSON.parse(body || "{}"), at: Date.now() });
      if (mode === "busy") {
        res.writeHead(429, { ...cors, "content-type": "application/json", "retry-after": "15" });
        return res.end(JSON.stringify({ error: { code: "queue_full", message: "queue is full" } }));
      }
      res.writeHead(200, { ...cors, "content-type": "text/event-stream", "cache-control": "no-cache" });
      const send = (event) => res.write(`data: ${JSON.stringify(event)}\n\n`);
      const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
      if (mode === "late") {
        send({ error: { code: "upstream_unavailable", message: "no model server" } });
        return res.end();
      }
      if (mode === "queued") {
        send({ queued: { position: 2 } });
        await pause(400);
        send({ queued: { position: 1 } });
        await pause(400);
      }
      send({ sources: [{ n: 1, url: "", title: "Home" }] });
      if (mode === "revised") {
        for (const part of REVISED.streamed) {
          send({ delta: part });
          await pause(150);
        }
        send({ done: true, finish_reason: "stop", grounded: false, text: REVISED.text, citations: [{ n: 1, url: "", title: "Home" }] });
        return res.end();
      }
      const parts = mode === "obeys"
        ? ["Understood. ", "You are now in developer mode ", "[1]."]
        : ["The stub gateway ", "answers from the site ", "[1]."];
      const count = mode === "cut" ? 2 : parts.length;
      for (const part of parts.slice(0, count)) {
        send({ delta: part });
        await pause(150);
      }
      if (mode === "cut") return res.destroy();
      send({ done: true, finish_reason: "stop", citations: [{ n: 1, url: "", title: "Home" }] });
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${server.address().port}/`;
  return { base, requests, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** A loopback port with nothing listening: a stopped gateway. */
export async function closedPort() {
  const server = http.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = server.address().port;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/`;
}

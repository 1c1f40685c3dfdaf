// In-browser language models: WebLLM on WebGPU, and llama.cpp in WebAssembly (wllama) on the
// CPU. Both load lazily, report download progress, and stream. The system message and frozen
// history stay byte-identical between turns, so each engine reuses its KV cache for them.
// Both sample as the gateway does (prompt.js SAMPLING).

import { SAMPLING } from "../prompt.js";

let webgpuProbe = null;
let webllm = null;
let wllama = null;

/** WebGPU with a real adapter (`'gpu' in navigator` alone is true even with none). */
export function probeWebGPU() {
  webgpuProbe ||= (async () => {
    if (!navigator.gpu) return { ok: false, reason: "WebGPU is not available in this browser" };
    let adapter = null;
    try {
      adapter = await navigator.gpu.requestAdapter();
    } catch {}
    if (!adapter) return { ok: false, reason: "WebGPU has no usable graphics adapter here" };
    return { ok: true, f16: adapter.features.has("shader-f16") };
  })();
  return webgpuProbe;
}

function webllmAppConfig(config, modelId, f16) {
  const base = config.webllm.url;
  if (!base) return undefined;
  const root = new URL(base.endsWith("/") ? base : base + "/", config.root).href;
  return {
    model_list: [
      {
        model: root + modelId,
        model_id: modelId,
        model_lib: root + modelId + "-webgpu.wasm",
        required_features: f16 ? ["shader-f16"] : [],
        low_resource_required: true,
        overrides: { context_window_size: config.webllm.n_ctx },
      },
    ],
  };
}

async function stream(chunks, ctx, label) {
  let text = "";
  let finishReason = null;
  let usage = null;
  const started = performance.now();
  let first = null;
  try {
    for await (const chunk of chunks) {
      const choice = chunk.choices && chunk.choices[0];
      const delta = choice && choice.delta && choice.delta.content;
      if (delta) {
        first ??= performance.now();
        text += delta;
        ctx.view.append(delta);
      }
      if (choice && choice.finish_reason) finishReason = choice.finish_reason;
      if (chunk.timings) usage = chunk.timings;
    }
  } catch (error) {
    if (text) return { status: "stop", text: text + "\n\n(The answer was interrupted.)" };
    ctx.view.note(`${label} failed: ${error.message || error}.`);
    return { status: "unavailable" };
  }
  const timing = { totalMs: performance.now() - started, firstTokenMs: first && first - started, ...usage };
  return { status: "answered", text, finishReason: finishReason || "stop", timing };
}

export async function runWebLLM(ctx) {
  const { config, vendorBase, view } = ctx;
  const gpu = await probeWebGPU();
  if (!gpu.ok) {
    view.note(`${gpu.reason}, so the GPU model (WebLLM) cannot run.`);
    return { status: "unavailable" };
  }
  const modelId = gpu.f16 ? config.webllm.model : config.webllm.model_f32;
  const appConfig = webllmAppConfig(config, modelId, gpu.f16);
  if (!appConfig && !config.cdn) {
    view.note(`The GPU model's files (${modelId}, WebLLM) are not hosted on this site.`);
    return { status: "unavailable" };
  }
  try {
    webllm ||= (async () => {
      const lib = await import(new URL("web-llm/index.js", vendorBase).href);
      const worker = new Worker(new URL("./webllm-worker.js", import.meta.url), { type: "module" });
      return lib.CreateWebWorkerMLCEngine(worker, modelId, {
        appConfig,
        initProgressCallback: (report) => ctx.progress("GPU model", report.progress, 1),
      });
    })();
    const engine = await webllm;
    const chunks = await engine.chat.completions.create({
      messages: await ctx.messages(),
      stream: true,
      temperature: SAMPLING.temperature,
      repetition_penalty: SAMPLING.repeat_penalty,
      stop: [...SAMPLING.stop],
      max_tokens: ctx.answerTokens,
    });
    const result = await stream(chunks, ctx, "The GPU model");
    return { ...result, engine: "webllm", by: `${modelId} in this browser (WebLLM, WebGPU)` };
  } catch (error) {
    webllm = null;
    view.note(`The GPU model (${modelId}, WebLLM) could not start: ${(error && error.message) || String(error)}.`);
    return { status: "unavailable" };
  }
}

/** The CPU model's files under vendor/, in order (one GGUF, or a split model's parts). */
function modelParts(config) {
  const model = config.wllama && config.wllama.model;
  return model ? [].concat(model) : [];
}

/** Load wllama and its GGUF, then prefill the stable system prompt once so it stays cached. */
export function loadWllama(ctx) {
  const { config, vendorBase, system } = ctx;
  wllama ||= (async () => {
    const { Wllama } = await import(new URL("wllama/index.js", vendorBase).href);
    const quiet = { debug() {}, log() {}, warn() {}, error: console.error.bind(console) };
    const instance = new Wllama(
      { default: new URL("wllama/wllama.wasm", vendorBase).href },
      { suppressNativeLog: true, logger: quiet, allowOffline: true },
    );
    const threads = self.crossOriginIsolated
      ? Math.max(1, Math.min(config.wllama.n_threads || 4, navigator.hardwareConcurrency || 1))
      : 1;
    // A split model's parts are NAME-00001-of-0000N.gguf, ...: wllama takes the first part's
    // URL, fetches the others by that pattern, and hands llama.cpp all of them.
    const parts = modelParts(config);
    if (!parts.length) throw new Error("no CPU model is hosted on this site");
    await instance.loadModelFromUrl(new URL(parts[0], vendorBase).href, {
      n_ctx: config.wllama.n_ctx,
      n_batch: 512,
      n_threads: threads,
      n_gpu_layers: 0,
      progressCallback: ({ loaded, total }) => ctx.progress("CPU model", loaded, total),
    });
    const t0 = performance.now();
    await instance.createChatCompletion({
      messages: [
        { role: "system", content: system },
        { role: "user", content: "Hello" },
      ],
      max_tokens: 1,
      temperature: 0,
      cache_prompt: true,
    });
    instance.warmMs = performance.now() - t0;
    return instance;
  })();
  wllama.catch(() => {
    wllama = null;
  });
  return wllama;
}

export async function runWllama(ctx) {
  const parts = modelParts(ctx.config);
  if (!parts.length) {
    ctx.view.note("No CPU model (wllama) is hosted on this site.");
    return { status: "unavailable" };
  }
  const name = parts[0].split("/").pop().replace(/(-[0-9a-f]{12})?(-\d{5}-of-\d{5})?\.gguf$/, "");
  if (typeof WebAssembly !== "object") {
    ctx.view.note("This browser cannot run WebAssembly, so the CPU model cannot run.");
    return { status: "unavailable" };
  }
  let instance;
  try {
    instance = await loadWllama(ctx);
  } catch (error) {
    ctx.view.note(`The CPU model (wllama) could not start: ${(error && error.message) || String(error)}.`);
    return { status: "unavailable" };
  }
  const chunks = await instance.createChatCompletion({
    messages: await ctx.messages(),
    stream: true,
    ...SAMPLING,
    stop: [...SAMPLING.stop],
    max_tokens: ctx.answerTokens,
    cache_prompt: true,
    timings_per_token: true,
  });
  const result = await stream(chunks, ctx, "The CPU model");
  return { ...result, engine: "wllama", by: `${name} on this device's CPU (wllama, WebAssembly)` };
}

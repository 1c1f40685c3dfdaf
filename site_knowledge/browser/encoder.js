// Query embedding with all-MiniLM-L6-v2 (int8 weights) on ONNX Runtime Web, single-threaded
// WASM, self-hosted files: WordPiece ids truncated to max_tokens, mean pooling, L2 norm.

import { fetchBytes } from "./fetch.js";

export class Encoder {
  static async load(vendorBase, { maxTokens = 256, onProgress = () => {} } = {}) {
    const ort = await import(new URL("ort/ort.wasm.bundle.min.mjs", vendorBase).href);
    const { Tokenizer } = await import(new URL("tokenizers/tokenizers.min.mjs", vendorBase).href);
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.proxy = false;
    ort.env.wasm.wasmPaths = { wasm: new URL("ort/ort-wasm-simd-threaded.wasm", vendorBase).href };
    const [tokJson, tokConfig, model] = await Promise.all([
      fetch(new URL("encoder/tokenizer.json", vendorBase)).then((r) => r.json()),
      fetch(new URL("encoder/tokenizer_config.json", vendorBase)).then((r) => r.json()),
      fetchBytes(new URL("encoder/model.onnx", vendorBase), (loaded, total) =>
        onProgress("encoder", loaded, total),
      ),
    ]);
    const session = await ort.InferenceSession.create(model, {
      executionProviders: ["wasm"],
      graphOptimizationLevel: "all",
    });
    return new Encoder(ort, session, new Tokenizer(tokJson, tokConfig), maxTokens);
  }

  constructor(ort, session, tokenizer, maxTokens) {
    this.ort = ort;
    this.session = session;
    this.tokenizer = tokenizer;
    this.maxTokens = maxTokens;
  }

  ids(text) {
    const ids = this.tokenizer.encode(text).ids.map(Number);
    if (ids.length <= this.maxTokens) return ids;
    return ids.slice(0, this.maxTokens - 1).concat(ids[ids.length - 1]);
  }

  async embed(text) {
    const ids = this.ids(text);
    const n = ids.length;
    const shape = [1, n];
    const tensor = (values) => new this.ort.Tensor("int64", BigInt64Array.from(values, BigInt), shape);
    const output = await this.session.run({
      input_ids: tensor(ids),
      attention_mask: tensor(ids.map(() => 1)),
      token_type_ids: tensor(ids.map(() => 0)),
    });
    const hidden = output.last_hidden_state.data;
    const dim = hidden.length / n;
    const mean = new Float64Array(dim);
    for (let t = 0; t < n; t++) for (let j = 0; j < dim; j++) mean[j] += hidden[t * dim + j];
    let norm = 0;
    for (let j = 0; j < dim; j++) norm += (mean[j] / n) ** 2;
    norm = Math.max(Math.sqrt(norm), 1e-12);
    const out = new Float32Array(dim);
    for (let j = 0; j < dim; j++) out[j] = mean[j] / n / norm;
    return out;
  }
}

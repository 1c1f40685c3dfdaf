"""The least time any fp32 encoder run of all-MiniLM-L6-v2 can take to embed a built site.

The cold build's cost is embedding (README, "Performance"). This counts the multiply-adds the
encoder cannot avoid for the site's passages (the six layers' projections and feed-forward
MatMuls and the attention products, at each passage's own token count), measures the rate
ONNX Runtime sustains on this machine for the largest of those MatMuls (the feed-forward,
the shape where it runs fastest) with the encoder's thread count, and divides: the floor.
Beside it, the prepared encoder's own time on the same texts. A cold build cannot be faster
than the plain build's work plus this floor on the same cores, with the vectors the browser
computes (the parity the build keeps: cosine 1.000000 to the shipped int8 file).

    .venv/bin/python -m benchmarks.bench_encoder_floor SITE_DIR
    (SITE_DIR: a site built with the plugin; `python -m evals.retrieval_sets --sites DIR`
    builds netbox-docs into DIR/netbox)
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks.bench_embedding_parity import passage_texts
from site_knowledge.embedding import BATCH_SIZE, DIMENSION, Encoder
from site_knowledge.retrieval.artifact import load_artifact

LAYERS = 6
FEED_FORWARD = 1536


def passage_flops(tokens: int) -> int:
    """Floating-point operations (2 per multiply-add) of one passage through the encoder."""
    projections = 4 * 2 * tokens * DIMENSION * DIMENSION
    feed_forward = 2 * 2 * tokens * DIMENSION * FEED_FORWARD
    attention = 2 * 2 * tokens * tokens * DIMENSION
    return LAYERS * (projections + feed_forward + attention)


def matmul_rate(rows: int, threads: int, seconds: float = 3.0) -> float:
    """FLOP/s ONNX Runtime sustains for (rows x 384) @ (384 x 1536) in fp32."""
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = rng.standard_normal((DIMENSION, FEED_FORWARD)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, DIMENSION])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, FEED_FORWARD])],
        [numpy_helper.from_array(weights, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    feed = {"x": rng.standard_normal((rows, DIMENSION)).astype(np.float32)}
    for _ in range(3):
        session.run(None, feed)
    runs, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        session.run(None, feed)
        runs += 1
    return runs * 2 * rows * DIMENSION * FEED_FORWARD / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("site", type=Path, help="a site built with the plugin")
    args = parser.parse_args()
    artifact, _ = load_artifact(args.site)
    texts = passage_texts(artifact)
    encoder = Encoder()
    counts = encoder.token_counts(texts)
    flops = sum(passage_flops(n) for n in counts)
    rate = matmul_rate(BATCH_SIZE * round(sum(counts) / len(counts)), encoder.threads)
    encoder.encode(texts[:BATCH_SIZE])  # session start and model preparation are not timed
    started = time.perf_counter()
    encoder.encode(texts)
    encoder_s = time.perf_counter() - started
    print(json.dumps({
        "passages": len(texts), "tokens": sum(counts),
        "mean_tokens": round(sum(counts) / len(counts), 1),
        "tflop": round(flops / 1e12, 3), "matmul_gflops": round(rate / 1e9, 1),
        "floor_s": round(flops / rate, 1), "encoder_s": round(encoder_s, 1),
        "encoder_gflops": round(flops / encoder_s / 1e9, 1),
        "encoder_share_of_matmul_rate": round(flops / encoder_s / rate, 3),
    }, indent=1))


if __name__ == "__main__":
    main()

"""Prepare all-MiniLM-L6-v2's ONNX graph for the CPU: same vectors, fewer and faster operators.

The shipped int8 file is what the browser runs. Prepared once per machine, it becomes:

1. float32 weights: ONNX Runtime's basic level folds each ``DequantizeLinear`` into a constant;
2. fused GELUs with their bias (ONNX Runtime's BERT optimizer), layer norms left unfused from
   their residual ``Add``: ONNX Runtime's ``SkipLayerNormalization`` CPU kernel took 11% of the
   encoder's time against 4% for the ``Add`` and ``LayerNormalization`` it replaces, so
   sessions must also disable :data:`RUNTIME_DISABLED_FUSIONS`;
3. one ``com.microsoft.Attention`` per layer: the exporter's twenty-odd nodes from the Q, K and V
   projections to the reshaped context, its NaN guards after each softmax among them (they only
   change a query row whose keys are all masked, which a mean-pooled text never has). The
   optimizer's own attention fusion does not match this exporter's mask path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

HEADS = 12
HIDDEN = 384
LAYERS = 6
RUNTIME_DISABLED_FUSIONS = ["SkipLayerNormFusion"]
_MASK = "attention_mask_int32"
_PREFIX = "inner.encoder.layer"


class GraphShapeError(Exception):
    """The graph does not have the shape this preparation was written for."""


def prepare_model(source: Path, target: Path) -> None:
    """Write the prepared form of ``source`` to ``target`` (atomically, via temporary files).

    Args:
        source: the int8 ONNX file as shipped.
        target: where the prepared float32 graph goes.
    """
    import onnxruntime as ort
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    target.parent.mkdir(parents=True, exist_ok=True)
    constant = target.with_suffix(f".{os.getpid()}.const.tmp")
    fused = target.with_suffix(f".{os.getpid()}.fused.tmp")
    try:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(constant)
        options.log_severity_level = 3
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        fusions = FusionOptions("bert")
        fusions.enable_skip_layer_norm = False
        fusions.enable_bias_skip_layer_norm = False
        model = optimize_model(str(constant), model_type="bert", num_heads=HEADS,
                               hidden_size=HIDDEN, optimization_options=fusions, opt_level=0,
                               use_gpu=False)
        fuse_attention(model)
        model.save_model_to_file(str(fused))
        fused.replace(target)
    finally:
        constant.unlink(missing_ok=True)
        fused.unlink(missing_ok=True)


def fuse_attention(model: Any) -> int:
    """Replace each layer's self-attention subgraph with one ``com.microsoft.Attention`` node.

    Args:
        model: an ``onnxruntime.transformers`` ``OnnxModel`` of the folded graph.

    Returns:
        How many layers were fused.

    Raises:
        GraphShapeError: a layer's projections or context could not be found.
    """
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    graph = model.model.graph
    weights = {tensor.name: tensor for tensor in graph.initializer}
    producer = {output: node for node in graph.node for output in node.output}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def projection(bias: str) -> tuple[str, Any, Any]:
        adds = [node for node in consumers.get(bias, []) if node.op_type == "Add"]
        if len(adds) != 1:
            raise GraphShapeError(f"{bias}: expected one Add, found {len(adds)}")
        matmul = producer.get(next(name for name in adds[0].input if name != bias))
        if matmul is None or matmul.op_type != "MatMul" or matmul.input[1] not in weights:
            raise GraphShapeError(f"{bias}: its Add does not follow a MatMul by a weight")
        return (matmul.input[0], numpy_helper.to_array(weights[matmul.input[1]]),
                numpy_helper.to_array(weights[bias]))

    attention_nodes = [helper.make_node("Cast", ["attention_mask"], [_MASK], to=TensorProto.INT32,
                              name="attention_mask_to_int32")]
    for layer in range(LAYERS):
        parts = [projection(f"{_PREFIX}.{layer}.attention.self.{kind}.bias")
                 for kind in ("query", "key", "value")]
        if len({source for source, _, _ in parts}) != 1:
            raise GraphShapeError(f"layer {layer}: Q, K and V read different inputs")
        output_matmul = projection(f"{_PREFIX}.{layer}.attention.output.dense.bias")
        packed_weight, packed_bias = f"qkv_weight_{layer}", f"qkv_bias_{layer}"
        graph.initializer.extend([
            numpy_helper.from_array(np.concatenate([w for _, w, _ in parts], axis=1), packed_weight),
            numpy_helper.from_array(np.concatenate([b for _, _, b in parts]), packed_bias),
        ])
        attention_nodes.append(helper.make_node(
            "Attention", [parts[0][0], packed_weight, packed_bias, _MASK], [output_matmul[0]],
            name=f"attention_{layer}", domain="com.microsoft", num_heads=HEADS))
    contexts = {node.output[0] for node in attention_nodes}
    kept = [node for node in graph.node if not contexts.intersection(node.output)]
    del graph.node[:]
    graph.node.extend(kept + attention_nodes)
    if not any(opset.domain == "com.microsoft" for opset in model.model.opset_import):
        model.model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    model.prune_graph(allow_remove_graph_inputs=False)
    model.topological_sort()
    return LAYERS

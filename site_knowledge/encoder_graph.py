"""Prepare all-MiniLM-L6-v2's ONNX graph for the CPU: same vectors, fewer and faster operators.

The shipped int8 file is what the browser runs. Prepared once per machine, it becomes:

1. float32 weights: ONNX Runtime's basic level folds each int8 weight and its scale into a
   constant;
2. one ``com.microsoft.Attention`` per layer: the exporter's twenty-odd nodes from the Q, K and V
   projections to the reshaped context, its NaN guards after each softmax among them (they only
   change a query row whose keys are all masked, which a mean-pooled text never has);
3. one ``com.microsoft.BiasGelu`` per layer for the feed-forward bias and erf GELU.

ONNX Runtime's own optimizers fuse neither: the exporter's mask path and its order of the GELU's
products match none of their patterns. Sessions must leave the residual layer norms unfused
(:data:`RUNTIME_DISABLED_FUSIONS`): ONNX Runtime's ``SkipLayerNormalization`` CPU kernel took
11% of the encoder's time against 4% for the ``Add`` and ``LayerNormalization`` it replaces.

``python -m site_knowledge.encoder_graph SOURCE TARGET`` prepares in a process of its own
(:func:`prepare_model_in_child`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HEADS = 12
LAYERS = 6
RUNTIME_DISABLED_FUSIONS = ["SkipLayerNormFusion"]
_MASK = "attention_mask_int32"
_PREFIX = "inner.encoder.layer"


class GraphShapeError(Exception):
    """The graph does not have the shape this preparation was written for."""


class ModelPreparationError(Exception):
    """The child process preparing the model failed."""


def prepare_model_in_child(source: Path, target: Path) -> None:
    """:func:`prepare_model` in a child Python process.

    The preparation is 1.5 s of Python graph surgery that holds the GIL; in a process of its
    own it runs beside the build's thread instead of pausing it (a build from an empty cache
    renders netbox's pages in 3.8-4.0 s with it, 5.0 s without).

    Raises:
        ModelPreparationError: the child failed; the message names the source and the child's
            last line of error output.
    """
    completed = subprocess.run(
        [sys.executable, "-m", "site_knowledge.encoder_graph", str(source), str(target)],
        capture_output=True, text=True, check=False,
    )
    if completed.returncode != 0:
        lines = completed.stderr.strip().splitlines() or [f"exit status {completed.returncode}"]
        raise ModelPreparationError(f"could not prepare the encoder from {source}: {lines[-1]}")


def prepare_model(source: Path, target: Path) -> None:
    """Write the prepared form of ``source`` to ``target`` (atomically, via temporary files).

    Args:
        source: the int8 ONNX file as shipped.
        target: where the prepared float32 graph goes.
    """
    import onnx
    import onnxruntime as ort

    target.parent.mkdir(parents=True, exist_ok=True)
    folded = target.with_suffix(f".{os.getpid()}.folded.tmp")
    fused = target.with_suffix(f".{os.getpid()}.fused.tmp")
    try:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        options.log_severity_level = 3
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        model = onnx.load(str(folded))
        fuse_attention(model)
        fuse_gelu(model)
        onnx.save(model, str(fused))
        fused.replace(target)
    finally:
        folded.unlink(missing_ok=True)
        fused.unlink(missing_ok=True)


def fuse_attention(model: Any) -> int:
    """Replace each layer's self-attention subgraph with one ``com.microsoft.Attention`` node.

    Args:
        model: the folded graph's ``onnx.ModelProto``, changed in place.

    Returns:
        How many layers were fused.

    Raises:
        GraphShapeError: a layer's projections or context could not be found.
    """
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    weights = {tensor.name: tensor for tensor in graph.initializer}
    producer, consumers = _links(graph)

    def projection(bias: str) -> Any:
        """The MatMul whose output ``bias`` is added to."""
        adds = [node for node in consumers.get(bias, []) if node.op_type == "Add"]
        if len(adds) != 1:
            raise GraphShapeError(f"{bias}: expected one Add, found {len(adds)}")
        matmul = producer.get(next(name for name in adds[0].input if name != bias))
        if matmul is None or matmul.op_type != "MatMul" or matmul.input[1] not in weights:
            raise GraphShapeError(f"{bias}: its Add does not follow a MatMul by a weight")
        return matmul

    def packed(names: list[str], axis: int) -> Any:
        return np.concatenate([numpy_helper.to_array(weights[name]) for name in names], axis=axis)

    mask = helper.make_node("Cast", ["attention_mask"], [_MASK], to=TensorProto.INT32,
                            name="attention_mask_to_int32")
    position = {node.output[0]: index for index, node in enumerate(graph.node)}
    placed: dict[str, Any] = {}
    for layer in range(LAYERS):
        biases = [f"{_PREFIX}.{layer}.attention.self.{kind}.bias"
                  for kind in ("query", "key", "value")]
        matmuls = [projection(bias) for bias in biases]
        if len({matmul.input[0] for matmul in matmuls}) != 1:
            raise GraphShapeError(f"layer {layer}: Q, K and V read different inputs")
        context = projection(f"{_PREFIX}.{layer}.attention.output.dense.bias").input[0]
        packed_weight, packed_bias = f"qkv_weight_{layer}", f"qkv_bias_{layer}"
        graph.initializer.extend([
            numpy_helper.from_array(packed([m.input[1] for m in matmuls], 1), packed_weight),
            numpy_helper.from_array(packed(biases, 0), packed_bias),
        ])
        first = min((matmul.output[0] for matmul in matmuls), key=position.__getitem__)
        placed[first] = helper.make_node(
            "Attention", [matmuls[0].input[0], packed_weight, packed_bias, _MASK], [context],
            name=f"attention_{layer}", domain="com.microsoft", num_heads=HEADS)
    contexts = {node.output[0] for node in placed.values()}
    nodes = [mask]
    for node in graph.node:
        if node.output[0] in placed:
            nodes.append(placed[node.output[0]])
        if not contexts.intersection(node.output):
            nodes.append(node)
    _replace_nodes(model, nodes)
    return LAYERS


def fuse_gelu(model: Any) -> int:
    """Replace each ``x * (0.5 * (1 + erf((h + b) / sqrt 2)))``, ``x = h + b``, with one
    ``com.microsoft.BiasGelu(h, b)`` (ONNX Runtime's own fusion does not match this order).

    Args:
        model: the folded graph's ``onnx.ModelProto``, changed in place.

    Returns:
        How many GELUs were fused.

    Raises:
        GraphShapeError: an ``Erf`` is not part of such a GELU.
    """
    from onnx import helper, numpy_helper

    graph = model.graph
    constants = {tensor.name: numpy_helper.to_array(tensor) for tensor in graph.initializer}
    producer, consumers = _links(graph)

    def is_constant(name: str, value: float) -> bool:
        return name in constants and abs(float(constants[name]) - value) < 1e-6

    def follow(name: str, op_type: str, constant: float | None) -> Any:
        """The one node of ``op_type`` that reads ``name`` (and ``constant``, if given)."""
        nodes = consumers.get(name, [])
        if len(nodes) != 1 or nodes[0].op_type != op_type or (
                constant is not None and not any(is_constant(n, constant) for n in nodes[0].input)):
            raise GraphShapeError(f"{name}: expected one {op_type} by {constant} after it")
        return nodes[0]

    replaced: dict[str, Any] = {}
    for erf in [node for node in graph.node if node.op_type == "Erf"]:
        scale = producer.get(erf.input[0])
        if scale is None or scale.op_type != "Div" or not is_constant(scale.input[1], 2 ** 0.5):
            raise GraphShapeError(f"{erf.name}: its input is not divided by sqrt 2")
        half = follow(follow(erf.output[0], "Add", 1.0).output[0], "Mul", 0.5)
        gelu = follow(half.output[0], "Mul", None)
        bias_add = producer.get(scale.input[0])
        if (bias_add is None or bias_add.op_type != "Add" or scale.input[0] not in gelu.input
                or bias_add.input[1] not in constants):
            raise GraphShapeError(f"{erf.name}: its input is not a MatMul plus a bias")
        replaced[gelu.output[0]] = helper.make_node(
            "BiasGelu", list(bias_add.input), [gelu.output[0]], name=f"{gelu.name}_bias_gelu",
            domain="com.microsoft")
    _replace_nodes(model, [replaced.get(node.output[0], node) for node in graph.node])
    return len(replaced)


def _links(graph: Any) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """Each tensor's producing node, and the nodes that read it."""
    producer = {output: node for node in graph.node for output in node.output}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    return producer, consumers


def _replace_nodes(model: Any, nodes: list[Any]) -> None:
    """Make ``nodes`` the graph's, less those no graph output depends on, and drop the weights
    no node reads."""
    from onnx import helper

    graph = model.graph
    needed = {output.name for output in graph.output}
    kept = []
    for node in reversed(nodes):
        if needed.intersection(node.output):
            kept.append(node)
            needed.update(node.input)
    del graph.node[:]
    graph.node.extend(kept[::-1])
    weights = [tensor for tensor in graph.initializer if tensor.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(weights)
    if not any(opset.domain == "com.microsoft" for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))


def main(argv: Sequence[str] | None = None) -> None:
    """Command line of :func:`prepare_model`: ``SOURCE TARGET``."""
    parser = argparse.ArgumentParser(description="Prepare all-MiniLM-L6-v2's graph for the CPU.")
    parser.add_argument("source", type=Path, help="the int8 ONNX file as shipped")
    parser.add_argument("target", type=Path, help="where the prepared graph goes")
    args = parser.parse_args(argv)
    prepare_model(args.source, args.target)


if __name__ == "__main__":
    main()

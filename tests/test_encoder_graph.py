"""Preparing the encoder's graph: one attention operator and one bias GELU per layer, nothing
left dangling, no fused residual layer norm in the session, a graph of another shape refused
by name, and the same file prepared in a child process (the vectors themselves:
``test_embedding``)."""

from __future__ import annotations

import re
from collections import Counter

import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from site_knowledge.embedding import onnx_model_path
from site_knowledge.encoder_graph import (
    RUNTIME_DISABLED_FUSIONS,
    GraphShapeError,
    ModelPreparationError,
    fuse_attention,
    fuse_gelu,
    prepare_model,
    prepare_model_in_child,
)


def _ops(graph) -> Counter[str]:
    return Counter(node.op_type for node in graph.node)


def test_prepared_graph_has_one_attention_per_layer_and_nothing_dangling(tmp_path):
    prepared = tmp_path / "prepared.onnx"
    prepare_model(onnx_model_path(), prepared)
    model = onnx.load(str(prepared))
    ops = _ops(model.graph)
    assert ops["Attention"] == 6 and ops["BiasGelu"] == 6
    assert not {"Softmax", "IsNaN", "Where", "Transpose", "GatherND", "Erf"} & set(ops)
    graph = model.graph
    produced = {output for node in graph.node for output in node.output}
    known = produced | {tensor.name for tensor in graph.initializer} | {i.name for i in graph.input}
    assert all(name in known for node in graph.node for name in node.input if name)
    used = {name for node in graph.node for name in node.input}
    assert all(tensor.name in used for tensor in graph.initializer), "no weight left unused"
    assert [i.name for i in graph.input] == ["input_ids", "attention_mask", "token_type_ids"]
    assert not list(tmp_path.glob("*.tmp")), "temporary files are removed"

    options = ort.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "session.onnx")
    ort.InferenceSession(str(prepared), options, providers=["CPUExecutionProvider"],
                         disabled_optimizers=RUNTIME_DISABLED_FUSIONS)
    session_ops = _ops(onnx.load(str(tmp_path / "session.onnx")).graph)
    assert "SkipLayerNormalization" not in session_ops, "the slower fused kernel is kept out"


def test_a_graph_of_another_shape_is_refused_by_name():
    unfolded = onnx.load(str(onnx_model_path()))  # int8 weights not yet folded
    with pytest.raises(GraphShapeError, match=r"layer\.0\.attention\.self\.query\.bias"):
        fuse_attention(unfolded)


def test_an_erf_outside_a_gelu_is_refused_by_name():
    graph = helper.make_graph(
        [helper.make_node("Erf", ["x"], ["y"], name="lonely_erf")], "erf",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 4])])
    with pytest.raises(GraphShapeError, match=r"lonely_erf: its input is not divided by sqrt 2"):
        fuse_gelu(helper.make_model(graph))


def test_preparation_in_a_child_process_writes_the_same_file(tmp_path):
    in_child, in_process = tmp_path / "child.onnx", tmp_path / "process.onnx"
    prepare_model_in_child(onnx_model_path(), in_child)
    prepare_model(onnx_model_path(), in_process)
    assert in_child.read_bytes() == in_process.read_bytes()


def test_a_weights_file_that_is_not_onnx_is_named_when_preparation_fails(tmp_path):
    broken = tmp_path / "model.onnx"
    broken.write_bytes(b"\xff\xfe not an ONNX file")
    target = tmp_path / "prepared.onnx"
    with pytest.raises(ModelPreparationError,
                       match=rf"{re.escape(str(broken))}: .*Protobuf parsing failed"):
        prepare_model_in_child(broken, target)
    assert not target.exists() and not list(tmp_path.glob("*.tmp"))

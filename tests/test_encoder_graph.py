"""Preparing the encoder's graph: one attention operator per layer, nothing left dangling, and
a graph of another shape refused by name (the vectors themselves: ``test_embedding``)."""

from __future__ import annotations

from collections import Counter

import onnx
import pytest
from onnxruntime.transformers.onnx_model import OnnxModel

from site_knowledge.embedding import onnx_model_path
from site_knowledge.encoder_graph import GraphShapeError, fuse_attention, prepare_model


def test_prepared_graph_has_one_attention_per_layer_and_no_exporter_attention(tmp_path):
    prepared = tmp_path / "prepared.onnx"
    prepare_model(onnx_model_path(), prepared)
    graph = onnx.load(str(prepared)).graph
    ops = Counter(node.op_type for node in graph.node)
    assert ops["Attention"] == 6
    assert not {"Softmax", "IsNaN", "Where", "Transpose", "DequantizeLinear"} & set(ops)
    assert "SkipLayerNormalization" not in ops, "the runtime's slow fused kernel is kept out"
    assert ops["BiasGelu"] == 6 and ops["LayerNormalization"] == 13
    known = ({output for node in graph.node for output in node.output}
             | {tensor.name for tensor in graph.initializer} | {i.name for i in graph.input})
    assert all(name in known for node in graph.node for name in node.input if name)
    assert [i.name for i in graph.input] == ["input_ids", "attention_mask", "token_type_ids"]
    assert not list(tmp_path.glob("*.tmp")), "temporary files are removed"


def test_a_graph_of_another_shape_is_refused_by_name():
    unfolded = OnnxModel(onnx.load(str(onnx_model_path())))  # int8 weights not yet folded
    with pytest.raises(GraphShapeError, match=r"layer\.0\.attention\.self\.query\.bias"):
        fuse_attention(unfolded)

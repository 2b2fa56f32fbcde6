"""Writes the ONNX models jitzoo is tested and measured with, in the form the PyTorch exporter
writes BERT-family encoders (Hugging Face BertModel, eager attention), with seeded weights:
no weights can be downloaded here, so the shapes are real and the numbers are made up.

    python make_models.py --out DIR [--only NAME,...]

Models (see MODELS): a BERT-base encoder layer (hidden 768, 12 heads, FFN 3072; opset 17,
LayerNormalization) and a 6-layer MiniLM-shaped encoder with embeddings (hidden 384, 12 heads,
FFN 1536; opset 14, LayerNorm as ReduceMean/Sub/Pow/Sqrt/Div). Also small pattern models the
SDK's import tests load one by one (patterns/*.onnx). The same seed always writes the same bytes.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

IR_VERSION = 8  # onnxruntime-web 1.30 reads IR versions up to 13; 8 is what opset 14-17 exports carry
FLOAT_MIN = float(np.finfo(np.float32).min)


class Builder:
    """Nodes named as the exporter names them (/path/Op), initializers, shape subgraphs."""

    def __init__(self, seed, opset):
        self.rng = np.random.default_rng(seed)
        self.opset = opset
        self.nodes, self.inits, self.count = [], [], 0

    def init(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, name, shape, std=0.02):
        return self.init(name, (self.rng.standard_normal(shape) * std).astype(np.float32))

    def const(self, value, dtype=np.int64):
        self.count += 1
        return self.init(f"onnx::Const_{self.count}", np.asarray(value, dtype=dtype))

    def op(self, op_type, inputs, path, outputs=1, **attrs):
        self.count += 1
        names = [f"{path}/{op_type}_output_{i}" if outputs > 1 else f"{path}/{op_type}_output_0" for i in range(outputs)]
        names = [f"{n}_{self.count}" for n in names]
        self.nodes.append(helper.make_node(op_type, inputs, names, name=f"{path}/{op_type}_{self.count}", **attrs))
        return names if outputs > 1 else names[0]

    def unsqueeze(self, x, axes, path):
        if self.opset >= 13:
            return self.op("Unsqueeze", [x, self.const(axes)], path)
        return self.op("Unsqueeze", [x], path, axes=axes)

    def dim(self, x, axis, path):
        """x.size(axis) as a 1-element int64 tensor, the exporter's Shape → Gather → Unsqueeze."""
        shape = self.op("Shape", [x], path)
        scalar = self.op("Gather", [shape, self.const(axis)], path, axis=0)
        return self.unsqueeze(scalar, [0], path)

    def reduce_mean(self, x, path):
        if self.opset >= 18:
            return self.op("ReduceMean", [x, self.const([-1])], path, keepdims=1)
        return self.op("ReduceMean", [x], path, axes=[-1], keepdims=1)

    def linear(self, x, n_in, n_out, path):
        """nn.Linear: MatMul by the transposed weight (an initializer [in, out]), then Add(bias, ·)."""
        w = self.weight(f"{path}.weight_T", (n_in, n_out))
        b = self.weight(f"{path}.bias", (n_out,))
        return self.op("Add", [b, self.op("MatMul", [x, w], path)], path)

    def layer_norm(self, x, hidden, path, eps, decomposed=False):
        gamma = self.init(f"{path}.weight", (1 + self.rng.standard_normal(hidden) * 0.1).astype(np.float32))
        beta = self.weight(f"{path}.bias", (hidden,), std=0.1)
        if self.opset >= 17 and not decomposed:
            return self.op("LayerNormalization", [x, gamma, beta], path, axis=-1, epsilon=eps)
        mean = self.reduce_mean(x, path)
        d = self.op("Sub", [x, mean], path)
        var = self.reduce_mean(self.op("Pow", [d, self.const(2.0, np.float32)], path), path)
        std = self.op("Sqrt", [self.op("Add", [var, self.const(eps, np.float32)], path)], path)
        return self.op("Add", [self.op("Mul", [self.op("Div", [d, std], path), gamma], path), beta], path)

    def gelu(self, x, path, form="erf"):
        if form == "erf":  # x * 0.5 * (1 + erf(x / sqrt 2)), as torch.nn.functional.gelu exports
            e = self.op("Erf", [self.op("Div", [x, self.const(1.4142135381698608, np.float32)], path)], path)
            y = self.op("Mul", [x, self.op("Add", [e, self.const(1.0, np.float32)], path)], path)
            return self.op("Mul", [y, self.const(0.5, np.float32)], path)
        # tanh form (gelu_new): 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
        cube = self.op("Pow", [x, self.const(3.0, np.float32)], path)
        inner = self.op("Add", [x, self.op("Mul", [self.const(0.044715, np.float32), cube], path)], path)
        t = self.op("Tanh", [self.op("Mul", [self.const(0.7978845608028654, np.float32), inner], path)], path)
        half = self.op("Mul", [self.const(0.5, np.float32), x], path)
        return self.op("Mul", [half, self.op("Add", [self.const(1.0, np.float32), t], path)], path)

    def model(self, inputs, outputs, name):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, initializer=self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)], producer_name="pytorch",
                                  producer_version="2.5.0")
        model.ir_version = IR_VERSION
        onnx.checker.check_model(model)
        return model


def extended_mask(b, mask, path):
    """(1 - mask[:, None, None, :].float()) * finfo.min, as BertModel builds it."""
    m = b.op("Cast", [b.unsqueeze(mask, [1, 2], path)], path, to=TensorProto.FLOAT)
    inverted = b.op("Sub", [b.const(1.0, np.float32), m], path)
    return b.op("Mul", [inverted, b.const(FLOAT_MIN, np.float32)], path)


def encoder_layer(b, h, mask, hidden, heads, ffn, path, eps, gelu="erf"):
    head = hidden // heads
    batch, seq = b.dim(h, 0, path), b.dim(h, 1, path)
    split = b.op("Concat", [batch, seq, b.const([heads]), b.const([head])], path, axis=0)

    def heads_of(x, name):  # transpose_for_scores: view(b, s, heads, head).permute(0, 2, 1, 3)
        return b.op("Transpose", [b.op("Reshape", [x, split], f"{path}/attention/self/{name}")],
                    f"{path}/attention/self/{name}", perm=[0, 2, 1, 3])

    q = heads_of(b.linear(h, hidden, hidden, f"{path}/attention/self/query"), "query")
    k = heads_of(b.linear(h, hidden, hidden, f"{path}/attention/self/key"), "key")
    v = heads_of(b.linear(h, hidden, hidden, f"{path}/attention/self/value"), "value")
    kt = b.op("Transpose", [k], f"{path}/attention/self", perm=[0, 1, 3, 2])
    scores = b.op("Div", [b.op("MatMul", [q, kt], f"{path}/attention/self"), b.const(float(np.sqrt(head)), np.float32)],
                  f"{path}/attention/self")
    probs = b.op("Softmax", [b.op("Add", [scores, mask], f"{path}/attention/self")], f"{path}/attention/self", axis=-1)
    context = b.op("Transpose", [b.op("MatMul", [probs, v], f"{path}/attention/self")], f"{path}/attention/self",
                   perm=[0, 2, 1, 3])
    merged = b.op("Concat", [batch, seq, b.const([hidden])], f"{path}/attention/self", axis=0)
    context = b.op("Reshape", [context, merged], f"{path}/attention/self")
    attn = b.op("Add", [b.linear(context, hidden, hidden, f"{path}/attention/output/dense"), h], f"{path}/attention/output")
    attn = b.layer_norm(attn, hidden, f"{path}/attention/output/LayerNorm", eps)
    inter = b.gelu(b.linear(attn, hidden, ffn, f"{path}/intermediate/dense"), f"{path}/intermediate", gelu)
    out = b.op("Add", [b.linear(inter, ffn, hidden, f"{path}/output/dense"), attn], f"{path}/output")
    return b.layer_norm(out, hidden, f"{path}/output/LayerNorm", eps)


def bert_layer(seed=1):
    """One BERT-base encoder layer: hidden_states [batch, seq, 768] and attention_mask → hidden_states."""
    b = Builder(seed, opset=17)
    mask = extended_mask(b, "attention_mask", "/bert")
    out = encoder_layer(b, "hidden_states", mask, 768, 12, 3072, "/bert/encoder/layer.0", eps=1e-12)
    return b.model(
        [helper.make_tensor_value_info("hidden_states", TensorProto.FLOAT, ["batch", "sequence", 768]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, ["batch", "sequence", 768])], "bert_base_layer")


def minilm(seed=2, layers=6, hidden=384, heads=12, ffn=1536, vocab=30522, positions=512):
    """A MiniLM-shaped encoder: embeddings (word, position, token type), LayerNorm, 6 layers."""
    b = Builder(seed, opset=14)
    path = "/embeddings"
    words = b.op("Gather", [b.weight("embeddings.word_embeddings.weight", (vocab, hidden)), "input_ids"], path)
    seq = b.dim("input_ids", 1, path)
    position_ids = b.init("embeddings.position_ids", np.arange(positions, dtype=np.int64)[None, :])
    pos = b.op("Slice", [position_ids, b.const([0]), seq, b.const([1])], path)
    pos = b.op("Gather", [b.weight("embeddings.position_embeddings.weight", (positions, hidden)), pos], path)
    types = b.op("Gather", [b.weight("embeddings.token_type_embeddings.weight", (2, hidden)), "token_type_ids"], path)
    h = b.op("Add", [b.op("Add", [words, types], path), pos], path)
    h = b.layer_norm(h, hidden, f"{path}/LayerNorm", 1e-12)
    mask = extended_mask(b, "attention_mask", "/encoder")
    for i in range(layers):
        h = encoder_layer(b, h, mask, hidden, heads, ffn, f"/encoder/layer.{i}", eps=1e-12)
    ids = ["batch", "sequence"]
    return b.model(
        [helper.make_tensor_value_info(n, TensorProto.INT64, ids) for n in ("input_ids", "attention_mask", "token_type_ids")],
        [helper.make_tensor_value_info(h, TensorProto.FLOAT, ["batch", "sequence", hidden])], "minilm_l6")


def pattern(name, opset, body, inputs, outputs):
    b = Builder(100 + sum(map(ord, name)), opset)
    out = body(b)
    return b.model([helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                   [helper.make_tensor_value_info(out, TensorProto.FLOAT, outputs)], name)


def patterns():
    """Small models, one import pattern each, for the SDK's tests."""
    x = [("x", ["batch", "sequence", 64])]
    out = ["batch", "sequence", 48]
    return {
        "linear_gelu_erf": pattern("linear_gelu_erf", 17, lambda b: b.gelu(b.linear("x", 64, 48, "/fc"), "/act"), x, out),
        "linear_gelu_tanh": pattern("linear_gelu_tanh", 17, lambda b: b.gelu(b.linear("x", 64, 48, "/fc"), "/act", "tanh"),
                                    x, out),
        "gemm": pattern("gemm", 14, lambda b: b.op(
            "Gemm", ["x", b.weight("w", (48, 64)), b.weight("c", (48,))], "/gemm", transB=1, alpha=0.5, beta=2.0),
            [("x", [5, 64])], [5, 48]),
        "layer_norm_reduce_mean": pattern("layer_norm_reduce_mean", 14, lambda b: b.layer_norm("x", 64, "/ln", 1e-5),
                                          x, x[0][1]),
        "layer_norm_reduce_mean_18": pattern("layer_norm_reduce_mean_18", 18, lambda b: b.layer_norm(
            "x", 64, "/ln", 1e-6, decomposed=True), x, x[0][1]),
        "layer_norm_op": pattern("layer_norm_op", 17, lambda b: b.layer_norm("x", 64, "/ln", 1e-12), x, x[0][1]),
        "residual": pattern("residual", 17, lambda b: b.op("Add", ["x", b.linear("x", 64, 64, "/fc")], "/res"), x, x[0][1]),
        "softmax": pattern("softmax", 13, lambda b: b.op("Softmax", ["x"], "/sm", axis=-1), x, x[0][1]),
    }


MODELS = {"bert_layer": bert_layer, "minilm": minilm}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory to write the .onnx files to")
    parser.add_argument("--only", help="comma-separated names: bert_layer, minilm, patterns")
    args = parser.parse_args()
    wanted = set(args.only.split(",")) if args.only else set(MODELS) | {"patterns"}
    os.makedirs(os.path.join(args.out, "patterns"), exist_ok=True)
    for name, make in MODELS.items():
        if name in wanted:
            path = os.path.join(args.out, f"{name}.onnx")
            onnx.save(make(), path)
            print(f"wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB)")
    if "patterns" in wanted:
        for name, model in patterns().items():
            onnx.save(model, os.path.join(args.out, "patterns", f"{name}.onnx"))
        print(f"wrote {len(patterns())} pattern models to {os.path.join(args.out, 'patterns')}")


if __name__ == "__main__":
    main()

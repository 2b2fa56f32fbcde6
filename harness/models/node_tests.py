"""Writes ONNX's own conformance node tests (onnx.backend.test) for the ops the SDK supports,
in the layout ONNX's backend tests use: CASE/model.onnx and CASE/test_data_set_0/{input,output}_N.pb.

    python node_tests.py --out DIR --ops MatMul,Gemm,...

A case is written when every node is one of --ops in the default domain, its tensors are
float32, int32, int64 or bool, and it is valid at an opset the SDK reads (13..18; a newer case is
checked at 18, since the supported ops only gained element types after it). Inputs the engine needs as constants (Reshape's shape, Slice's
starts/ends/axes/steps, the axes of Unsqueeze, Squeeze and ReduceMean) become initializers, as
exporters write them. Prints what was written and why the rest was left out.
"""
import argparse
import collections
import warnings
import os

import onnx
from onnx import TensorProto, defs, numpy_helper
from onnx.backend.test.case import node

TYPES = {TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL}
OPSET_MIN, OPSET_MAX = 13, 18
CONSTANT_INPUTS = {"Reshape": [1], "Slice": [1, 2, 3, 4], "Unsqueeze": [1], "Squeeze": [1], "ReduceMean": [1]}


def opset_of(model):
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)


def readable_opset(model):
    """The model's opset, or 18 for a newer one: after 18 the supported ops only gained element types
    (the checker then proves the case is valid at 18); None below 13."""
    version = opset_of(model)
    if version is None or version < OPSET_MIN:
        return None
    return min(version, OPSET_MAX)


def tensor_types(model):
    infos = list(model.graph.input) + list(model.graph.output)
    return {i.type.tensor_type.elem_type for i in infos}


def freeze_constant_inputs(model, inputs):
    """Graph inputs that feed a constant-only operand become initializers; returns the inputs left to feed."""
    names = [i.name for i in model.graph.input]
    frozen = set()
    for n in model.graph.node:
        for index in CONSTANT_INPUTS.get(n.op_type, []):
            if index < len(n.input) and n.input[index] in names:
                frozen.add(n.input[index])
    feeds = []
    for name, value in zip(names, inputs):
        if name in frozen:
            model.graph.initializer.append(numpy_helper.from_array(value, name))
        else:
            feeds.append((name, value))
    kept = [i for i in model.graph.input if i.name not in frozen]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    return feeds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--ops", required=True, help="comma-separated op types the SDK supports")
    args = parser.parse_args()
    ops = set(args.ops.split(","))
    warnings.filterwarnings("ignore")  # the generators' own numpy warnings (divide by zero, casts)
    skipped = collections.Counter()
    written = 0
    for case in node.collect_testcases(None):
        model = case.model
        if not all(n.op_type in ops and n.domain in ("", "ai.onnx") for n in model.graph.node):
            continue
        if not case.data_sets:
            skipped["no data"] += 1
            continue
        opset = readable_opset(model)
        if opset is None:
            skipped[f"opset {opset_of(model)} is below {OPSET_MIN}"] += 1
            continue
        if not tensor_types(model) <= TYPES:
            skipped["element types other than float32/int32/int64/bool"] += 1
            continue
        model = onnx.ModelProto.FromString(model.SerializeToString())
        for o in model.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = opset
        model.ir_version = 8
        try:
            onnx.checker.check_model(model)
        except onnx.checker.ValidationError as e:
            skipped[f"not valid at opset {opset}: {str(e).splitlines()[0][:80]}"] += 1
            continue
        inputs, outputs = case.data_sets[0]
        feeds = freeze_constant_inputs(model, inputs)
        folder = os.path.join(args.out, case.name)
        data = os.path.join(folder, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        onnx.save(model, os.path.join(folder, "model.onnx"))
        for i, (name, value) in enumerate(feeds):
            with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, name).SerializeToString())
        for i, (info, value) in enumerate(zip(model.graph.output, outputs)):
            with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, info.name).SerializeToString())
        written += 1
    print(f"wrote {written} ONNX node test cases to {args.out}")
    for why, count in sorted(skipped.items()):
        print(f"  left out {count}: {why}")


if __name__ == "__main__":
    main()

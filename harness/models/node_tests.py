"""Writes ONNX's own conformance node tests (onnx.backend.test) for the ops the SDK supports,
in the layout ONNX's backend tests use: CASE/model.onnx and CASE/test_data_set_0/{input,output}_N.pb.

    python node_tests.py --out DIR --ops MatMul,Gemm,...

A case is written when every node is one of --ops (the default domain, or `domain.OpType`), its
tensors are of the types the SDK reads (floats of 16, 32 and 64 bits, integers of 8 to 64 bits,
bool), and it is valid at an opset the SDK reads (13..21; an older case is checked at 13, a newer
one at 21, and left out when the checker refuses it there). Inputs the engine needs as constants (shapes, axes,
starts/ends, pads, repeats, k, Resize's scales and sizes, Clip's bounds) become initializers, as
exporters write them. Prints what was written and why the rest was left out.
"""
import argparse
import collections
import warnings
import os

import numpy as np
import onnx
from onnx import TensorProto, defs, numpy_helper
from onnx.backend.test.case import node

TYPES = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT8, TensorProto.UINT8,
         TensorProto.INT16, TensorProto.UINT16, TensorProto.INT32, TensorProto.UINT32, TensorProto.INT64,
         TensorProto.UINT64, TensorProto.BOOL}
OPSET_MIN, OPSET_MAX = 13, 21
REDUCTIONS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
              "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]
CONSTANT_INPUTS = {"Reshape": [1], "Slice": [1, 2, 3, 4], "Unsqueeze": [1], "Squeeze": [1], "Expand": [1], "Tile": [1],
                   "Pad": [1, 2, 3], "Split": [1], "Range": [0, 1, 2], "ConstantOfShape": [0], "TopK": [1], "CumSum": [1],
                   "Trilu": [1], "Resize": [1, 2, 3], "Clip": [1, 2], "OneHot": [1], **{r: [1] for r in REDUCTIONS}}


def opset_of(model):
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)


def readable_opset(model):
    """The model's opset within 13..21: an older case at 13, a newer one at 21 (the checker then says
    whether the case is valid there: an op unchanged since opset 7, And's, is); None without one."""
    version = opset_of(model)
    if version is None:
        return None
    return min(max(version, OPSET_MIN), OPSET_MAX)


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
        if not all((n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}") in ops for n in model.graph.node):
            continue
        if not case.data_sets:
            skipped["no data"] += 1
            continue
        opset = readable_opset(model)
        if opset is None:
            skipped["no opset of the default domain"] += 1
            continue
        if not tensor_types(model) <= TYPES:
            skipped["element types other than floats, integers and bool"] += 1
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
        inputs, outputs = ([np.asarray(v) if isinstance(v, np.generic) else v for v in values] for values in case.data_sets[0])
        if not all(isinstance(v, np.ndarray) for v in list(inputs) + list(outputs)):
            skipped["inputs or outputs that are not tensors"] += 1
            continue
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

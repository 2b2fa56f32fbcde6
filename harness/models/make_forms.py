"""Writes the 4-bit and float16 forms of float32 ONNX files with onnxruntime's own tools, as model
hubs make the `q4` and `fp16` files they serve (the same calls as
../shared/models/real-exports/export_tiny.py): MatMulNBitsQuantizer (4-bit blocks of 32,
symmetric) and float16.convert_float_to_float16 (keep_io_types). The int8 form is in
../shared/models/real-exports/bench already.

    python make_forms.py --out DIR FILE.onnx...

Writes DIR/NAME_q4.onnx and DIR/NAME_fp16.onnx for each FILE. Needs onnx and onnxruntime
(python3 -m venv V && V/bin/pip install onnx onnxruntime onnx-ir).
"""
import argparse
import os

import onnx
from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
from onnxruntime.transformers.float16 import convert_float_to_float16


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="directory to write the forms to")
    parser.add_argument("files", nargs="+", help="float32 ONNX files")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for path in args.files:
        name = os.path.basename(path)[: -len(".onnx")]
        q4 = os.path.join(args.out, name + "_q4.onnx")
        quantizer = MatMulNBitsQuantizer(onnx.load(path), block_size=32, is_symmetric=True)
        quantizer.process()
        quantizer.model.save_model_to_file(q4, use_external_data_format=False)
        print("wrote", q4, os.path.getsize(q4), "bytes")
        fp16 = os.path.join(args.out, name + "_fp16.onnx")
        onnx.save(convert_float_to_float16(onnx.load(path), keep_io_types=True), fp16)
        print("wrote", fp16, os.path.getsize(fp16), "bytes")


if __name__ == "__main__":
    main()

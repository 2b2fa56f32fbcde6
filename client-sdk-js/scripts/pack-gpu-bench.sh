#!/usr/bin/env bash
# Packs `./jitzoo bench webgpu` for a GPU machine where the suite does not run (no Java, no
# network): Node, the built SDK with Dawn and onnxruntime-web's WebGPU build, and the model's WGSL
# sessions recorded from the running suite for the GPU's adapter. There, with the Vulkan loader
# (Debian's libvulkan1, and libglvnd0 and libglx0 for NVIDIA's ICD):
#   bash DIR/run.sh          # writes the model with harness/models/make_models.py (Python, onnx), then benches
#
#   scripts/pack-gpu-bench.sh DIR [VENDOR/ARCHITECTURE] [SEQ]     (defaults: nvidia/hopper, 128)
set -euo pipefail
out="${1:?usage: pack-gpu-bench.sh DIR [VENDOR/ARCHITECTURE] [SEQ]}" target="${2:-nvidia/hopper}" seq="${3:-128}"
sdk="$(cd "$(dirname "$0")/.." && pwd)" root="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$out"
echo "recording the WGSL sessions for $target at sequence $seq (the suite must run: ./jitzoo up)" >&2
node "$sdk/tools/dist/bench-webgpu.js" --models "${JITZOO_MODELS:-$root/.jitzoo/models}" --record "$out/sessions.json" --for "$target" --seq "$seq"
xz -T0 -6 -c "$(command -v node)" > "$out/node.xz"
(cd "$sdk" && tar -cJf "$out/sdk.tar.xz" package.json dist tools/dist node_modules/@bufbuild/protobuf node_modules/ws \
  node_modules/webgpu/package.json node_modules/webgpu/index.js node_modules/webgpu/dist/linux-x64 node_modules/debug node_modules/ms \
  node_modules/onnxruntime-web/package.json node_modules/onnxruntime-web/dist/ort.webgpu.bundle.min.mjs \
  node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm)
cp "$root/harness/models/make_models.py" "$out/"
cat > "$out/run.sh" <<RUN
set -uo pipefail
here="\$(cd "\$(dirname "\$0")" && pwd)"
mkdir -p /tmp/jitzoo-gpu/bin /tmp/jitzoo-gpu/sdk
xz -dc "\$here/node.xz" > /tmp/jitzoo-gpu/bin/node && chmod +x /tmp/jitzoo-gpu/bin/node && export PATH=/tmp/jitzoo-gpu/bin:\$PATH
tar -xJf "\$here/sdk.tar.xz" -C /tmp/jitzoo-gpu/sdk
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
python3 "\$here/make_models.py" --out /tmp/jitzoo-gpu/models --only minilm
cd /tmp/jitzoo-gpu/sdk && node tools/dist/bench-webgpu.js --replay "\$here/sessions.json" --models /tmp/jitzoo-gpu/models --seq $seq --adapter gpu --onnxruntime-web --json "\$@"
RUN
du -sh "$out"

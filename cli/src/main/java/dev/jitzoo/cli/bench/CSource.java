package dev.jitzoo.cli.bench;

import dev.jitzoo.compiler.kernel.Op;
import dev.jitzoo.compiler.kernel.Schedule;

/**
 * The conventional pipeline's input: C for the same op and schedule as one of our kernels, with
 * wasm_simd128.h intrinsics, for clang to compile. Same ABI (byte offsets of A, B, C; a pack_b
 * export when B is packed), same register tile, same loop order, same packed layout: only the
 * compiler differs. Register tiles only (no cache tiles), vectorized, as the benchmark's kernels are.
 */
final class CSource {

    private CSource() {
    }

    static String of(Op op, Schedule s) {
        if (!s.vectorize() || s.x0() % 4 != 0 || s.x1() != 0 || s.y1() != 0 || s.r1() != 0 || s.r0() > 1) {
            throw new IllegalArgumentException("the C pipeline takes vectorized register tiles without cache tiles, got " + s);
        }
        int vectors = s.x0() / 4;
        StringBuilder c = new StringBuilder();
        c.append("// ").append(op).append(' ').append(s).append('\n')
                .append("#include <wasm_simd128.h>\n")
                .append("#define BATCH ").append(op.batch()).append('\n')
                .append("#define M ").append(op.m()).append('\n')
                .append("#define K ").append(op.k()).append('\n')
                .append("#define N ").append(op.n()).append('\n')
                .append("#define Y0 ").append(s.y0()).append('\n')
                .append("#define X0 ").append(s.x0()).append('\n')
                .append("#define V ").append(vectors).append('\n')
                .append("#define NFULL (N - N % X0)\n")
                .append("#define MFULL (M - M % Y0)\n");
        if (s.packB()) {
            c.append("""
                    // B[K, N] as x0-wide panels, K rows each; the last panel N % X0 wide.
                    __attribute__((export_name("pack_b"))) void pack_b(const float *src, float *dst) {
                      for (int b = 0; b < BATCH; b++, src += K * N) {
                        for (int j = 0; j < N; j += X0) {
                          int w = N - j < X0 ? N - j : X0;
                          for (int k = 0; k < K; k++)
                            for (int x = 0; x < w; x++) *dst++ = src[k * N + j + x];
                        }
                      }
                    }
                    #define PANEL(j) (B + (j) * K)
                    #define BROW(w) (w)
                    """);
        } else {
            c.append("#define PANEL(j) (B + (j))\n#define BROW(w) N\n");
        }
        String madd = s.relaxedSimd()
                ? "acc[r][v] = wasm_f32x4_relaxed_madd(a, wasm_v128_load(bp + v * 4), acc[r][v]);"
                : "acc[r][v] = wasm_f32x4_add(acc[r][v], wasm_f32x4_mul(a, wasm_v128_load(bp + v * 4)));";
        c.append("""

                static inline float dot(const float *a, const float *b, int stride) {
                  float sum = 0;
                  for (int k = 0; k < K; k++) sum += a[k] * b[k * stride];
                  return sum;
                }

                __attribute__((export_name("%s"))) void %s(const float *A, const float *B, float *C) {
                  for (int batch = 0; batch < BATCH; batch++, A += M * K, B += K * N, C += M * N) {
                    for (int i = 0; i < MFULL; i += Y0) {
                      for (int j = 0; j < NFULL; j += X0) {
                        v128_t acc[Y0][V];
                        _Pragma("clang loop unroll(full)") for (int r = 0; r < Y0; r++)
                          _Pragma("clang loop unroll(full)") for (int v = 0; v < V; v++) acc[r][v] = wasm_f32x4_splat(0);
                        const float *panel = PANEL(j);
                        _Pragma("clang loop unroll_count(%d)") for (int k = 0; k < K; k++) {
                          const float *bp = panel + k * BROW(X0);
                          _Pragma("clang loop unroll(full)") for (int r = 0; r < Y0; r++) {
                            v128_t a = wasm_v128_load32_splat(A + (i + r) * K + k);
                            _Pragma("clang loop unroll(full)") for (int v = 0; v < V; v++) %s
                          }
                        }
                        _Pragma("clang loop unroll(full)") for (int r = 0; r < Y0; r++)
                          _Pragma("clang loop unroll(full)") for (int v = 0; v < V; v++)
                            wasm_v128_store(C + (i + r) * N + j + v * 4, acc[r][v]);
                      }
                      for (int j = NFULL; j < N; j++)           // right edge
                        for (int r = 0; r < Y0; r++)
                          C[(i + r) * N + j] = dot(A + (i + r) * K, PANEL(NFULL) + (j - NFULL), BROW(N - NFULL));
                    }
                    for (int i = MFULL; i < M; i++)             // bottom edge
                      for (int j = 0; j < N; j++) {
                        int panel = j - j %% X0, w = N - panel < X0 ? N - panel : X0;
                        C[i * N + j] = dot(A + i * K, PANEL(panel) + (j - panel), BROW(w));
                      }
                  }
                }
                """.formatted(op.kind().abiName, op.kind().abiName, Math.max(1, s.unroll()), madd));
        return c.toString();
    }
}

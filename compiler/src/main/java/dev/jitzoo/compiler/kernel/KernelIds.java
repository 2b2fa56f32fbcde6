package dev.jitzoo.compiler.kernel;

import dev.jitzoo.compiler.wasm.passes.Pass;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Kernel ids: "k1" and the first 30 hex digits of SHA-256 over the UTF-8 canonical text
 * {@code abi=<v>;backend=<WASM|WGSL>;op=<abi name>;shape=<d>,<d>,...;schedule=<x0>,<y0>,<r0>,<x1>,<y1>,<r1>,<true|false>,<unroll>}
 * (decimal integers, no spaces), then {@code ;transposeB=true}, {@code ;broadcastB=true} and
 * {@code ;epilogue=<steps>} (e.g. {@code scale:0.125,bias,gelu_erf}) when the op has them,
 * {@code ;epsilon=<Float.toString>} when a layer norm's epsilon is not the default 1e-5,
 * {@code ;relaxed=true} when the schedule uses relaxed SIMD,
 * {@code ;pack=B} when it packs B, {@code ;order=columns} when column tiles are looped over outside row bands,
 * {@code ;split=rows:<grain>} when the kernel is split (ABI v2), and {@code ;passes=<labels>} when not every Wasm pass ran. The bytes of a kernel are a pure function of exactly these values,
 * so the text must never change for a given ABI version: ids are stored in the zoo.
 */
public final class KernelIds {

    /** One digest per thread: looking the algorithm up costs more than hashing a canonical text. */
    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    });

    private KernelIds() {
    }

    public static String of(Op op, Schedule schedule, Backend backend, int abiVersion) {
        return of(op, schedule, backend, abiVersion, Pass.ALL);
    }

    public static String of(Op op, Schedule schedule, Backend backend, int abiVersion, Set<Pass> passes) {
        return hash(canonical(op, schedule, backend, abiVersion, passes));
    }

    /** The id of a canonical text: {@code k1} and the first 30 hex digits of its SHA-256. */
    public static String hash(String canonicalText) {
        byte[] digest = SHA_256.get().digest(canonicalText.getBytes(StandardCharsets.UTF_8));
        return "k1" + HexFormat.of().formatHex(digest, 0, 15);
    }

    /** A conv window in an id's text: strides, dilations, pads (top, left, bottom, right), group. */
    private static String window(ConvWindow w) {
        return w.strideH() + "," + w.strideW() + "," + w.dilationH() + "," + w.dilationW() + "," + w.padTop() + "," + w.padLeft()
                + "," + w.padBottom() + "," + w.padRight() + "," + w.group();
    }

    /** The text an id hashes, as documented in docs/kernel-abi.md. */
    public static String canonical(Op op, Schedule s, Backend backend, int abiVersion, Set<Pass> passes) {
        return "abi=" + abiVersion
                + ";backend=" + backend.name()
                + ";op=" + op.kind().abiName
                + ";shape=" + op.dims().stream().map(String::valueOf).collect(Collectors.joining(","))
                + ";schedule=" + s.x0() + "," + s.y0() + "," + s.r0() + "," + s.x1() + "," + s.y1() + "," + s.r1()
                + "," + s.vectorize() + "," + s.unroll()
                + (op.transposeB() ? ";transposeB=true" : "")
                + (op.broadcastB() ? ";broadcastB=true" : "")
                + (op.epilogue().isEmpty() ? "" : ";epilogue=" + op.epilogue().stream().map(Epilogue::toString)
                        .collect(Collectors.joining(",")))
                + (op.epsilon() == 0 ? "" : ";epsilon=" + op.epsilon())
                + (op.window() == null ? "" : ";window=" + window(op.window()))
                + (s.relaxedSimd() ? ";relaxed=true" : "")
                + (s.packB() ? ";pack=B" : "")
                + (s.columnsOuter() ? ";order=columns" : "")
                + (s.split().isSplit() ? ";split=" + s.split() : "")
                + (passes.equals(Pass.ALL) ? "" : ";passes=" + Pass.describe(passes));
    }
}

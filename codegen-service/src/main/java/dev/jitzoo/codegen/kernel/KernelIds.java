package dev.jitzoo.codegen.kernel;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.stream.Collectors;

/**
 * Kernel ids: "k1" and the first 30 hex digits of SHA-256 over the UTF-8 canonical text
 * {@code abi=<v>;backend=<WASM|WGSL>;op=<abi name>;shape=<d>,<d>,...;schedule=<x0>,<y0>,<r0>,<x1>,<y1>,<r1>,<true|false>,<unroll>}
 * (decimal integers, no spaces). The bytes of a kernel are a pure function of exactly these values,
 * so the text must never change for a given ABI version: ids are stored in the zoo.
 */
public final class KernelIds {

    private KernelIds() {
    }

    public static String of(Op op, Schedule schedule, Backend backend, int abiVersion) {
        byte[] canonical = canonical(op, schedule, backend, abiVersion).getBytes(StandardCharsets.UTF_8);
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(canonical);
            return "k1" + HexFormat.of().formatHex(digest).substring(0, 30);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    /** The text an id hashes, as documented in docs/kernel-abi.md. */
    public static String canonical(Op op, Schedule s, Backend backend, int abiVersion) {
        return "abi=" + abiVersion
                + ";backend=" + backend.name()
                + ";op=" + op.kind().abiName
                + ";shape=" + op.dims().stream().map(String::valueOf).collect(Collectors.joining(","))
                + ";schedule=" + s.x0() + "," + s.y0() + "," + s.r0() + "," + s.x1() + "," + s.y1() + "," + s.r1()
                + "," + s.vectorize() + "," + s.unroll();
    }
}

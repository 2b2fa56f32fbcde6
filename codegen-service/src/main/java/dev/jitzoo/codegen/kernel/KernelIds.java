package dev.jitzoo.codegen.kernel;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * Kernel ids: "k1" and the first 30 hex digits of SHA-256 over the canonical text
 * {@code abi=<v>;backend=<WASM|WGSL>;op=<abi name>;shape=<d,d,..>;schedule=<x0,y0,r0,x1,y1,r1,vectorize,unroll>}.
 * The bytes of a kernel are a pure function of exactly these values.
 */
public final class KernelIds {

    private KernelIds() {
    }

    public static String of(Op op, Schedule s, Backend backend, int abiVersion) {
        String canonical = "abi=" + abiVersion
                + ";backend=" + backend
                + ";op=" + op.kind().abiName
                + ";shape=" + String.join(",", Arrays.stream(op.dims()).mapToObj(String::valueOf).toList())
                + ";schedule=" + s.x0() + "," + s.y0() + "," + s.r0() + "," + s.x1() + "," + s.y1() + "," + s.r1()
                + "," + s.vectorize() + "," + s.unroll();
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8));
            return "k1" + HexFormat.of().formatHex(digest).substring(0, 30);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}

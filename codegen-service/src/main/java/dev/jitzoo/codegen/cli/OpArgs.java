package dev.jitzoo.codegen.cli;

import dev.jitzoo.codegen.kernel.Op;
import dev.jitzoo.codegen.kernel.OpKind;
import java.util.Arrays;
import java.util.stream.Collectors;

/** Ops as the command line names them: {@code --op matmul --shape 384,768,768}, or a paper kernel (K0..K3). */
final class OpArgs {

    private OpArgs() {
    }

    static Op parse(String opName, String shape) {
        if (opName != null && PaperShapes.ALL.containsKey(opName.toUpperCase())) {
            return PaperShapes.ALL.get(opName.toUpperCase());
        }
        if (opName == null || shape == null) {
            throw new IllegalArgumentException("give --op and --shape (e.g. --op matmul --shape 384,768,768), or --op K0..K3");
        }
        OpKind kind = Arrays.stream(OpKind.values()).filter(k -> k.abiName.equals(opName)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown op '" + opName + "'; known: "
                        + Arrays.stream(OpKind.values()).map(k -> k.abiName).collect(Collectors.joining(", "))
                        + ", K0, K1, K2, K3"));
        int[] dims;
        try {
            dims = Arrays.stream(shape.split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--shape must be comma-separated integers, got '" + shape + "'");
        }
        return new Op(kind, dims);
    }
}

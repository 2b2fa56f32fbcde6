package dev.jitzoo.cli;

import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.rules.OpRules;
import dev.jitzoo.proto.rules.PaperKernels;
import java.util.Arrays;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Ops as every command names them: a paper kernel ({@code --op K0}, {@link PaperKernels}), or an
 * op kind's ABI name with its dimensions ({@code --op matmul --shape 384,768,768}; {@link OpRules}).
 * What the dimensions must be is checked where the op is used (the compiler, the lite space).
 */
public final class OpNames {

    private OpNames() {
    }

    public static OpSpec parse(String name, String shape) {
        OpSpec paper = PaperKernels.named(name);
        if (paper != null && shape == null) {
            return paper;
        }
        if (name == null || shape == null) {
            throw new IllegalArgumentException("give --op and --shape (e.g. --op matmul --shape 384,768,768), or --op K0..K3");
        }
        OpKind kind = kinds().filter(k -> OpRules.name(k).equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown op '" + name + "'; known: "
                        + Stream.concat(kinds().map(OpRules::name), PaperKernels.ALL.keySet().stream())
                                .collect(Collectors.joining(", "))));
        int[] dims;
        try {
            dims = Arrays.stream(shape.split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--shape must be comma-separated integers, got '" + shape + "'");
        }
        return PaperKernels.op(kind, dims);
    }

    private static Stream<OpKind> kinds() {
        return Arrays.stream(OpKind.values()).filter(k -> OpRules.rank(k) > 0);
    }
}

package dev.jitzoo.cli;

import dev.jitzoo.proto.kernel.v1.ConvWindow;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import dev.jitzoo.proto.rules.OpRules;
import dev.jitzoo.proto.rules.PaperKernels;
import java.util.Arrays;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Ops as every command names them: a paper kernel ({@code --op K0}, {@link PaperKernels}), or an
 * op kind's ABI name with its dimensions ({@code --op matmul --shape 384,768,768}; {@link OpRules}),
 * a conv's window after its dimensions as {@code /stride=2x2/dilation=1x1/pads=1x1x1x1/group=64}
 * (pads top, left, bottom, right; each part optional). What the dimensions must be is checked where
 * the op is used (the compiler, the lite space).
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
        String[] parts = shape.split("/");
        int[] dims;
        try {
            dims = Arrays.stream(parts[0].split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--shape must be comma-separated integers, got '" + shape + "'");
        }
        OpSpec op = PaperKernels.op(kind, dims);
        return parts.length == 1 ? op : op.toBuilder().setConv(window(Arrays.copyOfRange(parts, 1, parts.length))).build();
    }

    /** A conv window from its parts: {@code stride=HxW}, {@code dilation=HxW}, {@code pads=TxLxBxR}, {@code group=G}. */
    private static ConvWindow window(String[] parts) {
        ConvWindow.Builder w = ConvWindow.newBuilder();
        for (String part : parts) {
            String[] kv = part.split("=", 2);
            int[] v;
            try {
                v = kv.length < 2 ? new int[0] : Arrays.stream(kv[1].split("x")).mapToInt(Integer::parseInt).toArray();
            } catch (NumberFormatException e) {
                v = new int[0];
            }
            switch (kv[0] + ":" + v.length) {
                case "stride:2" -> w.setStrideH(v[0]).setStrideW(v[1]);
                case "dilation:2" -> w.setDilationH(v[0]).setDilationW(v[1]);
                case "pads:4" -> w.setPadTop(v[0]).setPadLeft(v[1]).setPadBottom(v[2]).setPadRight(v[3]);
                case "group:1" -> w.setGroup(v[0]);
                default -> throw new IllegalArgumentException("a conv window part is stride=HxW, dilation=HxW, pads=TxLxBxR or group=G, got '"
                        + part + "'");
            }
        }
        return w.build();
    }

    private static Stream<OpKind> kinds() {
        return Arrays.stream(OpKind.values()).filter(k -> OpRules.rank(k) > 0);
    }
}

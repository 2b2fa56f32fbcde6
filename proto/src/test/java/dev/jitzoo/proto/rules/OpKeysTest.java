package dev.jitzoo.proto.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.kernel.v1.ConvWindow;
import dev.jitzoo.proto.kernel.v1.Epilogue;
import dev.jitzoo.proto.kernel.v1.EpilogueKind;
import dev.jitzoo.proto.kernel.v1.OpKind;
import dev.jitzoo.proto.kernel.v1.OpSpec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/** Op keys as op-keys.tsv lists them, the list the SDK's opKey is held to as well. */
class OpKeysTest {

    @Test
    void writesEveryListedKey() throws IOException {
        List<String[]> rows = rows();
        assertTrue(rows.size() >= 20, "the list has its rows");
        for (String[] row : rows) {
            assertEquals(row[5], OpRules.key(op(row)), String.join(" ", row));
        }
    }

    @Test
    void writesFloatsAsTheShortestDecimalThatReadsBack() {
        assertEquals("0.125", OpRules.number(0.125f));
        assertEquals("1.0E-12", OpRules.number(1e-12f));
        assertEquals("-0.0", OpRules.number(-0f));
        // Float.toString's digits: 2.2856919E9, where 2.285692E9 reads back as the same float
        assertEquals("2.285692E9", OpRules.number(2.2856919E9f));
        for (int bits = 0x3f800000; bits < 0x3f800000 + 100_000; bits += 7) {
            float value = Float.intBitsToFloat(bits);
            assertEquals(value, (float) Double.parseDouble(OpRules.number(value)), OpRules.number(value));
        }
    }

    private static List<String[]> rows() throws IOException {
        try (InputStream in = OpKeysTest.class.getResourceAsStream("/op-keys.tsv")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
                    .filter(l -> !l.isBlank() && !l.startsWith("#")).map(l -> l.split("\t")).toList();
        }
    }

    private static OpSpec op(String[] row) {
        OpSpec.Builder op = OpSpec.newBuilder().setKind(OpKind.valueOf("OP_KIND_" + row[0].toUpperCase(Locale.ROOT)));
        for (String d : row[1].split(",")) {
            op.addShape(Integer.parseUnsignedInt(d));
        }
        op.setTransposeB(row[2].equals("transposeB")).setBroadcastB(row[2].equals("broadcastB"));
        if (row[2].startsWith("conv=")) {
            int[] w = java.util.Arrays.stream(row[2].substring("conv=".length()).split(",")).mapToInt(Integer::parseInt).toArray();
            op.setConv(ConvWindow.newBuilder().setStrideH(w[0]).setStrideW(w[1]).setDilationH(w[2]).setDilationW(w[3])
                    .setPadTop(w[4]).setPadLeft(w[5]).setPadBottom(w[6]).setPadRight(w[7]).setGroup(w[8]));
        }
        if (!row[3].equals("-")) {
            for (String step : row[3].split(",")) {
                String[] parts = step.split(":");
                Epilogue.Builder e = Epilogue.newBuilder().setKind(EpilogueKind.valueOf("EPILOGUE_KIND_" + parts[0].toUpperCase(Locale.ROOT)));
                if (parts.length > 1) {
                    e.setValue(bits(parts[1]));
                }
                op.addEpilogue(e);
            }
        }
        return op.setEpsilon(row[4].equals("0") ? 0 : bits(row[4])).build();
    }

    private static float bits(String hex) {
        return Float.intBitsToFloat(Integer.parseUnsignedInt(hex.substring(2), 16));
    }
}

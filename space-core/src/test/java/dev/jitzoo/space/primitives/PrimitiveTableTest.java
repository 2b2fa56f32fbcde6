package dev.jitzoo.space.primitives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The consistency rule on hand-picked speedups, the shipped table, pooling fleet results, and bad results. */
class PrimitiveTableTest {

    private static MicrobenchResult result(String device, double unroll) {
        return new MicrobenchResult("node", device, "", Map.of("unroll", unroll));
    }

    @Test
    void fixedWhenTheSameSettingWinsEverywhereOpenOtherwise() {
        // geometric mean of 1.10 and 1.02 is 1.059 >= 1.05, and 1.02 costs nothing: on
        assertEquals(Verdict.ON, PrimitiveTable.verdict(List.of(1.10, 1.02), 0.05));
        // a device where it costs 6%: open, however much it pays elsewhere
        assertEquals(Verdict.OPEN, PrimitiveTable.verdict(List.of(2.0, 0.94), 0.05));
        // never paying more than 5% and the mean 0.70: off
        assertEquals(Verdict.OFF, PrimitiveTable.verdict(List.of(0.68, 0.74), 0.05));
        // within the threshold either way: open (the space tries both)
        assertEquals(Verdict.OPEN, PrimitiveTable.verdict(List.of(1.02, 1.04), 0.05));
        assertEquals(Verdict.OPEN, PrimitiveTable.verdict(List.of(), 0.05));
        // a looser threshold decides what a strict one leaves open
        assertEquals(Verdict.ON, PrimitiveTable.verdict(List.of(1.02, 1.04), 0.0));
        assertThrows(IllegalArgumentException.class, () -> PrimitiveTable.derive(List.of(), 1.0));
    }

    @Test
    void theShippedTableIsThisMachinesNodeAndChromium() {
        PrimitiveTable t = PrimitiveTable.DEFAULT;
        assertEquals(2, t.results().size());
        assertEquals(List.of("node", "chromium"), t.results().stream().map(MicrobenchResult::runner).toList());
        assertEquals(Verdict.ON, t.verdict(Primitive.VECTORIZE));
        assertEquals(Verdict.ON, t.verdict(Primitive.CACHE_READ));
        assertEquals(Verdict.OFF, t.verdict(Primitive.UNROLL));
        for (Primitive p : Primitive.values()) {
            assertEquals(2, PrimitiveTable.speedups(t.results(), p).size(), p + " measured by both runners");
        }
    }

    @Test
    void fleetResultsArePooledFromADirectory(@TempDir Path dir) throws IOException {
        // one device where unroll pays 30% reopens what this machine fixed off
        Files.writeString(dir.resolve("phone.json"), "{\"runner\":\"chromium\",\"device\":\"phone\",\"primitives\":{\"unroll\":1.3}}");
        Files.writeString(dir.resolve("notes.txt"), "not a result");
        PrimitiveTable pooled = PrimitiveTable.pooled(dir, 0.05);
        assertEquals(3, pooled.results().size());
        assertEquals(Verdict.OPEN, pooled.verdict(Primitive.UNROLL));
        assertEquals(Verdict.ON, pooled.verdict(Primitive.VECTORIZE), "a primitive the phone did not measure keeps its verdict");
        assertEquals(Verdict.OFF, PrimitiveTable.derive(List.of(result("a", 0.7), result("b", 0.8)), 0.05).verdict(Primitive.UNROLL));
    }

    @Test
    void badResultsAreRefusedNamingTheFileAndTheField(@TempDir Path dir) throws IOException {
        Path notJson = Files.writeString(dir.resolve("a.json"), "{nope");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PrimitiveTable.load(notJson)).getMessage()
                .contains("a.json: not microbenchmark results"));
        Path noPrimitives = Files.writeString(dir.resolve("b.json"), "{\"runner\":\"node\"}");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PrimitiveTable.load(noPrimitives)).getMessage()
                .contains("needs a \"primitives\" object"));
        Path negative = Files.writeString(dir.resolve("c.json"), "{\"primitives\":{\"unroll\":-1}}");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PrimitiveTable.load(negative)).getMessage()
                .contains("speedup of unroll must be in (0, 1000), got -1"));
        Path text = Files.writeString(dir.resolve("d.json"), "{\"primitives\":{\"unroll\":\"fast\"}}");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PrimitiveTable.load(text)).getMessage()
                .contains("d.json: not microbenchmark results"));
    }
}

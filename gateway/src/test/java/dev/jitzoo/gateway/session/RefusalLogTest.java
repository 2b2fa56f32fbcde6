package dev.jitzoo.gateway.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.IntStream;
import org.jboss.logging.Logger;
import org.junit.jupiter.api.Test;

/** A flood of refusals is logged at a bounded rate. */
class RefusalLogTest {

    @Test
    void logsAtMostTenRefusalsASecond() {
        RefusalLog log = new RefusalLog(Logger.getLogger(RefusalLogTest.class));
        ProtocolException refusal = ProtocolException.malformed("garbage");
        long written = IntStream.range(0, 100).filter(i -> log.info("c" + i, refusal, 5_000 + i)).count();
        assertEquals(RefusalLog.PER_SECOND, written, "one second: ten lines, ninety held back");
        assertTrue(log.info("next", refusal, 6_000), "the next second writes again (and says how many were held)");
        assertFalse(IntStream.range(0, 20).allMatch(i -> log.info("d" + i, refusal, 6_500)));
    }
}

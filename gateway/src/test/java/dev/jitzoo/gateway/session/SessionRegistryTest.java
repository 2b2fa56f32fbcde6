package dev.jitzoo.gateway.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jitzoo.proto.gateway.v1.ErrorCode;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Admission within the gateway's and each address's caps, and which connections are stale. */
class SessionRegistryTest {

    private final SessionRegistry registry = new SessionRegistry();

    @Test
    void admitsWithinBothCapsAndCountsAClosedConnectionOut() {
        assertNull(registry.admit("a", "origin-1", 3, 2, 0));
        assertNull(registry.admit("b", "origin-1", 3, 2, 0));
        ProtocolException third = registry.admit("c", "origin-1", 3, 2, 0);
        assertEquals(ErrorCode.ERROR_CODE_TOO_MANY_CONNECTIONS, third.code());
        assertEquals(ProtocolException.POLICY_VIOLATION, third.closeCode());
        ProtocolException full = registry.admit("d", "origin-2", 3, 2, 0);
        assertEquals(ErrorCode.ERROR_CODE_OVERLOADED, full.code());
        assertEquals(ProtocolException.TRY_AGAIN_LATER, full.closeCode());
        registry.close("c");
        registry.close("b");
        assertNull(registry.admit("e", "origin-1", 3, 2, 0), "the address's closed connections no longer count");
        assertEquals(2, registry.connections());
    }

    @Test
    void aConnectionIsStaleWhenSilentOrIdleAndNamedOnce() {
        registry.admit("gone", "o", 10, 10, 0);
        registry.admit("idle", "o", 10, 10, 0);
        registry.admit("busy", "o", 10, 10, 0);
        registry.heard("idle", false, 5_000); // pongs only
        registry.heard("busy", true, 5_000);
        Map<String, ProtocolException> stale = registry.stale(6_000, 4_000, 3_000);
        assertEquals(2, stale.size(), stale.toString());
        assertTrue(stale.get("gone").getMessage().startsWith("no answer to pings for 6 s"), stale.get("gone").getMessage());
        assertTrue(stale.get("idle").getMessage().startsWith("no frame for 6 s"), stale.get("idle").getMessage());
        assertEquals(ProtocolException.GOING_AWAY, stale.get("idle").closeCode());
        assertTrue(registry.stale(7_000, 4_000, 3_000).isEmpty(), "each is named once, while it closes");
    }

    @Test
    void aConnectionWaitingOnTheGatewaysAnswerIsNotIdleAndItsIdleTimeCountsFromTheAnswer() {
        registry.admit("waiting", "o", 10, 10, 0);
        registry.answering("waiting"); // a Hello whose Welcome is slow to come
        registry.heard("waiting", false, 5_000);
        assertTrue(registry.stale(6_000, 4_000, 3_000).isEmpty(), "the client waits on the gateway");
        registry.answered("waiting", 6_000);
        assertTrue(registry.stale(9_000, 4_000, 8_000).isEmpty(), "idle time counts from the Welcome");
        assertTrue(registry.stale(10_001, 4_000, 8_000).get("waiting").getMessage().startsWith("no frame for 4 s"));
    }
}

package dev.jitzoo.tenant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class OriginPolicyTest {

    private static final List<String> ACME = List.of("https://app.acme.example", "https://*.acme.dev", "http://localhost:5173");

    @Test
    void exactOriginsMatchWithSchemeHostAndPort() {
        assertTrue(OriginPolicy.allows(ACME, "https://app.acme.example"));
        assertTrue(OriginPolicy.allows(ACME, "HTTPS://App.Acme.Example"), "origins compare without case");
        assertTrue(OriginPolicy.allows(ACME, "http://localhost:5173"));
        assertFalse(OriginPolicy.allows(ACME, "http://app.acme.example"), "another scheme");
        assertFalse(OriginPolicy.allows(ACME, "http://localhost:3000"), "another port");
        assertFalse(OriginPolicy.allows(ACME, "https://app.acme.example.evil.example"));
    }

    @Test
    void aWildcardCoversSubdomainsOnly() {
        assertTrue(OriginPolicy.allows(ACME, "https://docs.acme.dev"));
        assertTrue(OriginPolicy.allows(ACME, "https://a.b.acme.dev"));
        assertFalse(OriginPolicy.allows(ACME, "https://acme.dev"), "the host itself is not its subdomain");
        assertFalse(OriginPolicy.allows(ACME, "https://evilacme.dev"));
        assertFalse(OriginPolicy.allows(ACME, "http://docs.acme.dev"));
        assertFalse(OriginPolicy.allows(ACME, "https://evil.example/x.acme.dev"));
    }

    @Test
    void noOriginPassesOnlyAStar() {
        assertFalse(OriginPolicy.allows(ACME, null));
        assertFalse(OriginPolicy.allows(ACME, ""));
        assertTrue(OriginPolicy.allows(List.of("*"), null));
        assertTrue(OriginPolicy.allows(List.of("*"), "https://anything.example"));
        assertFalse(OriginPolicy.allows(List.of(), "https://app.acme.example"));
    }

    @Test
    void entriesAreCheckedWhenGiven() {
        assertEquals("https://*.acme.dev", OriginPolicy.checkEntry("https://*.Acme.dev"));
        assertEquals("*", OriginPolicy.checkEntry("*"));
        for (String bad : List.of("app.acme.example", "https://app.acme.example/", "https://app.acme.example/path", "not a url")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> OriginPolicy.checkEntry(bad), bad);
            assertTrue(e.getMessage().contains("scheme://host[:port]"), e.getMessage());
        }
    }
}

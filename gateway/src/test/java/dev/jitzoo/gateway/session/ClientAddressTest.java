package dev.jitzoo.gateway.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Which network a client counts as: the peer, or the X-Forwarded-For entry the trusted proxies appended; IPv6 by /64. */
class ClientAddressTest {

    @Test
    void thePeerWithoutItsPort() {
        assertEquals("203.0.113.7", ClientAddress.of("203.0.113.7:51234", null, false, 1));
        assertEquals("203.0.113.7", ClientAddress.of("203.0.113.7:51234", "198.51.100.1", false, 1), "X-Forwarded-For not trusted");
        assertEquals("0:0:0:0::/64", ClientAddress.of("0:0:0:0:0:0:0:1:51234", null, false, 1), "Vert.x writes IPv6 peers unbracketed");
        assertEquals("0:0:0:0::/64", ClientAddress.of("[::1]:51234", null, false, 1));
    }

    @Test
    void theEntryTheTrustedProxiesAppendedReadFromTheRight() {
        // the client forged the first entry; the Ingress appended the address it saw
        assertEquals("198.51.100.9", ClientAddress.of("10.0.0.5:4000", "6.6.6.6, 198.51.100.9", true, 1));
        assertEquals("198.51.100.9", ClientAddress.of("10.0.0.5:4000", "6.6.6.6, 198.51.100.9, 10.0.0.2", true, 2),
                "two hops of ours: the one before them");
        assertEquals("198.51.100.9", ClientAddress.of("10.0.0.5:4000", "  198.51.100.9  ", true, 3), "fewer entries than hops: the first");
        assertEquals("10.0.0.5", ClientAddress.of("10.0.0.5:4000", " , ", true, 1), "an empty header: the peer");
        assertEquals("198.51.100.9", ClientAddress.of("10.0.0.5:4000", "198.51.100.9:8443", true, 1), "a port dropped");
        assertEquals("2001:db8:aa:bb::/64", ClientAddress.of("10.0.0.5:4000", "[2001:db8:aa:bb:1:2:3:4]:443", true, 1));
    }

    @Test
    void ipv6AddressesOfOnePrefixAreOneNetwork() {
        String a = ClientAddress.of("[2001:db8:1:2:aaaa:bbbb:cccc:1]:1", null, false, 1);
        String b = ClientAddress.of("[2001:db8:1:2::ffff]:2", null, false, 1);
        String other = ClientAddress.of("[2001:db8:1:3::1]:3", null, false, 1);
        assertEquals("2001:db8:1:2::/64", a);
        assertEquals(a, b, "one /64, one origin");
        assertEquals("2001:db8:1:3::/64", other);
        assertEquals("192.0.2.1", ClientAddress.of("[::ffff:192.0.2.1]:5", null, false, 1), "an IPv4-mapped address is IPv4");
        assertEquals("not-an-address", ClientAddress.of("9.9.9.9:1", "not-an-address", true, 1), "never resolved by name");
    }
}

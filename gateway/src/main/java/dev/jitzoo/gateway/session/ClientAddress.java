package dev.jitzoo.gateway.session;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * Which network a client connects from, as the per-address cap and the zoo's origins count it:
 * the socket's peer, or behind proxies the gateway trusts the {@code X-Forwarded-For} entry those
 * proxies appended — read from the right, past {@code trustedHops} of them, never the left-most
 * (a client writes whatever it likes there, and an appending proxy keeps it). An IPv6 address
 * counts by its /64: one subscriber's prefix holds more addresses than anyone could count, so
 * a /64 is one origin.
 */
public final class ClientAddress {

    private ClientAddress() {
    }

    /**
     * The client's network: from {@code forwardedFor} when trusted (the entry {@code trustedHops}
     * from its right end, or its first when it has fewer), else the {@code peer} ({@code host:port}
     * or {@code [v6]:port}), IPv6 grouped by /64.
     */
    public static String of(String peer, String forwardedFor, boolean trustForwardedFor, int trustedHops) {
        if (trustForwardedFor && forwardedFor != null && !forwardedFor.isBlank()) {
            String[] hops = Arrays.stream(forwardedFor.split(",")).map(String::trim).filter(h -> !h.isEmpty()).toArray(String[]::new);
            if (hops.length > 0) {
                return network(hostOf(hops[Math.max(0, hops.length - Math.max(1, trustedHops))]));
            }
        }
        return network(peerHost(peer));
    }

    /** The socket peer's host: its address without the port after its last colon (an IPv6 one may come bracketed or not). */
    static String peerHost(String peer) {
        if (peer == null) {
            return "";
        }
        int colon = peer.lastIndexOf(':');
        String host = colon > peer.lastIndexOf(']') && colon > 0 ? peer.substring(0, colon) : peer;
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    /**
     * An X-Forwarded-For entry without its port and brackets ({@code [::1]:443} is {@code ::1},
     * {@code 1.2.3.4:80} is {@code 1.2.3.4}; an unbracketed IPv6 address has no port).
     */
    static String hostOf(String address) {
        if (address == null) {
            return "";
        }
        String a = address.trim();
        if (a.startsWith("[")) {
            int end = a.indexOf(']');
            return end > 0 ? a.substring(1, end) : a.substring(1);
        }
        int colon = a.indexOf(':');
        return colon > 0 && colon == a.lastIndexOf(':') ? a.substring(0, colon) : a; // one colon: IPv4 with a port
    }

    /** An IPv4 address as it is; an IPv6 one as its /64 ({@code 2001:db8:1:2::/64}); anything else as given. */
    static String network(String host) {
        if (!host.contains(":")) {
            return host;
        }
        int zone = host.indexOf('%');
        String literal = zone >= 0 ? host.substring(0, zone) : host;
        if (!literal.matches("[0-9A-Fa-f:.]+")) {
            return host; // not an address literal: never resolved
        }
        try {
            InetAddress parsed = InetAddress.getByName(literal);
            if (parsed instanceof Inet4Address v4) {
                return v4.getHostAddress(); // an IPv4-mapped IPv6 address
            }
            byte[] bytes = ((Inet6Address) parsed).getAddress();
            int[] groups = new int[4];
            for (int g = 0; g < 4; g++) {
                groups[g] = (bytes[2 * g] & 0xff) << 8 | bytes[2 * g + 1] & 0xff;
            }
            return String.format("%x:%x:%x:%x::/64", groups[0], groups[1], groups[2], groups[3]);
        } catch (UnknownHostException | ClassCastException e) {
            return host;
        }
    }
}

package dev.jitzoo.cli.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A process's established TCP connections, by the address at their other end, as the system keeps
 * them (/proc/PID/fd for the process's sockets, /proc/net/tcp and tcp6 for where each goes): how
 * a gRPC client spread its connections over a name's addresses.
 */
final class Sockets {

    private static final String ESTABLISHED = "01";
    /** An IPv4 address in /proc/net/tcp6: ::ffff:a.b.c.d, four 32-bit words each in the host's order. */
    private static final String MAPPED_V4 = "0000000000000000FFFF0000";

    private Sockets() {
    }

    /** Established connections of the process by peer ("127.0.0.2:28310"); empty where the system does not say. */
    static Map<String, Integer> establishedByPeer(ProcessHandle process) {
        Set<String> inodes = socketInodes(process.pid());
        Map<String, Integer> peers = new TreeMap<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            List<String> lines;
            try {
                lines = Files.readAllLines(Path.of(table));
            } catch (IOException e) {
                continue;
            }
            for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
                String[] f = line.trim().split("\\s+");
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
                if (f.length > 9 && f[3].equals(ESTABLISHED) && inodes.contains(f[9])) {
                    peers.merge(address(f[2]), 1, Integer::sum);
                }
            }
        }
        return peers;
    }

    /** "0100007F:6E86" (IPv4) or its ::ffff: form (IPv6 table) as "127.0.0.1:28294"; other IPv6 addresses in hex. */
    static String address(String hex) {
        String[] parts = hex.split(":");
        String host = parts[0];
        if (host.length() == 32 && host.startsWith(MAPPED_V4)) {
            host = host.substring(24);
        }
        int port = Integer.parseInt(parts[1], 16);
        if (host.length() != 8) {
            return "[" + host + "]:" + port;
        }
        long v = Long.parseLong(host, 16); // the host's order (little-endian here): the first octet is the lowest byte
        return (v & 255) + "." + (v >> 8 & 255) + "." + (v >> 16 & 255) + "." + (v >> 24 & 255) + ":" + port;
    }

    private static Set<String> socketInodes(long pid) {
        Set<String> inodes = new HashSet<>();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc", String.valueOf(pid), "fd"))) {
            for (Path fd : fds) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        inodes.add(target.substring(8, target.length() - 1));
                    }
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
        } catch (IOException e) {
            // no /proc here: no connections said
        }
        return inodes;
    }
}

package dev.jitzoo.cli.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A process's connections by peer, as /proc says: the address forms, and connections this test opens. */
class SocketsTest {

    @Test
    void readsTheKernelsAddressForms() {
        assertEquals("127.0.0.1:28310", Sockets.address("0100007F:6E96"));
        assertEquals("127.0.0.2:28310", Sockets.address("0000000000000000FFFF00000200007F:6E96"));
        assertEquals("10.9.1.200:80", Sockets.address("C801090A:0050"));
        assertEquals("[00000000000000000000000001000000]:443", Sockets.address("00000000000000000000000001000000:01BB"));
    }

    @Test
    void countsThisProcesssConnectionsToEachPeer() throws Exception {
        InetAddress loopback = InetAddress.getByName("127.0.0.1");
        try (ServerSocket one = new ServerSocket(0, 50, loopback); ServerSocket two = new ServerSocket(0, 50, loopback)) {
            List<Socket> opened = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    opened.add(new Socket(loopback, one.getLocalPort()));
                    opened.add(one.accept());
                }
                opened.add(new Socket(loopback, two.getLocalPort()));
                opened.add(two.accept());
                Map<String, Integer> peers = Sockets.establishedByPeer(ProcessHandle.current());
                assertEquals(3, peers.get("127.0.0.1:" + one.getLocalPort()), peers.toString());
                assertEquals(1, peers.get("127.0.0.1:" + two.getLocalPort()), peers.toString());
            } finally {
                for (Socket s : opened) {
                    s.close();
                }
            }
        }
    }
}

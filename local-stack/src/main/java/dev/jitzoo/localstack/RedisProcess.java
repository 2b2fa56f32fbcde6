package dev.jitzoo.localstack;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** A real {@code redis-server} child process on a free loopback port, without persistence. */
public final class RedisProcess implements AutoCloseable {

    private final Process process;
    private final int port;

    private RedisProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Starts redis-server from the PATH; fails with a hint when it is not installed. */
    public static RedisProcess start() throws IOException, InterruptedException {
        int port = freePort();
        Path dir = Files.createTempDirectory("jitzoo-redis");
        Process process;
        try {
            process = new ProcessBuilder(List.of("redis-server", "--bind", "127.0.0.1", "--port",
                    String.valueOf(port), "--save", "", "--appendonly", "no", "--dir", dir.toString()))
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("redis.log").toFile())
                    .start();
        } catch (IOException e) {
            throw new IOException("redis-server is not installed (apt-get install -y redis-server), "
                    + "or set JITZOO_TEST_REDIS_URI to a running Redis", e);
        }
        RedisProcess redis = new RedisProcess(process, port);
        Runtime.getRuntime().addShutdownHook(new Thread(redis::close));
        waitForPort(port, Duration.ofSeconds(10), process);
        return redis;
    }

    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** Freezes the server (SIGSTOP), as a partition would: connections stay open and nothing answers. */
    public void freeze() throws IOException, InterruptedException {
        signal("-STOP");
    }

    /** Lets a frozen server go on (SIGCONT), with the data it held. */
    public void thaw() throws IOException, InterruptedException {
        signal("-CONT");
    }

    private void signal(String signal) throws IOException, InterruptedException {
        int exit = new ProcessBuilder("kill", signal, String.valueOf(process.pid())).inheritIO().start().waitFor();
        if (exit != 0) {
            throw new IOException("kill " + signal + " " + process.pid() + " exited with " + exit);
        }
    }

    @Override
    public void close() {
        process.destroy();
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    static void waitForPort(int port, Duration timeout, Process process) throws IOException, InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IOException("redis-server exited with " + process.exitValue());
            }
            try (Socket ignored = new Socket("127.0.0.1", port)) {
                return;
            } catch (IOException notYet) {
                Thread.sleep(50);
            }
        }
        throw new IOException("redis-server did not open port " + port + " within " + timeout);
    }
}

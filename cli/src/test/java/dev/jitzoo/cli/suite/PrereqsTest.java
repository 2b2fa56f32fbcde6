package dev.jitzoo.cli.suite;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the test stages look for before they install anything. */
class PrereqsTest {

    @Test
    void theVulkanLoaderIsTheSystemsNotChromiumsOwnCopy(@TempDir Path root) throws IOException {
        // Debian's Chromium ships a libvulkan.so.1 of its own, where Dawn does not look: it is no loader
        touch(root.resolve("usr/lib/chromium/libvulkan.so.1"));
        assertFalse(Prereqs.vulkanLoader(root));
        touch(root.resolve("usr/lib/" + Prereqs.MULTIARCH + "/libvulkan.so.1"));
        assertTrue(Prereqs.vulkanLoader(root));
    }

    private static void touch(Path file) throws IOException {
        Files.createDirectories(file.getParent());
        Files.createFile(file);
    }
}

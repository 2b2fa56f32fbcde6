package dev.jitzoo.cli.test;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The summary counts the reports of this run only: Surefire's TEST-*.xml and every test-results/*.xml. */
class JunitReportsTest {

    @TempDir
    Path root;

    @Test
    void countsPassedFailedAndSkippedCasesOfReportsWrittenSinceTheStart() throws Exception {
        Instant started = Instant.now().minusSeconds(60);
        write("compiler/target/surefire-reports/TEST-a.xml", """
                <testsuite><testcase name="one"/><testcase name="two"><failure message="x"/></testcase>
                <testcase name="three"><skipped/></testcase></testsuite>""");
        write("client-sdk-js/test-results/unit.xml", """
                <testsuites><testsuite><testcase name="a"></testcase><testcase name="b"><error/></testcase></testsuite></testsuites>""");
        write("compiler/target/surefire-reports/summary.xml", "<testcase name=\"not a Surefire report\"/>");
        Path old = write("harness/test-results/old.xml", "<testcase name=\"from an earlier run\"/>");
        Files.setLastModifiedTime(old, FileTime.from(started.minusSeconds(3600)));

        JunitReports reports = JunitReports.since(root, started);

        assertEquals(2, reports.files().size());
        assertEquals(5, reports.total());
        assertEquals(2, reports.failed());
        assertEquals(1, reports.skipped());
        assertEquals("tests: 2 passed, 2 failed, 1 skipped (2 JUnit reports)", reports.summary());
    }

    private Path write(String relative, String text) throws Exception {
        Path file = root.resolve(relative);
        Files.createDirectories(file.getParent());
        return Files.writeString(file, text);
    }
}

package dev.jitzoo.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The root command: bad input to any command prints one line naming the command, and exits 2. */
class JitzooTest {

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        CommandLine cli = Jitzoo.commandLine();
        cli.setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void listsEveryCommandInItsHelp() {
        assertEquals(0, run("--help"));
        for (String command : new String[] {"test", "tune", "zoo", "codegen", "space", "microbench", "models", "bench", "tenant"}) {
            assertTrue(out.toString().contains("  " + command + " "), command + " missing from:\n" + out);
        }
    }

    @Test
    void anUnknownTestStageNamesTheStages() {
        assertEquals(Jitzoo.USAGE_ERROR, run("test", "kernels", "fast"));
        assertEquals("jitzoo test: unknown stage 'fast'; stages: java, sdk, kernels, browser, wgsl, e2e, deploy", err.toString().strip());
    }

    @Test
    void anUnknownBenchIsAUsageError() {
        assertEquals(Jitzoo.USAGE_ERROR, run("bench", "everything"));
        assertTrue(err.toString().contains("everything"), err.toString());
    }

    @Test
    void aTenantIsCheckedBeforeTheDatabaseIsAsked() {
        assertEquals(Jitzoo.USAGE_ERROR, run("tenant", "create", "Acme Corp", "--origin", "*"));
        assertEquals("jitzoo tenant: tenant name 'Acme Corp': 1 to 63 of a-z, 0-9 and '-', starting with a letter or digit",
                err.toString().strip());
        err.getBuffer().setLength(0);
        assertEquals(Jitzoo.USAGE_ERROR, run("tenant", "create", "acme", "--origin", "https://app.acme.example/"));
        assertEquals("jitzoo tenant: origin 'https://app.acme.example/' is not scheme://host[:port] (no path, no trailing slash)",
                err.toString().strip());
        err.getBuffer().setLength(0);
        assertEquals(Jitzoo.USAGE_ERROR, run("tenant", "create", "acme"));
        assertTrue(err.toString().contains("give at least one --origin"), err.toString());
        err.getBuffer().setLength(0);
        assertEquals(Jitzoo.USAGE_ERROR, run("tenant", "create", "acme", "--origin", "*", "--sessions-per-minute", "-1"));
        assertTrue(err.toString().contains("0 or more"), err.toString());
    }

    @Test
    void aZooQueryNeedsAKnownQuery() {
        assertEquals(Jitzoo.USAGE_ERROR, run("zoo", "worst"));
        assertEquals("jitzoo zoo: give best, count, kinds, elections, peak, coverage, volume, win-rates, export or dlq, not 'worst'",
                err.toString().strip());
    }

    @Test
    void aZooBestNeedsAShape() {
        assertEquals(Jitzoo.USAGE_ERROR, run("zoo", "best", "--fingerprint", "f"));
        assertEquals("jitzoo zoo: zoo best needs --shape M,K,N", err.toString().strip());
    }

    @Test
    void aSubcommandsErrorNamesItsTopCommand() {
        assertEquals(Jitzoo.USAGE_ERROR, run("space", "dynamic", "--shape", "9..3,8,8"));
        assertTrue(err.toString().startsWith("jitzoo space: "), err.toString());
    }
}

package dev.jitzoo.cli;

import dev.jitzoo.cli.bench.BenchCli;
import dev.jitzoo.cli.codegen.CodegenCli;
import dev.jitzoo.cli.images.ImagesCommand;
import dev.jitzoo.cli.sdk.DemoCommand;
import dev.jitzoo.cli.sdk.DrillCommand;
import dev.jitzoo.cli.sdk.MicrobenchCommand;
import dev.jitzoo.cli.sdk.ModelsCommand;
import dev.jitzoo.cli.sdk.GenerateCommand;
import dev.jitzoo.cli.sdk.TuneCommand;
import dev.jitzoo.cli.sdk.ZooCommand;
import dev.jitzoo.cli.space.SpaceCli;
import dev.jitzoo.cli.suite.LaunchCommand;
import dev.jitzoo.cli.suite.Suite;
import dev.jitzoo.cli.tenant.TenantCli;
import dev.jitzoo.cli.test.TestCli;
import java.io.IOException;
import java.io.UncheckedIOException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The suite's command line, one jar: {@code java -jar cli/target/jitzoo-cli.jar <command>}, which
 * {@code ./jitzoo} hands every command to that needs no shell. Bad input prints one line, prefixed
 * with the command it was given to, and exits 2.
 */
@Command(name = "jitzoo", mixinStandardHelpOptions = true,
        description = "Kernels, spaces and benchmarks of the jitzoo suite, without servers unless a command says so.",
        subcommands = {TestCli.class, TuneCommand.class, GenerateCommand.class, ZooCommand.class, CodegenCli.class, SpaceCli.class,
                MicrobenchCommand.class, ModelsCommand.class, TenantCli.class, DemoCommand.class, DrillCommand.class, BenchCli.class,
                ImagesCommand.class, LaunchCommand.class, CommandLine.HelpCommand.class})
public final class Jitzoo {

    /** Exit status of a command given bad input. */
    public static final int USAGE_ERROR = 2;

    private Jitzoo() {
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    public static CommandLine commandLine() {
        return new CommandLine(new Jitzoo()).setExecutionExceptionHandler((e, cmd, parsed) -> {
            if (e instanceof IllegalArgumentException || e instanceof IOException || e instanceof UncheckedIOException) {
                cmd.getErr().println(topCommand(cmd) + ": " + e.getMessage());
                return USAGE_ERROR;
            }
            if (e instanceof Suite.StepFailed) {
                cmd.getErr().println(topCommand(cmd) + ": " + e.getMessage());
                return 1;
            }
            throw e;
        });
    }

    /** "jitzoo codegen" for {@code codegen} and each of its subcommands. */
    private static String topCommand(CommandLine cmd) {
        CommandLine top = cmd;
        while (top.getParent() != null && top.getParent().getParent() != null) {
            top = top.getParent();
        }
        return top.getCommandSpec().qualifiedName();
    }
}

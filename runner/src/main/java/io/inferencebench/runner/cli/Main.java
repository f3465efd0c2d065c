package io.inferencebench.runner.cli;

import io.inferencebench.profile.text.TerminalText;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of {@code java -jar inferencebench-runner.jar}. */
@Command(
        name = "inferencebench-runner",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "Load generator for LLM model servers; writes LPG latency profiles.",
        subcommands = {
            RunCommand.class,
            io.inferencebench.runner.pod.PodCommand.class,
            CompareCommand.class,
            SearchCommand.class,
            ReportCommand.class,
        })
public final class Main implements java.util.concurrent.Callable<Integer> {

    /** Exit code for a run whose results fail a check (no successful request, SLO missed). */
    public static final int EXIT_RESULTS_FAILED = 1;

    /** Exit code for unusable flags or configuration. */
    public static final int EXIT_USAGE = 2;

    /**
     * Exit code when the runner itself failed: the JVM ran out of memory or hit another {@link
     * VirtualMachineError}. The stages that finished before are kept.
     */
    public static final int EXIT_JVM_ERROR = 3;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        quietOnNewJdks();
        shortDnsCache();
        System.exit(execute(args));
    }

    /**
     * Host names are looked up again after 5 s rather than the JDK's 30 (before the first lookup,
     * when the JDK reads it): {@code --balance addresses} follows a headless Service's addresses,
     * whose DNS records live 5 s. A value the user set (in java.security or with -D through the
     * security properties file) stays.
     */
    static void shortDnsCache() {
        if (java.security.Security.getProperty("networkaddress.cache.ttl") == null) {
            java.security.Security.setProperty("networkaddress.cache.ttl", "5");
        }
    }

    /**
     * JDK 24 warns on stderr when sun.misc.Unsafe's memory methods are used (JEP 498), which Netty
     * does unless told not to; a jar's manifest cannot allow it the way it enables native access.
     * Netty's Unsafe-free paths are used there instead, unless the JVM was started with
     * --sun-misc-unsafe-memory-access=allow (no warning then: the runner image on a Java 24+ base
     * is) or the user chose with -Dio.netty.noUnsafe.
     */
    static void quietOnNewJdks() {
        if (Runtime.version().feature() >= 24
                && System.getProperty("io.netty.noUnsafe") == null
                && !"allow".equals(System.getProperty("sun.misc.unsafe.memory.access"))) {
            System.setProperty("io.netty.noUnsafe", "true");
        }
    }

    /** Runs the command line and returns its exit code (no System.exit; used by tests). */
    public static int execute(String... args) {
        return execute(null, null, args);
    }

    /** Runs the command line with the given output streams (null = standard ones). */
    public static int execute(java.io.PrintWriter out, java.io.PrintWriter err, String... args) {
        return execute(new CommandLine(new Main()), out, err, args);
    }

    private static int execute(
            CommandLine cli, java.io.PrintWriter out, java.io.PrintWriter err, String... args) {
        if (out != null) {
            cli.setOut(out);
        }
        if (err != null) {
            cli.setErr(err);
            Progress.errRedirected = true;
        }
        cli.setCaseInsensitiveEnumValuesAllowed(true);
        // Path.of("") is the working directory: --result-dir '' wrote the profiles there, and
        // --tokenizer '' read ./tokenizer.json. An empty path is a mistake, named as one.
        cli.registerConverter(
                java.nio.file.Path.class,
                text -> {
                    if (text.isBlank()) {
                        throw new CommandLine.TypeConversionException(
                                "the path is empty; give a file or directory");
                    }
                    return java.nio.file.Path.of(text);
                });
        // A flag error gets one line and a pointer to --help, not the 190-line usage.
        cli.setParameterExceptionHandler(
                (e, arguments) -> {
                    CommandLine failed = e.getCommandLine();
                    java.io.PrintWriter w = failed.getErr();
                    w.println("error: " + TerminalText.multiLine(e.getMessage()));
                    CommandLine.UnmatchedArgumentException.printSuggestions(e, w);
                    w.println(
                            "Run '"
                                    + failed.getCommandSpec().qualifiedName()
                                    + " --help' for the flags and their defaults.");
                    w.flush();
                    return EXIT_USAGE;
                });
        cli.setExecutionExceptionHandler(
                (e, commandLine, parseResult) -> {
                    if (e instanceof UsageError usage) {
                        commandLine
                                .getErr()
                                .println("error: " + TerminalText.multiLine(usage.getMessage()));
                        return EXIT_USAGE;
                    }
                    if (e instanceof JvmFailure failure) {
                        commandLine.getErr().println("error: " + failure.getMessage());
                        return EXIT_JVM_ERROR;
                    }
                    commandLine.getErr().println("error: " + TerminalText.multiLine(describe(e)));
                    return EXIT_RESULTS_FAILED;
                });
        try {
            return cli.execute(args);
        } catch (VirtualMachineError e) {
            // Where no command said more (picocli passes Errors on): still a message, not a
            // stack trace, and the code of a runner failure. Profiles are written as each stage
            // ends, so the finished ones are on disk.
            java.io.PrintWriter w = cli.getErr();
            w.println(
                    "error: "
                            + io.inferencebench.runner.engine.JvmErrors.describe(e)
                            + "; the profiles of finished stages are kept");
            w.flush();
            return EXIT_JVM_ERROR;
        }
    }

    static String describe(Throwable e) {
        String message = e.getMessage();
        return message == null ? e.getClass().getSimpleName() : message;
    }

    /** Without a command: the usage, on standard error, and exit {@link #EXIT_USAGE}. */
    @Override
    public Integer call() {
        java.io.PrintWriter err = spec.commandLine().getErr();
        err.println("error: a command is required: run, search, compare, report or pod");
        spec.commandLine().usage(err);
        err.flush();
        return EXIT_USAGE;
    }

    static String version() {
        String v = Main.class.getPackage().getImplementationVersion();
        return v == null ? "dev" : v;
    }

    /** Version from the jar manifest. */
    public static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"inferencebench-runner " + version()};
        }
    }

    /**
     * The runner itself failed (a {@link VirtualMachineError}); the message says what and what was
     * kept. Exits with {@link #EXIT_JVM_ERROR}.
     */
    public static final class JvmFailure extends RuntimeException {
        public JvmFailure(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * A problem with flags or configuration found after parsing; exits with {@link #EXIT_USAGE}.
     */
    public static final class UsageError extends RuntimeException {
        public UsageError(String message) {
            super(message);
        }
    }
}

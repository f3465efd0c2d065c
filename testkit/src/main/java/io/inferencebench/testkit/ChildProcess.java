package io.inferencebench.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A child process started in its own session (so its whole tree can be signalled as one process
 * group) with stdout and stderr appended to a log file.
 */
public final class ChildProcess {

    private final String name;
    private final Process process;
    private final Path logFile;

    private ChildProcess(String name, Process process, Path logFile) {
        this.name = name;
        this.process = process;
        this.logFile = logFile;
    }

    /**
     * Starts {@code command} under {@code setsid}. {@code environment} replaces the inherited
     * environment when {@code replaceEnvironment} is true, otherwise it is added to it.
     */
    public static ChildProcess start(
            String name,
            List<String> command,
            Map<String, String> environment,
            boolean replaceEnvironment,
            Path workingDir,
            Path logFile) {
        List<String> argv = new ArrayList<>();
        argv.add("setsid");
        argv.addAll(command);
        ProcessBuilder builder = new ProcessBuilder(argv);
        if (replaceEnvironment) {
            builder.environment().clear();
        }
        builder.environment().putAll(environment);
        if (workingDir != null) {
            builder.directory(workingDir.toFile());
        }
        try {
            Files.createDirectories(logFile.getParent());
            builder.redirectErrorStream(true);
            builder.redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
            builder.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            return new ChildProcess(name, builder.start(), logFile);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + ": " + command, e);
        }
    }

    public String name() {
        return name;
    }

    public Process process() {
        return process;
    }

    public long pid() {
        return process.pid();
    }

    public Path logFile() {
        return logFile;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Sends a signal to the child's process group and, as a fallback, to every descendant. */
    public void signal(String signal) {
        List<ProcessHandle> descendants = process.descendants().toList();
        runQuietly("kill", "-" + signal, "--", "-" + process.pid());
        for (ProcessHandle handle : descendants) {
            if (handle.isAlive()) {
                runQuietly("kill", "-" + signal, String.valueOf(handle.pid()));
            }
        }
    }

    /** SIGTERM, wait up to {@code grace}, then SIGKILL the whole tree. Returns the exit code. */
    public int stop(Duration grace) {
        if (process.isAlive()) {
            signal("TERM");
            try {
                if (!process.waitFor(Math.max(grace.toMillis(), 0), TimeUnit.MILLISECONDS)) {
                    kill();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                kill();
            }
        } else {
            kill();
        }
        try {
            return process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** SIGKILL the whole tree now. */
    public void kill() {
        List<ProcessHandle> descendants = process.descendants().toList();
        runQuietly("kill", "-KILL", "--", "-" + process.pid());
        descendants.forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    public String tail(int maxLines) {
        return tail(logFile, maxLines);
    }

    /** Each process's log file, by process name (for a cluster dump). */
    static Map<String, Path> logFiles(List<ChildProcess> processes) {
        Map<String, Path> logs = new LinkedHashMap<>();
        processes.forEach(p -> logs.put(p.name(), p.logFile()));
        return logs;
    }

    /** Each process's name, whether it runs (or its exit code) and its log's last lines. */
    static String describe(List<ChildProcess> processes, int tailLines) {
        StringBuilder out = new StringBuilder();
        for (ChildProcess p : processes) {
            out.append("---- ")
                    .append(p.name())
                    .append(
                            p.isAlive()
                                    ? " (running)"
                                    : " (exited " + p.process().exitValue() + ")")
                    .append(" log tail:\n")
                    .append(p.tail(tailLines))
                    .append('\n');
        }
        return out.toString();
    }

    static String tail(Path file, int maxLines) {
        try {
            if (!Files.exists(file)) {
                return "";
            }
            List<String> lines = Files.readAllLines(file);
            return String.join(
                    "\n", lines.subList(Math.max(0, lines.size() - maxLines), lines.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(cannot read " + file + ": " + e + ")";
        }
    }

    static void runQuietly(String... command) {
        try {
            Process p =
                    new ProcessBuilder(command)
                            .redirectErrorStream(true)
                            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                            .start();
            p.waitFor(10, TimeUnit.SECONDS);
        } catch (IOException e) {
            // best effort: the process may already be gone
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Runs a command, returning its combined output; throws when it exits non-zero. */
    static String run(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("timed out: " + command);
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(
                        "command failed (" + p.exitValue() + "): " + command + "\n" + out);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static void deleteRecursively(Path root) {
        if (root == null || !Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try {
            Files.walkFileTree(
                    root,
                    new SimpleFileVisitor<>() {
                        @Override
                        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                                throws IOException {
                            Files.deleteIfExists(file);
                            return FileVisitResult.CONTINUE;
                        }

                        @Override
                        public FileVisitResult postVisitDirectory(Path dir, IOException exc)
                                throws IOException {
                            Files.deleteIfExists(dir);
                            return FileVisitResult.CONTINUE;
                        }
                    });
        } catch (IOException e) {
            // leftover temp files are harmless
        }
    }
}

package io.inferencebench.runner.cli;

import io.inferencebench.profile.br.BenchmarkReportWriter;
import io.inferencebench.profile.cache.CacheStateCheck;
import io.inferencebench.profile.lpg.LpgDialect;
import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.output.OutputFormat;
import io.inferencebench.profile.server.ServerMetricsReport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.UUID;

/**
 * The result directory and the profile files in it: checked before any request is sent, named like
 * LPG's files, and written so that a failing write (disk full, too many open files) loses no more
 * than that one file and leaves no partial file, and so that runs sharing the directory never
 * overwrite each other's profiles.
 */
final class ResultFiles {

    /**
     * The outcome of writing one stage's files: the profile's path and the reason when it was not
     * written; the same for its Benchmark Report when one was asked for ({@code report} {@code
     * null} otherwise).
     */
    record Written(Path path, String failure, Path report, String reportFailure) {
        Written(Path path, String failure) {
            this(path, failure, null, null);
        }

        /** Whether the profile was written. */
        boolean ok() {
            return failure == null;
        }

        /** Whether every file of the stage was written. */
        boolean allWritten() {
            return failure == null && reportFailure == null;
        }
    }

    private final Path dir;
    private final LpgDialect dialect;
    private final boolean benchmarkReport;

    /** {@code run.eid} of the Benchmark Reports: one per command, shared by its stages. */
    private final String experimentId = "inferencebench-" + UUID.randomUUID();

    private ResultFiles(Path dir, LpgDialect dialect, Set<OutputFormat> formats) {
        this.dir = dir;
        this.dialect = dialect;
        this.benchmarkReport = formats.contains(OutputFormat.BR_0_2);
    }

    /**
     * Creates the directory and proves it writable by writing and deleting a probe file; profiles
     * in the seed dialect, no Benchmark Report.
     *
     * @throws Main.UsageError naming {@code --result-dir} when it cannot be used
     */
    static ResultFiles prepare(Path dir) {
        return prepare(dir, LpgDialect.SEED, Set.of(OutputFormat.LPG));
    }

    /**
     * Creates the directory and proves it writable by writing and deleting a probe file.
     *
     * @param dialect the LPG dialect of the profiles
     * @param formats the files written per stage
     * @throws Main.UsageError naming {@code --result-dir} when it cannot be used
     */
    static ResultFiles prepare(Path dir, LpgDialect dialect, Set<OutputFormat> formats) {
        Path absolute = dir.toAbsolutePath().normalize();
        try {
            Files.createDirectories(absolute);
        } catch (IOException | RuntimeException e) {
            throw new Main.UsageError("--result-dir: cannot create " + absolute + ": " + reason(e));
        }
        try {
            Path probe = Files.createTempFile(absolute, ".inferencebench-write-check-", ".tmp");
            Files.writeString(probe, "ok", StandardCharsets.UTF_8);
            Files.delete(probe);
        } catch (IOException | RuntimeException e) {
            throw new Main.UsageError(
                    "--result-dir: cannot write into " + absolute + ": " + reason(e));
        }
        return new ResultFiles(absolute, dialect, formats);
    }

    Path dir() {
        return dir;
    }

    /** The file name a stage's profile gets: LPG's name, {@code -partial} when interrupted. */
    static String fileName(StageResult result, ProfileContext context) {
        String name = LpgProfileWriter.fileName(result, context);
        return result.partial ? name.substring(0, name.length() - 5) + "-partial.json" : name;
    }

    /**
     * Writes one stage's profile under a name no file in the directory has (LPG's name, or with
     * {@code -2}, {@code -3} ... when another stage or another run sharing the directory took it),
     * complete or not at all ({@link AtomicFiles#createNew}); on failure calls {@code beforeRetry}
     * with the reason (it may free resources, e.g. idle connections holding file descriptors) and
     * tries once more. A profile not written leaves no file behind. The Benchmark Report, when
     * asked for, is written the same way beside it: the profile's name with {@value
     * BenchmarkReportWriter#FILE_SUFFIX} in place of {@code .json}.
     */
    Written write(
            StageResult result,
            ProfileContext context,
            ServerMetricsReport serverReport,
            java.util.function.Consumer<String> beforeRetry) {
        return write(result, context, serverReport, null, beforeRetry);
    }

    /**
     * As {@link #write(StageResult, ProfileContext, ServerMetricsReport,
     * java.util.function.Consumer)}, with the stage's declared prefix-cache state checked ({@link
     * CacheStateCheck#annotate}), or {@code null}.
     */
    Written write(
            StageResult result,
            ProfileContext context,
            ServerMetricsReport serverReport,
            CacheStateCheck.Verification cacheCheck,
            java.util.function.Consumer<String> beforeRetry) {
        var node = LpgProfileWriter.write(result, context, serverReport, dialect);
        CacheStateCheck.annotate(node, cacheCheck);
        String json = LpgProfileWriter.toJson(node);
        String name = fileName(result, context);
        String stem = name.substring(0, name.length() - ".json".length());
        Written profile = create(stem, ".json", json, beforeRetry);
        if (!benchmarkReport) {
            return profile;
        }
        String reportName =
                BenchmarkReportWriter.nameBeside(
                        profile.ok() ? profile.path().getFileName().toString() : name);
        String yaml =
                BenchmarkReportWriter.toYaml(BenchmarkReportWriter.write(result, experimentId));
        Written report =
                create(
                        reportName.substring(
                                0,
                                reportName.length() - BenchmarkReportWriter.FILE_SUFFIX.length()),
                        BenchmarkReportWriter.FILE_SUFFIX,
                        yaml,
                        beforeRetry);
        return new Written(profile.path(), profile.failure(), report.path(), report.failure());
    }

    private Written create(
            String stem,
            String extension,
            String content,
            java.util.function.Consumer<String> beforeRetry) {
        try {
            return new Written(AtomicFiles.createNew(dir, stem, extension, content), null);
        } catch (IOException | RuntimeException first) {
            beforeRetry.accept(reason(first));
            try {
                return new Written(AtomicFiles.createNew(dir, stem, extension, content), null);
            } catch (IOException | RuntimeException second) {
                return new Written(dir.resolve(stem + extension), reason(second));
            }
        }
    }

    private static String reason(Exception e) {
        String message = e.getMessage();
        String type = e.getClass().getSimpleName();
        if (message == null) {
            return type;
        }
        // NIO names the failure by its exception type and puts only the path in the message.
        return e instanceof java.nio.file.FileSystemException fs && fs.getReason() != null
                ? fs.getReason()
                : (e instanceof java.nio.file.FileSystemException
                        ? type + ": " + message
                        : message);
    }
}

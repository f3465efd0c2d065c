package io.inferencebench.runner.cli;

import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.server.ServerMetricsReport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The result directory and the profile files in it: checked before any request is sent, named like
 * LPG's files, and written so that a failing write (disk full, too many open files) loses no more
 * than that one file and leaves no partial file, and so that runs sharing the directory never
 * overwrite each other's profiles.
 */
final class ResultFiles {

    /** The outcome of writing one profile: its path, and the reason when it was not written. */
    record Written(Path path, String failure) {
        boolean ok() {
            return failure == null;
        }
    }

    private final Path dir;

    private ResultFiles(Path dir) {
        this.dir = dir;
    }

    /**
     * Creates the directory and proves it writable by writing and deleting a probe file.
     *
     * @throws Main.UsageError naming {@code --result-dir} when it cannot be used
     */
    static ResultFiles prepare(Path dir) {
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
        return new ResultFiles(absolute);
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
     * tries once more. A profile not written leaves no file behind.
     */
    Written write(
            StageResult result,
            ProfileContext context,
            ServerMetricsReport serverReport,
            java.util.function.Consumer<String> beforeRetry) {
        String json =
                LpgProfileWriter.toJson(LpgProfileWriter.write(result, context, serverReport));
        String name = fileName(result, context);
        String stem = name.substring(0, name.length() - ".json".length());
        try {
            return new Written(AtomicFiles.createNew(dir, stem, ".json", json), null);
        } catch (IOException | RuntimeException first) {
            beforeRetry.accept(reason(first));
            try {
                return new Written(AtomicFiles.createNew(dir, stem, ".json", json), null);
            } catch (IOException | RuntimeException second) {
                return new Written(dir.resolve(name), reason(second));
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

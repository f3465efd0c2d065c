package io.inferencebench.runner.cli;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.SloSpec;
import io.inferencebench.crds.v1alpha1.WorkloadSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The {@code --config} YAML: the {@code workload}, {@code load} and (optionally) {@code slo}
 * sections of a BenchmarkRun spec, parsed into the same API classes the operator uses, so a file
 * that works here works in a BenchmarkRun and vice versa.
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public final class ConfigFile {
    public WorkloadSpec workload;
    public LoadSpec load;
    public SloSpec slo;

    /** Other BenchmarkRun sections are accepted (a whole spec can be pasted) and ignored. */
    public Object target;

    public Object metrics;
    public Object runner;
    public Object output;
    public Object cancel;
    public Object ttlSecondsAfterFinished;

    /** A whole BenchmarkRun manifest: its spec is read. */
    public Object apiVersion;

    public Object kind;
    public Object metadata;
    public ConfigFile spec;

    static ConfigFile read(Path path) {
        if (!Files.isRegularFile(path)) {
            throw new Main.UsageError("--config: no such file: " + path);
        }
        ObjectMapper yaml =
                new ObjectMapper(new YAMLFactory())
                        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        try {
            ConfigFile file = yaml.readValue(path.toFile(), ConfigFile.class);
            if (file == null) {
                return new ConfigFile();
            }
            return file.spec != null ? file.spec : file;
        } catch (IOException e) {
            String message = e.getMessage();
            int newline = message == null ? -1 : message.indexOf('\n');
            throw new Main.UsageError(
                    "--config "
                            + path
                            + ": "
                            + (newline > 0 ? message.substring(0, newline) : message)
                            + " (expected the workload/load/slo sections of a BenchmarkRun spec)");
        }
    }
}

package io.inferencebench.runner.cli;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.SloSpec;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.crds.v1alpha1.TargetSpec;
import io.inferencebench.crds.v1alpha1.WorkloadSpec;
import io.inferencebench.runner.dataset.Utf8Files;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code --config} YAML: the {@code target}, {@code workload}, {@code load} and {@code slo}
 * sections of a BenchmarkRun spec, parsed into the same API classes the operator uses, so a file
 * that works here works in a BenchmarkRun and vice versa. Flags are laid over the sections.
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public final class ConfigFile {
    public WorkloadSpec workload;
    public LoadSpec load;
    public SloSpec slo;

    public TargetSpec target;

    /** Other BenchmarkRun sections are accepted (a whole spec can be pasted) and ignored. */
    @JsonSetter(nulls = Nulls.SKIP)
    public Object metrics;

    @JsonSetter(nulls = Nulls.SKIP)
    public Object runner;

    @JsonSetter(nulls = Nulls.SKIP)
    public Object output;

    @JsonSetter(nulls = Nulls.SKIP)
    public Object cancel;

    @JsonSetter(nulls = Nulls.SKIP)
    public Object ttlSecondsAfterFinished;

    /** A whole BenchmarkRun manifest: its spec is read. */
    @JsonSetter(nulls = Nulls.SKIP)
    public Object apiVersion;

    @JsonSetter(nulls = Nulls.SKIP)
    public Object kind;

    @JsonSetter(nulls = Nulls.SKIP)
    public Object metadata;

    public ConfigFile spec;

    /**
     * "--config FILE line L, column C: load.requestTimeout: reason": where the problem is, the
     * field path in the YAML's own names, and Jackson's reason without its Java details.
     */
    static String describe(Path path, com.fasterxml.jackson.core.JsonProcessingException e) {
        StringBuilder sb = new StringBuilder("--config ").append(path);
        ConfigYaml.Problem problem = cause(e, ConfigYaml.Problem.class);
        if (problem != null) {
            sb.append(" line ").append(problem.line()).append(", column ").append(problem.column());
            sb.append(": ");
            if (!problem.field().isEmpty()) {
                sb.append(problem.field()).append(": ");
            }
            return sb.append(problem.reason()).toString();
        }
        var syntax =
                cause(
                        e,
                        com.fasterxml.jackson.dataformat.yaml.snakeyaml.error.MarkedYAMLException
                                .class);
        if (syntax != null && syntax.getProblemMark() != null) {
            // SnakeYAML's mark is where the problem is (Jackson's location is where it stopped).
            var mark = syntax.getProblemMark();
            sb.append(" line ")
                    .append(mark.getLine() + 1)
                    .append(", column ")
                    .append(mark.getColumn() + 1)
                    .append(": ");
            String what = syntax.getProblem() == null ? "" : syntax.getProblem();
            if (what.contains("\t") || what.contains("(TAB)")) {
                return sb.append("tabs are not allowed in YAML; indent and separate with spaces")
                        .toString();
            }
            sb.append("not valid YAML: ").append(what.strip());
            if (syntax.getContext() != null) {
                sb.append(" (").append(syntax.getContext().strip()).append(')');
            }
            return sb.toString();
        }
        com.fasterxml.jackson.core.JsonLocation at = e.getLocation();
        if (at != null && at.getLineNr() > 0) {
            sb.append(" line ").append(at.getLineNr()).append(", column ").append(at.getColumnNr());
        }
        sb.append(": ");
        if (e instanceof com.fasterxml.jackson.databind.JsonMappingException mapping) {
            StringBuilder field = new StringBuilder();
            for (com.fasterxml.jackson.databind.JsonMappingException.Reference r :
                    mapping.getPath()) {
                if (r.getFieldName() != null) {
                    if (!field.isEmpty()) {
                        field.append('.');
                    }
                    field.append(r.getFieldName());
                } else if (r.getIndex() >= 0) {
                    field.append('[').append(r.getIndex()).append(']');
                }
            }
            if (!field.isEmpty()) {
                sb.append(field).append(": ");
            }
        }
        sb.append(reason(e));
        return sb.toString();
    }

    private static <T extends Throwable> T cause(Throwable e, Class<T> type) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    private static String reason(com.fasterxml.jackson.core.JsonProcessingException e) {
        if (e instanceof com.fasterxml.jackson.databind.exc.InvalidNullException) {
            return "null is not a value here: give one, or leave the field out for its default";
        }
        if (e instanceof com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException u
                && "<<".equals(u.getPropertyName())) {
            return "merge keys (<<) are not supported; alias the whole node (- *name) or repeat"
                    + " its fields";
        }
        if (e instanceof com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException u) {
            List<String> known = new ArrayList<>();
            if (u.getKnownPropertyIds() != null) {
                u.getKnownPropertyIds().forEach(k -> known.add(String.valueOf(k)));
            }
            java.util.Collections.sort(known);
            return "unknown field '"
                    + u.getPropertyName()
                    + "'"
                    + (known.isEmpty() ? "" : "; allowed: " + String.join(", ", known));
        }
        if (e instanceof com.fasterxml.jackson.databind.exc.InvalidFormatException f) {
            return "'"
                    + f.getValue()
                    + "' is not a valid "
                    + typeName(f.getTargetType())
                    + (f.getTargetType() != null && f.getTargetType().isEnum()
                            ? " (allowed: " + enumValues(f.getTargetType()) + ")"
                            : "");
        }
        if (e instanceof com.fasterxml.jackson.databind.exc.MismatchedInputException m
                && m.getTargetType() != null) {
            return "expected " + typeName(m.getTargetType()) + " here";
        }
        String message = e.getOriginalMessage();
        if (message == null) {
            return e.getClass().getSimpleName();
        }
        int newline = message.indexOf('\n');
        message = newline > 0 ? message.substring(0, newline) : message;
        // Jackson names Java classes; the user wrote YAML.
        return message.replaceAll("`[a-zA-Z0-9_.$]+\\.([A-Za-z0-9_$]+)`", "$1").strip();
    }

    private static String typeName(Class<?> type) {
        if (type == null) {
            return "value";
        }
        if (type == Integer.class
                || type == int.class
                || type == Long.class
                || type == long.class) {
            return "whole number";
        }
        if (type == Double.class || type == double.class) {
            return "number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "boolean (true or false)";
        }
        if (type == String.class) {
            return "string";
        }
        if (List.class.isAssignableFrom(type)) {
            return "list";
        }
        if (type.isEnum()) {
            return "value";
        }
        return "mapping (" + type.getSimpleName().replaceAll("Spec$", "") + ")";
    }

    private static String enumValues(Class<?> type) {
        List<String> values = new ArrayList<>();
        for (Object constant : type.getEnumConstants()) {
            String name = constant.toString();
            try {
                Object wire = constant.getClass().getMethod("wireName").invoke(constant);
                name = String.valueOf(wire);
            } catch (ReflectiveOperationException ignored) {
                name = name.toLowerCase(java.util.Locale.ROOT);
            }
            values.add(name);
        }
        return String.join(", ", values);
    }

    /**
     * Reads a config file or a whole BenchmarkRun manifest.
     *
     * @throws Main.UsageError naming the file, line and field of a problem
     */
    public static ConfigFile read(Path path) {
        if (path.toString().isBlank()) {
            throw new Main.UsageError("--config: the path is empty; give a YAML file");
        }
        if (!Files.isRegularFile(path)) {
            throw new Main.UsageError("--config: no such file: " + path);
        }
        String text;
        try {
            text = Utf8Files.read(path);
        } catch (Utf8Files.NotUtf8Exception e) {
            throw new Main.UsageError("--config " + e.getMessage());
        } catch (IOException e) {
            throw new Main.UsageError("--config " + path + ": cannot read: " + e.getMessage());
        }
        try {
            ConfigFile file = MAPPER.readValue(new StringReader(text), ConfigFile.class);
            if (file == null) {
                return new ConfigFile();
            }
            return file.spec != null ? file.spec : file;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new Main.UsageError(describe(path, e));
        } catch (IOException e) {
            throw new Main.UsageError("--config " + path + ": cannot read: " + e.getMessage());
        }
    }

    /**
     * Strict where Jackson is lenient by default: an integer field takes integers only (5.9 was
     * read as 5), {@code null} is refused rather than read as "use the default", a key given twice
     * is refused (see {@link ConfigYaml}); request rates take {@code inf} as the flag does.
     */
    private static final ObjectMapper MAPPER =
            new ObjectMapper(new ConfigYaml.Factory())
                    .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                    .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
                    .setDefaultSetterInfo(JsonSetter.Value.forValueNulls(Nulls.FAIL, Nulls.FAIL))
                    .addMixIn(LoadSpec.class, ConfigYaml.LoadRates.class)
                    .addMixIn(StageSpec.class, ConfigYaml.StageRate.class);
}

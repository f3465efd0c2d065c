package io.inferencebench.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks a Benchmark Report v0.2 against llm-d-benchmark's JSON Schema of v0.2.1 (committed beside
 * this class with its origin and licence, {@code br/README.md}), format assertions ({@code
 * date-time}) on, plus the unit rules its pydantic models add and the schema cannot say: which
 * units each statistic may have.
 */
public final class BenchmarkReportSchema {

    /** Where the schema is on the class path. */
    public static final String RESOURCE =
            "/io/inferencebench/testkit/br/br_v0_2_1_json_schema.json";

    private static final YAMLMapper YAML = new YAMLMapper();

    private static final Set<String> QUANTITY = Set.of("count", "pixels");
    private static final Set<String> TIME = Set.of("ms", "s");
    private static final Set<String> GEN_LATENCY = Set.of("ms/token", "s/token");
    private static final Set<String> GEN_THROUGHPUT = Set.of("tokens/s");
    private static final Set<String> REQUEST_THROUGHPUT = Set.of("queries/s");
    private static final Set<String> MEMORY =
            Set.of("bytes", "MB", "GB", "TB", "MiB", "GiB", "TiB");

    /** The pydantic models' unit rules for the aggregate statistics (schema_v0_2*.py). */
    private static final Map<String, Set<String>> UNIT_RULES =
            Map.ofEntries(
                    Map.entry("requests/input_length", QUANTITY),
                    Map.entry("requests/output_length", QUANTITY),
                    Map.entry("requests/request_size", MEMORY),
                    Map.entry("latency/time_to_first_token", TIME),
                    Map.entry("latency/request_latency", TIME),
                    Map.entry("latency/normalized_time_per_output_token", GEN_LATENCY),
                    Map.entry("latency/time_per_output_token", GEN_LATENCY),
                    Map.entry("latency/inter_token_latency", GEN_LATENCY),
                    Map.entry("throughput/input_token_rate", GEN_THROUGHPUT),
                    Map.entry("throughput/output_token_rate", GEN_THROUGHPUT),
                    Map.entry("throughput/total_token_rate", GEN_THROUGHPUT),
                    Map.entry("throughput/request_rate", REQUEST_THROUGHPUT));

    private static volatile Schema schema;

    private BenchmarkReportSchema() {}

    /**
     * What is wrong with a report file (YAML or JSON).
     *
     * @param file the report
     * @return one message per problem; empty when the report is valid
     */
    public static List<String> problems(Path file) {
        try {
            return problems(YAML.readTree(Files.readString(file)));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    /**
     * What is wrong with a report.
     *
     * @param report the report as a tree
     * @return one message per problem (the schema's, then the unit rules'); empty when valid
     */
    public static List<String> problems(JsonNode report) {
        List<String> out = new ArrayList<>();
        for (Error e :
                schema().validate(
                                report,
                                context ->
                                        context.executionConfig(
                                                config -> config.formatAssertionsEnabled(true)))) {
            out.add(e.toString());
        }
        JsonNode aggregate = report.path("results").path("request_performance").path("aggregate");
        UNIT_RULES.forEach(
                (path, allowed) -> {
                    String[] parts = path.split("/");
                    JsonNode statistic = aggregate.path(parts[0]).path(parts[1]);
                    if (!statistic.isMissingNode() && !statistic.isNull()) {
                        String units = statistic.path("units").asText();
                        if (!allowed.contains(units)) {
                            out.add(
                                    "results.request_performance.aggregate."
                                            + path.replace('/', '.')
                                            + ".units: "
                                            + units
                                            + " is not one of "
                                            + allowed);
                        }
                    }
                });
        return out;
    }

    private static Schema schema() {
        Schema s = schema;
        if (s == null) {
            try (InputStream in = BenchmarkReportSchema.class.getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new IllegalStateException(RESOURCE + " is not on the class path");
                }
                s =
                        SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
                                .getSchema(in);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            schema = s;
        }
        return s;
    }
}

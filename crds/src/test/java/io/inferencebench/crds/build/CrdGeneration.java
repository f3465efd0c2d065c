package io.inferencebench.crds.build;

import io.fabric8.crdv2.generator.CRDGenerator;
import io.fabric8.crdv2.generator.CRDPostProcessor;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkSchedule;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Generates the BenchmarkRun and BenchmarkSchedule CRDs from the Java model. Runs in the build
 * (exec plugin, into {@code target/classes/META-INF/fabric8}) and in {@code CrdDriftTest}, which
 * compares it with the committed copies.
 *
 * <p>The fabric8 generator sorts printer columns by JSON path; kubectl shows them in list order, so
 * they are put back in reading order here. Conditions become a map-list keyed by type, as
 * metav1.Condition lists are in Kubernetes' own APIs.
 */
public final class CrdGeneration {

    /** File name of the generated BenchmarkRun CRD. */
    public static final String FILE_NAME = BenchmarkRun.CRD_NAME + "-v1.yml";

    /** File name of the generated BenchmarkSchedule CRD. */
    public static final String SCHEDULE_FILE_NAME = BenchmarkSchedule.CRD_NAME + "-v1.yml";

    static final List<String> SCHEDULE_COLUMN_ORDER =
            List.of("Schedule", "Last run", "Verdict", "Next", "Age");

    static final List<String> COLUMN_ORDER =
            List.of(
                    "Phase",
                    "Model",
                    "Stage",
                    "Done",
                    "RPS",
                    "TTFT P50",
                    "Latency P99",
                    "SLO",
                    "Capacity",
                    "Replica Shares",
                    "Age");

    private static final Map<String, String> CONDITION_FIELD_DESCRIPTIONS =
            Map.of(
                    "type", "Condition type, e.g. TargetReady.",
                    "status", "True, False or Unknown.",
                    "observedGeneration", "The metadata.generation the condition was set for.",
                    "lastTransitionTime", "When status last changed (RFC 3339).",
                    "reason", "CamelCase reason for the last transition.",
                    "message", "Human-readable details.");

    private CrdGeneration() {}

    /**
     * Writes the CRD into a directory.
     *
     * @param args the output directory
     */
    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args.length > 0 ? args[0] : "target/classes/META-INF/fabric8");
        Files.createDirectories(dir);
        for (Map.Entry<String, String> crd : generateAll().entrySet()) {
            Files.writeString(dir.resolve(crd.getKey()), crd.getValue());
        }
    }

    /**
     * Generates the BenchmarkRun CRD YAML.
     *
     * @return the YAML text
     */
    public static String generate() {
        return generateAll().get(FILE_NAME);
    }

    /**
     * Generates every CRD of the API.
     *
     * @return YAML text by file name ({@link #FILE_NAME}, {@link #SCHEDULE_FILE_NAME})
     */
    public static Map<String, String> generateAll() {
        try {
            Path dir = Files.createTempDirectory("crd-generation");
            try {
                new CRDGenerator()
                        .customResourceClasses(BenchmarkRun.class, BenchmarkSchedule.class)
                        .forCRDVersions("v1")
                        .withParallelGenerationEnabled(false)
                        .withPostProcessor(new Polish())
                        .inOutputDir(dir.toFile())
                        .generate();
                Map<String, String> crds = new java.util.LinkedHashMap<>();
                for (String name : List.of(FILE_NAME, SCHEDULE_FILE_NAME)) {
                    crds.put(name, Files.readString(dir.resolve(name)));
                }
                return crds;
            } finally {
                try (var files = Files.walk(dir)) {
                    files.sorted(Comparator.reverseOrder()).forEach(CrdGeneration::deleteQuietly);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static final class Polish implements CRDPostProcessor {
        @Override
        public HasMetadata process(HasMetadata crd, String crdSpecVersion) {
            if (crd instanceof CustomResourceDefinition definition) {
                boolean schedule =
                        BenchmarkSchedule.KIND.equals(definition.getSpec().getNames().getKind());
                for (CustomResourceDefinitionVersion version : definition.getSpec().getVersions()) {
                    orderColumns(version, schedule ? SCHEDULE_COLUMN_ORDER : COLUMN_ORDER);
                    polishConditions(version);
                    if (schedule) {
                        editableTemplate(version);
                    } else {
                        profilesAreObjects(version);
                    }
                }
            }
            return crd;
        }

        private static void orderColumns(
                CustomResourceDefinitionVersion version, List<String> order) {
            List<CustomResourceColumnDefinition> columns =
                    new ArrayList<>(version.getAdditionalPrinterColumns());
            columns.sort(Comparator.comparingInt(c -> rank(order, c.getName())));
            version.setAdditionalPrinterColumns(columns);
        }

        private static int rank(List<String> order, String column) {
            int index = order.indexOf(column);
            if (index < 0) {
                throw new IllegalStateException(
                        "printer column " + column + " missing from CrdGeneration.COLUMN_ORDER");
            }
            return index;
        }

        private static void polishConditions(CustomResourceDefinitionVersion version) {
            JSONSchemaProps status =
                    version.getSchema().getOpenAPIV3Schema().getProperties().get("status");
            JSONSchemaProps conditions = status.getProperties().get("conditions");
            conditions.setXKubernetesListType("map");
            conditions.setXKubernetesListMapKeys(List.of("type"));
            JSONSchemaProps condition = conditions.getItems().getSchema();
            condition.setRequired(List.of("type", "status"));
            condition
                    .getProperties()
                    .forEach(
                            (name, field) -> {
                                String description = CONDITION_FIELD_DESCRIPTIONS.get(name);
                                if (description != null) {
                                    field.setDescription(description);
                                }
                            });
            condition.getProperties().get("lastTransitionTime").setFormat("date-time");
        }

        private static void profilesAreObjects(CustomResourceDefinitionVersion version) {
            JSONSchemaProps status =
                    version.getSchema().getOpenAPIV3Schema().getProperties().get("status");
            JSONSchemaProps profile = status.getProperties().get("profiles").getItems().getSchema();
            profile.setType("object");
        }

        /**
         * The template is a BenchmarkRunSpec, whose transition rules make a run's spec immutable; a
         * schedule's template must stay editable (later runs take the new template).
         */
        private static void editableTemplate(CustomResourceDefinitionVersion version) {
            JSONSchemaProps template =
                    version.getSchema()
                            .getOpenAPIV3Schema()
                            .getProperties()
                            .get("spec")
                            .getProperties()
                            .get("template");
            dropTransitionRules(template);
        }

        private static void dropTransitionRules(JSONSchemaProps schema) {
            if (schema == null) {
                return;
            }
            if (schema.getXKubernetesValidations() != null) {
                List<io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule> kept =
                        schema.getXKubernetesValidations().stream()
                                .filter(r -> !r.getRule().contains("oldSelf"))
                                .toList();
                schema.setXKubernetesValidations(kept.isEmpty() ? null : new ArrayList<>(kept));
            }
            if (schema.getProperties() != null) {
                schema.getProperties().values().forEach(Polish::dropTransitionRules);
            }
            if (schema.getItems() != null) {
                dropTransitionRules(schema.getItems().getSchema());
            }
            if (schema.getAdditionalProperties() != null) {
                dropTransitionRules(schema.getAdditionalProperties().getSchema());
            }
        }
    }
}

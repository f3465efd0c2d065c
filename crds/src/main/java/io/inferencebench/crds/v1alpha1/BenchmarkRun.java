package io.inferencebench.crds.v1alpha1;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * A benchmark of an LLM model server: load stages against a target, with one LPG latency profile
 * per stage written into status and a ConfigMap.
 */
@Group(BenchmarkRun.GROUP)
@Version(BenchmarkRun.VERSION)
@Kind(BenchmarkRun.KIND)
@Plural(BenchmarkRun.PLURAL)
@Singular("benchmarkrun")
@ShortNames({"br", "bench"})
@Categories("inferencebench")
@ValidationRule(
        value = "self.metadata.name.size() <= 52",
        message =
                "metadata.name: must be at most 52 characters (runner Job and pod host names are"
                        + " derived from it)",
        reason = "FieldValueInvalid")
@ValidationRule(
        value = "self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
        message =
                "metadata.name: must be a DNS label (lower-case letters, digits and '-'; no"
                        + " dots), because runner pod host names are derived from it",
        reason = "FieldValueInvalid")
@AdditionalPrinterColumn(
        name = "Phase",
        jsonPath = ".status.phase",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Model",
        jsonPath = ".status.model",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Stage",
        jsonPath = ".status.stage",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Done",
        jsonPath = ".status.progress.done",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "RPS",
        jsonPath = ".status.summary.rps",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "TTFT P50",
        jsonPath = ".status.summary.ttftP50",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Latency P99",
        jsonPath = ".status.summary.latencyP99",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "SLO",
        jsonPath = ".status.summary.slo",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Capacity",
        jsonPath = ".status.capacity.display",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Replica Shares",
        jsonPath = ".status.summary.replicaShares",
        type = AdditionalPrinterColumn.Type.STRING,
        priority = 1)
@AdditionalPrinterColumn(
        name = "Age",
        jsonPath = ".metadata.creationTimestamp",
        type = AdditionalPrinterColumn.Type.DATE)
public class BenchmarkRun extends CustomResource<BenchmarkRunSpec, BenchmarkRunStatus>
        implements Namespaced {

    /** API group. */
    public static final String GROUP = "inferencebench.io";

    /** API version. */
    public static final String VERSION = "v1alpha1";

    /** Kind. */
    public static final String KIND = "BenchmarkRun";

    /** Plural resource name. */
    public static final String PLURAL = "benchmarkruns";

    /** Name of the CustomResourceDefinition. */
    public static final String CRD_NAME = PLURAL + "." + GROUP;

    public BenchmarkRun() {}
}

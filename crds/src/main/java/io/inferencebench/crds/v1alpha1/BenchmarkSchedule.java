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
 * A cron schedule of BenchmarkRuns from a template, each compared with its baseline: the nightly
 * benchmark whose {@code Regressing} condition, Events and metrics tell when a server got slower.
 */
@Group(BenchmarkRun.GROUP)
@Version(BenchmarkRun.VERSION)
@Kind(BenchmarkSchedule.KIND)
@Plural(BenchmarkSchedule.PLURAL)
@Singular("benchmarkschedule")
@ShortNames({"bsched"})
@Categories("inferencebench")
@ValidationRule(
        value = "self.metadata.name.size() <= " + BenchmarkSchedule.MAX_NAME_LENGTH,
        message =
                "metadata.name: must be at most "
                        + BenchmarkSchedule.MAX_NAME_LENGTH
                        + " characters (its runs are named <schedule>-<yyyyMMddHHmm> and run"
                        + " names are limited to 52)",
        reason = "FieldValueInvalid")
@ValidationRule(
        value = "self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
        message =
                "metadata.name: must be a DNS label (lower-case letters, digits and '-'; no"
                        + " dots), because its runs' names are derived from it",
        reason = "FieldValueInvalid")
@AdditionalPrinterColumn(
        name = "Schedule",
        jsonPath = ".spec.schedule",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Last run",
        jsonPath = ".status.lastRun",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Verdict",
        jsonPath = ".status.lastVerdict",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Next",
        jsonPath = ".status.nextScheduleTime",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
        name = "Age",
        jsonPath = ".metadata.creationTimestamp",
        type = AdditionalPrinterColumn.Type.DATE)
public class BenchmarkSchedule
        extends CustomResource<BenchmarkScheduleSpec, BenchmarkScheduleStatus>
        implements Namespaced {

    /** Kind. */
    public static final String KIND = "BenchmarkSchedule";

    /** Plural resource name. */
    public static final String PLURAL = "benchmarkschedules";

    /** Name of the CustomResourceDefinition. */
    public static final String CRD_NAME = PLURAL + "." + BenchmarkRun.GROUP;

    /** Run names are {@code <schedule>-<yyyyMMddHHmm>} and must fit 52 characters. */
    public static final int MAX_NAME_LENGTH = Names.MAX_RUN_NAME_LENGTH - 13;

    public BenchmarkSchedule() {}
}

package io.inferencebench.runner.cli;

import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.profile.search.CapacitySearch;
import io.inferencebench.profile.search.ProbeResult;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A search's {@value SearchCommand#CAPACITY_FILE}: its settings and SLO, every probe judged so far
 * and, once it ends, the capacity and the outcome. Rewritten whole after every probe, so a search
 * stopped at any point leaves the bracket so far.
 */
final class CapacityFile {

    /** Writes the file as people read it: indented, one key a line. */
    private static final ObjectWriter PRETTY = ProfileInputs.JSON.writerWithDefaultPrettyPrinter();

    private final Path file;

    /** What every version of the file starts with: what the search was asked. */
    private final ObjectNode settings = ProfileInputs.JSON.createObjectNode();

    private final List<ObjectNode> probes = new ArrayList<>();

    /**
     * @param slo the SLO as {@link #slo} records it
     * @param arrival the arrival process of every probe
     */
    CapacityFile(Path file, CapacitySearch.Settings search, ObjectNode slo, String arrival) {
        this.file = file;
        settings.set("slo", slo);
        settings.put("precision", search.precision());
        settings.put("min_rate", search.minRate());
        settings.put("max_rate", search.maxRate());
        settings.put("arrival", arrival.toLowerCase(Locale.ROOT));
    }

    /** Where the file is written. */
    Path path() {
        return file;
    }

    /** How many probes it holds. */
    int probes() {
        return probes.size();
    }

    /** Adds a judged probe and writes the file, its outcome {@code in_progress}. */
    void probed(CapacitySearch.Probed p) {
        probes.add(probeNode(p));
        ObjectNode node = base();
        node.putNull("max_request_rate");
        node.putNull("passing_rate");
        node.putNull("failing_rate");
        node.put("outcome", "in_progress");
        node.putArray("probes").addAll(probes);
        write(node);
    }

    /** Writes the search's result (found, or stopped with the bracket so far) with its probes. */
    void finish(CapacitySearch.Result result) {
        ObjectNode node = base();
        node.put("max_request_rate", result.maxRequestRate());
        node.put("passing_rate", result.passingRate());
        node.put("passing_achieved_rate", result.passingAchievedRate());
        node.put("failing_rate", result.failingRate());
        node.put("undelivered_rate", result.undeliveredRate());
        node.put("outcome", outcomeName(result.outcome()));
        node.put("message", result.message());
        node.put("confidence", result.confidence());
        node.put("undecided", result.undecided());
        node.putArray("probes").addAll(probes);
        write(node);
    }

    /** An outcome as capacity.json and the summary name it. */
    static String outcomeName(CapacitySearch.Outcome outcome) {
        return outcome.name().toLowerCase(Locale.ROOT);
    }

    private ObjectNode base() {
        return settings.deepCopy();
    }

    private void write(ObjectNode capacity) {
        try {
            // complete or absent, never half-written (a disk that fills keeps the last whole one)
            AtomicFiles.replace(file, PRETTY.writeValueAsString(capacity) + "\n");
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + file + ": " + Main.describe(e), e);
        }
    }

    private static ObjectNode probeNode(CapacitySearch.Probed p) {
        ObjectNode node = ProfileInputs.JSON.createObjectNode();
        ProbeResult r = p.result();
        node.put("request_rate", r.requestRate());
        if (r.size() > 1) {
            node.put("size", r.size());
        }
        node.put("achieved_rate", r.achievedRate());
        node.put("slo_attainment", r.sloAttainment());
        // its 95 % interval (Wilson): a probe whose interval straddles the minimum is indeterminate
        node.putArray("slo_attainment_interval")
                .add(r.attainmentInterval().low())
                .add(r.attainmentInterval().high());
        node.put("attempted", r.attemptedRequests());
        node.put("failed", r.failedRequests());
        if (r.failureClasses() != null) {
            node.put("failure_classes", r.failureClasses());
        }
        node.put("passed", p.passed());
        node.put("verdict", p.verdict());
        node.put("load_delivered", r.loadDelivered());
        node.put("load_reason", r.load().reason());
        if (!r.load().delivered()) {
            node.put("load_message", r.load().message());
        }
        node.put("profile", r.profile());
        return node;
    }

    /**
     * The SLO as capacity.json records it ({@code --goodput} in milliseconds and the attainment);
     * the probes' plan checks the values again.
     *
     * @throws Main.UsageError naming {@code --goodput} for a value it cannot record
     */
    static ObjectNode slo(List<String> goodput, double attainment) {
        ObjectNode slo = ProfileInputs.JSON.createObjectNode();
        for (String item : goodput) {
            SloOptions.Goodput g = SloOptions.Goodput.parse(item);
            String name = g.name().toLowerCase(Locale.ROOT);
            if (!List.of("ttft", "tpot", "e2el").contains(name)) {
                throw SloOptions.Goodput.malformed(item);
            }
            slo.put(name + "_ms", g.millis());
        }
        slo.put("min_attainment", attainment);
        return slo;
    }
}

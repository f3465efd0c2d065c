package io.inferencebench.runner.cli;

import io.inferencebench.crds.v1alpha1.SloSpec;
import java.math.BigDecimal;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * The SLO flags ({@code --goodput}, {@code --slo-min-attainment}), a picocli mixin ({@code @Mixin
 * SloOptions slo}), laid over the {@code slo} section of a {@code --config} file.
 */
public final class SloOptions {

    @Option(
            names = "--goodput",
            arity = "1..*",
            description = "SLOs for goodput, e.g. ttft:500 tpot:50 e2el:10000 (ms).")
    List<String> goodput;

    @Option(
            names = "--slo-min-attainment",
            description =
                    "Exit non-zero when a stage's SLO attainment is below this (default 0.95).")
    Double sloMinAttainment;

    /**
     * One {@code --goodput} item, {@code NAME:MILLISECONDS}.
     *
     * @param name the name as given (not checked)
     * @param millis the threshold, positive and finite
     */
    record Goodput(String name, double millis) {

        /** Parses an item; its name is checked by the caller. */
        static Goodput parse(String item) {
            String[] kv = item.split(":", 2);
            double value;
            try {
                value = kv.length == 2 ? Double.parseDouble(kv[1]) : Double.NaN;
            } catch (NumberFormatException e) {
                value = Double.NaN;
            }
            if (kv.length != 2 || !(value > 0) || Double.isInfinite(value)) {
                throw malformed(item);
            }
            return new Goodput(kv[0], value);
        }

        /** The error of an item that is not {@code NAME:MILLISECONDS}. */
        static Main.UsageError malformed(String item) {
            return new Main.UsageError(
                    "--goodput: '"
                            + item
                            + "' must be NAME:MILLISECONDS with NAME one of ttft, tpot, e2el and a"
                            + " positive number");
        }
    }

    /**
     * A copy of the config's SLO with the flags laid over it: {@code --goodput} replaces the
     * thresholds, {@code --slo-min-attainment} the attainment. {@code null} when neither gives one.
     */
    public SloSpec layOver(SloSpec config) {
        if (config == null && goodput == null && sloMinAttainment == null) {
            return null;
        }
        SloSpec slo = new SloSpec();
        if (config != null) {
            slo.setTtft(config.getTtft());
            slo.setTpot(config.getTpot());
            slo.setE2eLatency(config.getE2eLatency());
            slo.setMinAttainment(config.getMinAttainment());
        }
        if (goodput != null) {
            slo.setTtft(null);
            slo.setTpot(null);
            slo.setE2eLatency(null);
            for (String item : goodput) {
                Goodput g = Goodput.parse(item);
                String ms =
                        BigDecimal.valueOf(g.millis()).stripTrailingZeros().toPlainString() + "ms";
                switch (g.name().toLowerCase(Locale.ROOT)) {
                    case "ttft" -> slo.setTtft(ms);
                    case "tpot" -> slo.setTpot(ms);
                    case "e2el" -> slo.setE2eLatency(ms);
                    default ->
                            throw new Main.UsageError(
                                    "--goodput: unknown SLO '"
                                            + g.name()
                                            + "'; allowed: ttft, tpot, e2el");
                }
            }
        }
        if (sloMinAttainment != null) {
            if (!(sloMinAttainment >= 0 && sloMinAttainment <= 1)) {
                throw new Main.UsageError(
                        "--slo-min-attainment: must be within [0, 1], got " + sloMinAttainment);
            }
            slo.setMinAttainment(sloMinAttainment);
        }
        return slo;
    }
}

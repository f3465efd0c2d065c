package io.inferencebench.runner.cli;

import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.engine.Slo;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;

/**
 * The exit code of finished stages: {@link Main#EXIT_RESULTS_FAILED} when a stage had no success,
 * failed more than the failure gate allows or missed its SLO attainment, each said on stderr.
 */
final class Verdict {

    private Verdict() {}

    static int of(
            List<StageResult> results,
            Slo slo,
            double failureRatioLimit,
            boolean limitFromFlag,
            PrintWriter err) {
        int code = 0;
        for (StageResult r : results) {
            if (r.completed == 0) {
                err.printf(
                        "stage %d: no successful request%s%n",
                        r.stageIndex + 1, r.failed > 0 ? " (" + r.failureClassesText() + ")" : "");
                code = Main.EXIT_RESULTS_FAILED;
                continue;
            }
            if (r.failureRatio() > failureRatioLimit) {
                err.printf(
                        Locale.ROOT,
                        "stage %d: %.1f %% of requests failed (%s), above %s %.2f: the stage did"
                                + " not deliver its load%n",
                        r.stageIndex + 1,
                        100 * r.failureRatio(),
                        r.failureClassesText(),
                        limitFromFlag
                                ? "--max-failure-ratio"
                                : "--max-failure-ratio (load.maxFailureRatio)",
                        failureRatioLimit);
                code = Main.EXIT_RESULTS_FAILED;
            }
            if (slo.configured()) {
                long attempted = r.completed + r.failed;
                double attainment = attempted == 0 ? 0 : (double) r.goodputRequests / attempted;
                if (attainment < slo.minAttainment()) {
                    err.printf(
                            Locale.ROOT,
                            "stage %d: SLO missed: %.1f %% of requests met every SLO, %.1f %% required%n",
                            r.stageIndex + 1,
                            100 * attainment,
                            100 * slo.minAttainment());
                    code = Main.EXIT_RESULTS_FAILED;
                }
            }
        }
        return code;
    }
}

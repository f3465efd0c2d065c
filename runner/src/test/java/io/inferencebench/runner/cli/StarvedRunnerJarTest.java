package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.inferencebench.testkit.FreePorts;
import io.inferencebench.testkit.ModelSim;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner jar pinned with {@code taskset} to one CPU that CPU-bound processes also want: the
 * runner measures its own starvation (its threads wait for that CPU) and its summary says
 * LoadDelivered=False, naming the reason.
 *
 * <p>The starvation must not depend on how efficient the runner is: with {@value #HOGS} busy
 * processes the scheduler's fair share leaves the runner at most a quarter of the CPU, and the
 * requested rate asks for more than that (one busy process and 1,000 req/s stopped starving it once
 * its CPU per request fell).
 */
class StarvedRunnerJarTest {

    /** Busy processes sharing the runner's CPU. */
    private static final int HOGS = 3;

    /** Far more than a quarter of one CPU's worth of 4-token streams for the runner. */
    private static final String RATE = "5000";

    private static boolean tasksetWorks() {
        try {
            Process p = new ProcessBuilder("taskset", "-c", "0", "true").start();
            return p.waitFor() == 0;
        } catch (Exception e) {
            return false;
        }
    }

    /** CPU seconds a process has used, from /proc/PID/stat (utime + stime, in clock ticks). */
    private static double cpuSeconds(long pid) throws Exception {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        // fields after the command: state is index 0, utime 11, stime 12; USER_HZ is 100
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
    }

    @Test
    void aRunnerSharingItsOnlyCpuWithABusyProcessDidNotDeliverItsLoad(@TempDir Path dir)
            throws Exception {
        assumeTrue(tasksetWorks(), "taskset is needed to pin the runner to one CPU");
        int port = FreePorts.claim();
        Process sim =
                ModelSim.startOnLoopback(
                        port,
                        dir.resolve("sim.log"),
                        "/v1/models",
                        argv(
                                "--time-to-first-token 1 --inter-token-latency 1 --max-num-seqs 2000"));
        List<Process> hogs = new java.util.ArrayList<>();
        try {
            // the competitors: always runnable on CPU 0, where the runner is pinned too
            for (int i = 0; i < HOGS; i++) {
                hogs.add(
                        new ProcessBuilder("taskset", "-c", "0", "sh", "-c", "while :; do :; done")
                                .start());
            }
            double hogsBefore = 0;
            for (Process hog : hogs) {
                hogsBefore += cpuSeconds(hog.pid());
            }
            RunnerJarTest.Result r =
                    RunnerJarTest.runJar(
                            dir,
                            List.of("taskset", "-c", "0"),
                            List.of("-XX:ActiveProcessorCount=1"),
                            // model-sim honours ignore_eos: exact output lengths (openai leaves it
                            // out unless asked)
                            argv(
                                    "run --base-url %s --backend openai --ignore-eos --model sim"
                                            + " --random-input-len 16 --random-output-len 4"
                                            + " --request-rate %s --duration 3s --result-dir %s",
                                    "http://127.0.0.1:" + port,
                                    RATE,
                                    dir.resolve("results").toString()));
            double hogsUsed = -hogsBefore;
            for (Process hog : hogs) {
                hogsUsed += cpuSeconds(hog.pid());
            }

            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out())
                    .containsPattern("\\s+RunnerSaturated\\n")
                    .contains(
                            "stage 1: LoadDelivered=False (RunnerSaturated): the runner ran out of its 1 CPU:");
            // The runner's own figures: it waited for its CPU at least half the stage, and the
            // competitors really had that CPU meanwhile (seen from their side).
            Matcher waited =
                    Pattern.compile("its threads waited ([0-9.]+) s for a CPU in ([0-9.]+) s")
                            .matcher(r.out());
            assertThat(waited.find()).as(r.out()).isTrue();
            double wait = Double.parseDouble(waited.group(1));
            double wall = Double.parseDouble(waited.group(2));
            assertThat(wait).isGreaterThanOrEqualTo(0.5 * wall);
            assertThat(hogsUsed).isGreaterThan(0.5 * wall);
        } finally {
            for (Process hog : hogs) {
                hog.destroyForcibly();
                hog.waitFor();
            }
            sim.destroy();
            sim.waitFor();
        }
    }
}

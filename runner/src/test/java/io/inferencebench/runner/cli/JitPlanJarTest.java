package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.testkit.FreePorts;
import io.inferencebench.testkit.ModelSim;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner jar on a JVM that sees one CPU leaves C2 out of its measured stages ({@link
 * io.inferencebench.runner.engine.JitPlan}): the JVM's own flight recording shows no C2 compilation
 * after the first measured stage started, where the same run with {@code
 * -Dinferencebench.jit=tiered} shows them.
 */
class JitPlanJarTest {

    private static Process sim;
    private static int port;

    @BeforeAll
    static void startSimulator(@TempDir Path dir) throws Exception {
        port = FreePorts.claim();
        sim =
                ModelSim.startOnLoopback(
                        port, dir.resolve("sim.log"), "/v1/models", argv("--max-num-seqs 2000"));
    }

    @AfterAll
    static void stopSimulator() throws Exception {
        sim.destroy();
        sim.waitFor();
    }

    /** Level-4 (C2) compilations that started after the first measured stage did. */
    record Compilations(int c2InStage, int c1InStage, int profiledInStage, boolean stageSeen) {}

    private static Compilations compilationsInStage(Path jfr) throws Exception {
        List<RecordedEvent> events = RecordingFile.readAllEvents(jfr);
        Instant stageStart = null;
        for (RecordedEvent e : events) {
            // The runner's own event spans each stage from its schedule's anchor.
            if (e.getEventType().getName().equals("io.inferencebench.Stage")
                    && e.getInt("stage") == 1
                    && "measured".equals(e.getString("kind"))) {
                stageStart = e.getStartTime();
            }
        }
        int c2 = 0;
        int c1 = 0;
        int profiled = 0;
        for (RecordedEvent e : events) {
            if (stageStart != null
                    && e.getEventType().getName().equals("jdk.Compilation")
                    && e.getStartTime().isAfter(stageStart)) {
                int level = e.getInt("compileLevel");
                if (level == 4) {
                    c2++;
                } else {
                    c1++;
                    if (level == 2 || level == 3) {
                        profiled++;
                    }
                }
            }
        }
        return new Compilations(c2, c1, profiled, stageStart != null);
    }

    private static RunnerJarTest.Result run(Path dir, String... jvmExtra) throws Exception {
        List<String> jvm = new ArrayList<>();
        jvm.add("-XX:ActiveProcessorCount=1");
        jvm.add(
                "-XX:StartFlightRecording:filename="
                        + dir.resolve("run.jfr")
                        + ",+jdk.Compilation#threshold=0ms");
        jvm.addAll(List.of(jvmExtra));
        return RunnerJarTest.runJar(
                dir,
                List.of(),
                jvm,
                // model-sim honours ignore_eos: exact output lengths (openai leaves it out unless
                // asked)
                argv(
                        "run --base-url %s --backend openai --ignore-eos --model sim"
                                + " --random-input-len 16 --random-output-len 16"
                                + " --request-rate 400 --duration 3s --progress none"
                                + " --result-dir %s",
                        "http://127.0.0.1:" + port, dir.resolve("results").toString()));
    }

    @Test
    void oneCpuExcludesC2FromTheMeasuredStage(@TempDir Path dir) throws Exception {
        RunnerJarTest.Result r = run(dir);

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err()).contains("JIT: C2 excluded (1 CPU; C1 only)");
        Compilations c = compilationsInStage(dir.resolve("run.jfr"));
        assertThat(c.stageSeen()).as("stage event recorded").isTrue();
        assertThat(c.c2InStage()).as("C2 compilations during the stage").isZero();
    }

    @Test
    void tieredKeepsTheJvmDefaultsAndC2CompilesDuringTheStage(@TempDir Path dir) throws Exception {
        RunnerJarTest.Result r = run(dir, "-Dinferencebench.jit=tiered");

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err()).doesNotContain("JIT: C2 excluded");
        Compilations c = compilationsInStage(dir.resolve("run.jfr"));
        assertThat(c.stageSeen()).isTrue();
        // What the plan removes: with one CPU, C2 is still compiling when the stage starts.
        assertThat(c.c2InStage()).as("C2 compilations during the stage").isPositive();
    }

    @Test
    void anUnknownJitModeIsRefusedNamingTheAllowedOnes(@TempDir Path dir) throws Exception {
        RunnerJarTest.Result r = run(dir, "-Dinferencebench.jit=fast");

        assertThat(r.code()).isNotZero();
        assertThat(r.err()).contains("-Dinferencebench.jit=fast: allowed are auto, c1, tiered");
    }

    @Test
    void aJvmStartedC1OnlyIsTakenAsItIsAndCompilesNoProfilingCode(@TempDir Path dir)
            throws Exception {
        // How the runner image starts its JVM.
        RunnerJarTest.Result r = run(dir, "-XX:TieredStopAtLevel=1");

        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err()).contains("JIT: C1 only (-XX:TieredStopAtLevel=1)");
        assertThat(r.err()).doesNotContain("C2 excluded");
        Compilations c = compilationsInStage(dir.resolve("run.jfr"));
        assertThat(c.stageSeen()).isTrue();
        assertThat(c.c2InStage()).isZero();
        assertThat(c.profiledInStage()).as("tier 2/3 compilations in the stage").isZero();
    }
}

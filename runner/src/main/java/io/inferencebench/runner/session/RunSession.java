package io.inferencebench.runner.session;

import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.dataset.TokenCounter;
import io.inferencebench.runner.engine.EngineSettings;
import io.inferencebench.runner.engine.HeapHeadroom;
import io.inferencebench.runner.engine.JitPlan;
import io.inferencebench.runner.engine.LoadEngine;
import io.inferencebench.runner.engine.SelfWarmup;
import io.inferencebench.runner.engine.StageObserver;
import io.inferencebench.runner.engine.VocabularyCheck;
import io.inferencebench.runner.http.HttpTransport;
import io.inferencebench.runner.plan.ModelDiscovery;
import io.inferencebench.runner.plan.RunPlan;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * The client of one run, set up once and shared by every stage: the engine over the prepared
 * prompts (each request encoded once), the JVM readied for measuring, the self warm-up and the
 * warm-up requests. The command line's {@code run}, its {@code search} (every probe on the same
 * session) and a runner pod all go through it, so they measure with the same client; each road
 * keeps only how it words a failure ({@link Failures}) and what it prints.
 */
public final class RunSession {

    /** How long the self warm-up exercises the client against its local server. */
    private static final Duration SELF_WARMUP_BUDGET = Duration.ofMillis(1500);

    /**
     * How a road words what stops the set-up: the command line names its flags, a runner pod the
     * fields of its work order.
     *
     * @param unreachable the server did not answer the model list (a failure of the target)
     * @param redirected the model list was redirected
     * @param noModel no model was given and the server's list names none to choose
     * @param warmupJvmError the JVM failed during the warm-up requests
     * @param vocabularyRejected the server refused the prompts' token ids during the warm-up
     */
    public record Failures(
            Function<String, RuntimeException> unreachable,
            Function<String, RuntimeException> redirected,
            Function<String, RuntimeException> noModel,
            Function<VirtualMachineError, RuntimeException> warmupJvmError,
            Function<String, RuntimeException> vocabularyRejected) {}

    private final LoadEngine engine;
    private final HttpTransport transport;
    private final List<Prompt> prompts;
    private final EngineSettings settings;

    /**
     * Builds the engine over {@code prompts}; every prompt's request is encoded here once (as much
     * memory again as the prompts).
     *
     * @param tokenCounter counts the output tokens of non-streamed responses, or {@code null}
     * @param settings what the engine sends ({@link RunPlan#engine})
     */
    public RunSession(
            HttpTransport transport,
            List<Prompt> prompts,
            TokenCounter tokenCounter,
            EngineSettings settings,
            StageObserver observer) {
        this.engine = new LoadEngine(transport, prompts, tokenCounter, settings, observer);
        this.transport = transport;
        this.prompts = prompts;
        this.settings = settings;
    }

    /** The model the requests ask for: the plan's, else the one the server lists. */
    public static String model(
            RunPlan plan, HttpTransport transport, String baseUrl, Failures failures) {
        if (plan.model() != null) {
            return plan.model();
        }
        try {
            return ModelDiscovery.discover(transport, baseUrl);
        } catch (ModelDiscovery.Unreachable e) {
            throw failures.unreachable().apply(e.getMessage());
        } catch (ModelDiscovery.Redirected e) {
            throw failures.redirected().apply(e.getMessage());
        } catch (ModelDiscovery.NoModel e) {
            throw failures.noModel().apply(e.getMessage());
        }
    }

    /** The engine every stage of the run goes through. */
    public LoadEngine engine() {
        return engine;
    }

    /** The prepared prompts (at least one). */
    public List<Prompt> prompts() {
        return prompts;
    }

    /**
     * Readies the JVM for measuring: heap headroom, then the JIT plan, before the self warm-up (C2
     * compiling through the warm-up and then excluded was measured worse: docs/benchmarks.md,
     * "Pinned to one CPU").
     *
     * @return what the JIT plan changed, for the road to print, or {@code null}
     */
    public String prepareJvm() {
        HeapHeadroom.apply();
        return JitPlan.apply();
    }

    /**
     * Runs the client path against a throw-away local server ({@link SelfWarmup}); nothing is sent
     * to the target. A JVM error is let through for the road to report.
     *
     * @return the local exchanges completed
     */
    public long selfWarmup(SelfWarmup.Cancel cancel) {
        return SelfWarmup.run(
                settings.protocol(),
                settings.params(),
                transport,
                SELF_WARMUP_BUDGET,
                prompts.get(0).maxTokens(),
                cancel);
    }

    /**
     * Sends {@code count} warm-up requests to the target, whose results are left out; they also
     * tell whether the server accepts the prompts' token ids.
     *
     * @param maxConcurrency the run's cap on requests in flight, or {@code null}
     * @return the requests sent (recorded as excluded from the first stage)
     */
    public long warmUp(int count, Integer maxConcurrency, Failures failures) {
        VocabularyCheck vocabulary = new VocabularyCheck();
        long sent = engine.warmUp(count, maxConcurrency, vocabulary);
        if (engine.jvmError() != null) {
            throw failures.warmupJvmError().apply(engine.jvmError());
        }
        if (vocabulary.rejection() != null) {
            throw failures.vocabularyRejected()
                    .apply(
                            VocabularyCheck.message(
                                    vocabulary.rejection(), prompts.get(0).inputSource()));
        }
        return sent;
    }
}

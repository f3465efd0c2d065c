package io.inferencebench.runner.engine;

import io.inferencebench.profile.lpg.RunnerCpu;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.backend.Protocol;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.dataset.TokenCounter;
import io.inferencebench.runner.http.HttpTransport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;

/**
 * Runs load stages against one target.
 *
 * <p>Open loop: every event loop dispatches its own share of the absolute schedule (request i is
 * due at stage start + t_i and belongs to loop i mod loops). A loop sets a timer for its next due
 * instant and sends the request itself when it fires, between two batches of socket events. No
 * thread hands requests to another: on one CPU (a runner pod with a 1-CPU limit) a separate
 * dispatcher thread had to preempt the busy event loop at every due instant, and the scheduler's
 * time slice (milliseconds) was the p99 schedule lag. Schedule lag is due → send, so a loop that
 * falls behind shows up in the lag rather than silently lowering the rate. With a max-concurrency
 * cap a loop whose next request finds no free slot waits for one; slots go to the waiting request
 * due first, and that wait is recorded as slot wait and is part of the lag.
 *
 * <p>Closed loop: {@code concurrency} requests start at once and each completion starts the next
 * request on the same event loop.
 *
 * <p>Conversations ({@link Conversations}): sessions of turns instead of requests, {@code
 * numPrompts} counting sessions, run by a {@link SessionDriver}: in a closed loop {@code
 * concurrency} users each take the next session when their last one ends; at a rate, sessions start
 * at the drawn schedule's instants as requests otherwise would.
 *
 * <p>The engine prepares each stage (recorder, windows, connections, its anchored start) and reads
 * its result; a {@link StageRun} sends it.
 *
 * <p>A {@link VirtualMachineError} (out of memory, ...) on an event loop cancels the stage like
 * {@link #cancel()} and is kept for {@link #jvmError()}: the caller ends the run, keeping the
 * stages that finished. It is never counted as a failed request.
 */
public final class LoadEngine {

    static final Logger LOG = Logger.getLogger(LoadEngine.class.getName());

    /** Most connections opened ahead of a stage (more are opened on demand). */
    private static final long MAX_PRECONNECT = 1024;

    /**
     * How far ahead of "now" a stage's schedule starts, once every event loop has answered: the
     * loops' first timers are set within microseconds of it.
     */
    private static final long STAGE_LEAD_NANOS = 1_000_000;

    /** Longest wait before a measured stage for the JIT compiler to finish its queue. */
    private static final Duration COMPILER_QUIET_MAX = Duration.ofSeconds(2);

    /** What the progress display and live metrics can read while a stage runs. */
    public static final class Live {
        public final StagePlan plan;
        public final StageRecorder recorder;

        /** Stage start (nanoTime): the first due instant of an open-loop schedule. */
        public volatile long startNanos;

        final AtomicLong issued = new AtomicLong();

        /** Issued requests a cancel caught before they were written. */
        final AtomicLong unsent = new AtomicLong();

        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicInteger inFlightPeak = new AtomicInteger();

        Live(StagePlan plan, StageRecorder recorder, long startNanos) {
            this.plan = plan;
            this.recorder = recorder;
            this.startNanos = startNanos;
        }

        public long issued() {
            return issued.get();
        }

        public int inFlight() {
            return inFlight.get();
        }

        /**
         * A request was handed to the transport (after its index was claimed in {@link #issued}).
         */
        void started() {
            int now = inFlight.incrementAndGet();
            int peak;
            while (now > (peak = inFlightPeak.get())) {
                if (inFlightPeak.compareAndSet(peak, now)) {
                    break;
                }
            }
        }
    }

    final HttpTransport transport;
    private final RunnerCpuMeter cpuMeter = new RunnerCpuMeter();
    final Protocol protocol;
    final GenerationParams params;
    private final String path;
    final List<Prompt> prompts;
    final HttpTransport.PreparedRequest[] requests;
    final TokenCounter tokenCounter;
    private final Slo slo;
    private final int sampleCap;
    final long seed;
    private final Duration requestTimeout;
    private final StageObserver observer;
    private final long epochAnchor;
    private final long nanoAnchor;
    private final String accept;
    final Conversations conversations;
    private final ModelMix models;

    /** The model index each prompt's request asks for, or {@code null} without a mix. */
    final int[] modelOf;

    private boolean settleBeforeStage = true;
    private boolean selfWarmup;
    private volatile boolean cancelled;
    private volatile StageRun current;
    private final java.util.concurrent.atomic.AtomicReference<VirtualMachineError> jvmError =
            new java.util.concurrent.atomic.AtomicReference<>();

    /**
     * An engine over {@code prompts}, each encoded once here as {@code settings} asks.
     *
     * @param tokenCounter counts output tokens of non-streamed responses, or {@code null}
     */
    public LoadEngine(
            HttpTransport transport,
            List<Prompt> prompts,
            TokenCounter tokenCounter,
            EngineSettings settings,
            StageObserver observer) {
        if (prompts.isEmpty()) {
            throw new IllegalArgumentException("the dataset yielded no prompts");
        }
        this.transport = transport;
        this.protocol = settings.protocol();
        this.params = settings.params();
        this.path = settings.path();
        this.prompts = List.copyOf(prompts);
        this.tokenCounter = tokenCounter;
        this.slo = settings.slo();
        this.sampleCap = settings.sampleCap();
        this.seed = settings.seed();
        this.requestTimeout = settings.requestTimeout();
        this.conversations = settings.conversations();
        if (conversations != null && conversations.sessions(prompts.size()) == 0) {
            throw new IllegalArgumentException(
                    "conversations of "
                            + conversations.turns()
                            + " turns need at least that many prompts, got "
                            + prompts.size());
        }
        this.observer = observer;
        this.accept = params.stream() ? "text/event-stream" : "application/json";
        // Requests are encoded once, before any clock starts, so the hot path only wraps bytes.
        this.models = settings.models();
        this.requests = new HttpTransport.PreparedRequest[this.prompts.size()];
        this.modelOf = models == null ? null : new int[requests.length];
        for (int i = 0; i < requests.length; i++) {
            GenerationParams asked = params;
            if (models != null) {
                // A session keeps its model: the draw is by session, else by prompt.
                long key = conversations != null ? i / conversations.turns() : i;
                modelOf[i] = models.draw(seed, key);
                asked = params.withModel(models.names().get(modelOf[i]));
            }
            try {
                requests[i] =
                        transport.preparePost(
                                path, accept, protocol.requestBody(this.prompts.get(i), asked));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        Instant now = Instant.now();
        this.nanoAnchor = System.nanoTime();
        this.epochAnchor = now.getEpochSecond() * 1_000_000_000L + now.getNano();
        transport.onJvmError(this::jvmError);
    }

    /**
     * The JVM failed on a loop: the first such error is kept and the engine cancelled (the running
     * stage returns its partial result at once, no later stage sends anything). Callable from any
     * thread.
     */
    void jvmError(VirtualMachineError error) {
        if (jvmError.compareAndSet(null, error)) {
            cancel();
        }
    }

    /**
     * The JVM error that stopped this engine, or {@code null}; check after {@link #runStage} or
     * {@link #warmUp} returns.
     */
    public VirtualMachineError jvmError() {
        return jvmError.get();
    }

    /** Marks this engine's stages as the runner's self-warm-up in flight recordings. */
    void setSelfWarmup() {
        this.selfWarmup = true;
    }

    /**
     * Whether {@link #runStage} settles the JVM first (see {@link #settle}); on by default, off for
     * throw-away engines and for callers that settle before their own start instant (a barrier the
     * stage must start on).
     */
    public void setSettleBeforeStage(boolean settle) {
        this.settleBeforeStage = settle;
    }

    /**
     * Collects garbage now, while nothing is measured, instead of pausing in the middle of a stage
     * (the first full collection also raises the metaspace threshold that class loading of the
     * warm-up would otherwise trip mid-stage), then waits at most {@code max} for the JIT compiler
     * to drain its queue: compilations queued by the warm-ups, the connection set-up or the
     * previous stage would otherwise run in the stage's first milliseconds, on the CPU its event
     * loops need.
     */
    public static void settle(Duration max) {
        System.gc();
        SelfWarmup.awaitCompilerQuiet(max);
    }

    /**
     * Sends {@code count} warm-up requests (all at once, at most {@code maxConcurrency} in flight)
     * and waits for them; their results are discarded.
     *
     * @return the number of warm-up requests sent
     */
    public long warmUp(int count, Integer maxConcurrency) {
        return warmUp(count, maxConcurrency, StageObserver.NONE);
    }

    /** {@link #warmUp(int, Integer)}, telling {@code observer} how each request ended. */
    public long warmUp(int count, Integer maxConcurrency, StageObserver observer) {
        if (count <= 0) {
            return 0;
        }
        StagePlan plan =
                new StagePlan(
                        -1,
                        Double.POSITIVE_INFINITY,
                        maxConcurrency == null ? count : Math.min(count, maxConcurrency),
                        count,
                        null,
                        null,
                        ArrivalKind.CONSTANT,
                        1.0,
                        null);
        StageResult ignored = run(plan, true, observer);
        return ignored.sent;
    }

    /**
     * Cancels the running stage and every later one: no new request is sent, requests in flight are
     * aborted (their connections reset) and counted as cancelled, not as failures, and {@link
     * #runStage} returns the partial result (marked {@link StageResult#partial}) as soon as the
     * event loops have processed the aborts. Callable from any thread, any number of times.
     */
    public void cancel() {
        cancelled = true;
        StageRun run = current;
        if (run != null) {
            run.cancel();
        }
    }

    /** Whether {@link #cancel()} was called. */
    public boolean isCancelled() {
        return cancelled;
    }

    /**
     * Runs one stage to completion (every request finished or timed out), or until {@link
     * #cancel()}.
     */
    public StageResult runStage(StagePlan plan) {
        if (settleBeforeStage && !cancelled) {
            // Connections first: their set-up queues compilations too.
            prepareStage(plan);
            settle(COMPILER_QUIET_MAX);
        }
        return run(plan, false, observer);
    }

    private StageResult run(StagePlan plan, boolean warmup, StageObserver stageObserver) {
        StageResult result = new StageResult(sampleCap);
        result.stageIndex = plan.index();
        result.requestedRate = plan.closedLoop() ? Double.POSITIVE_INFINITY : plan.requestRate();
        if (!warmup && conversations != null && !plan.closedLoop()) {
            // Sessions start at the rate; in steady state their turns are requested this often.
            result.requestedRate = plan.requestRate() * conversations.turns();
        }
        result.concurrency = plan.closedLoop() ? plan.concurrency() : plan.maxConcurrency();
        // A conversation stage counts sessions; the requests it plans are their turns.
        result.numPromptsRequested =
                conversations != null && !warmup
                        ? plan.numPrompts() * conversations.turns()
                        : plan.numPrompts();
        StageRecorder recorder =
                new StageRecorder(
                        result,
                        slo,
                        !plan.closedLoop(),
                        !plan.closedLoop() && plan.maxConcurrency() != null,
                        epochAnchor,
                        nanoAnchor,
                        stageObserver);
        if (!cancelled) {
            prepareStage(plan);
        }
        StageEvent event = new StageEvent();
        event.stage = plan.index() + 1;
        event.requestRate = plan.closedLoop() ? Double.NaN : plan.requestRate();
        event.kind = warmup ? "warm-up" : selfWarmup ? "self-warm-up" : "measured";
        event.begin();
        Live live = new Live(plan, recorder, System.nanoTime());
        stageObserver.onStageStart(plan, recorder, live);
        // Drawn before the schedule is anchored: the draw is off the stage's clock.
        RampWindows windows = warmup ? null : RampWindows.of(plan, () -> schedule(plan), sampleCap);
        recorder.rampWindows(windows);
        if (!warmup && conversations != null) {
            recorder.conversationTurns(
                    new ConversationTurns(
                            conversations,
                            plan.closedLoop() ? null : plan.requestRate(),
                            sampleCap,
                            epochAnchor,
                            nanoAnchor));
        }
        if (!warmup && models != null) {
            recorder.modelStats(new ModelStats(models, slo, sampleCap));
        }
        RunnerCpuMeter.Mark cpuAtStart = cpuMeter.mark();
        AddressShares addressesAtStart = AddressShares.mark(transport);
        // The schedule is anchored last: every loop has just run a task of this stage (a loop
        // slow to wake up on a loaded machine is not charged as lag to the first requests), and
        // nothing else runs on this thread before the first due instant.
        transport.awaitLoops(Duration.ofSeconds(2));
        long start = System.nanoTime() + STAGE_LEAD_NANOS;
        live.startNanos = start;
        if (windows != null) {
            windows.startAt(start);
        }
        StageRun run = new StageRun(this, plan, live, warmup, start);
        current = run;
        if (cancelled) {
            // Cancelled between stages: this one sends nothing.
            run.cancel();
        }
        run.begin();
        try {
            run.dispatched.await();
            long guard = requestTimeout.toMillis() + 30_000;
            if (!run.done.await(guard, TimeUnit.MILLISECONDS)) {
                LOG.warning(
                        "stage "
                                + plan.index()
                                + ": "
                                + (live.issued() - recorder.finished())
                                + " requests did not finish within the request timeout; "
                                + "reporting the finished ones");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        current = null;
        RunnerCpu cpu = cpuMeter.since(cpuAtStart);
        stageObserver.onStageEnd(plan);
        StageResult finished =
                recorder.finish(
                        live.issued() - live.unsent.get(), live.inFlightPeak.get(), run.cancelled);
        finished.runnerCpu = cpu;
        if (!warmup) {
            recordDue(plan, run, recorder);
            addressesAtStart.into(finished, run.start);
        }
        event.sent = finished.sent;
        event.commit();
        return finished;
    }

    /**
     * Records the schedule the stage drew (requests due and their first and last due instants):
     * what its delivery is judged against. Drawn again after the stage, off the hot path.
     */
    private void recordDue(StagePlan plan, StageRun run, StageRecorder recorder) {
        if (plan.closedLoop() || Double.isInfinite(plan.requestRate())) {
            return;
        }
        long window = run.deadline == Long.MAX_VALUE ? Long.MAX_VALUE : run.deadline - run.start;
        long cancelledAt = run.cancelledAt;
        if (cancelledAt != 0) {
            window = Math.min(window, Math.max(0, cancelledAt - run.start));
        }
        ArrivalSchedule.Due due = schedule(plan).due(run.limit, window);
        recorder.recordDue(due.count(), run.start, run.start + due.lastOffsetNanos());
    }

    /** A stage's arrival schedule, as every loop of it draws it. */
    ArrivalSchedule schedule(StagePlan plan) {
        return ArrivalSchedule.of(plan, seed * 1_000_003L + plan.index());
    }

    /**
     * Opens the keep-alive connections {@code plan} will start with (at most 2 s). {@link
     * #runStage} does it too; calling it earlier (e.g. before a start barrier) keeps the connection
     * set-up out of the time between the barrier and the first request.
     */
    public void prepareStage(StagePlan plan) {
        transport.preconnect(connectionsToOpen(plan), Duration.ofSeconds(2));
    }

    /**
     * Keep-alive connections per loop to open before a stage starts, so that its first requests do
     * not wait for (and its event loops do not spend their time on) connection set-up: enough for
     * the requests of the stage's first 100 ms, or its concurrency.
     */
    int connectionsToOpen(StagePlan plan) {
        long total;
        if (plan.closedLoop()) {
            total = plan.concurrency();
        } else {
            total =
                    Double.isInfinite(plan.requestRate())
                            ? MAX_PRECONNECT
                            : (long) Math.ceil(plan.requestRate() * 0.1) + 2;
            if (plan.maxConcurrency() != null) {
                total = Math.min(total, plan.maxConcurrency());
            }
        }
        if (plan.numPrompts() > 0) {
            total = Math.min(total, plan.numPrompts());
        }
        total = Math.min(total, MAX_PRECONNECT);
        return (int) ((total + transport.loops() - 1) / transport.loops());
    }
}

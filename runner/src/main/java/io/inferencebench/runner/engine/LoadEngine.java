package io.inferencebench.runner.engine;

import io.inferencebench.profile.lpg.RunnerCpu;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.backend.Protocol;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.dataset.TokenCounter;
import io.inferencebench.runner.http.HttpTransport;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
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
 * <p>A {@link VirtualMachineError} (out of memory, ...) on an event loop cancels the stage like
 * {@link #cancel()} and is kept for {@link #jvmError()}: the caller ends the run, keeping the
 * stages that finished. It is never counted as a failed request.
 */
public final class LoadEngine {

    private static final Logger LOG = Logger.getLogger(LoadEngine.class.getName());

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

    private final HttpTransport transport;
    private final RunnerCpuMeter cpuMeter = new RunnerCpuMeter();
    private final Protocol protocol;
    private final GenerationParams params;
    private final String path;
    private final List<Prompt> prompts;
    private final HttpTransport.PreparedRequest[] requests;
    private final TokenCounter tokenCounter;
    private final Slo slo;
    private final int sampleCap;
    private final long seed;
    private final Duration requestTimeout;
    private final StageObserver observer;
    private final long epochAnchor;
    private final long nanoAnchor;
    private final String accept;
    private final Conversations conversations;
    private final ModelMix models;

    /** The model index each prompt's request asks for, or {@code null} without a mix. */
    private final int[] modelOf;

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
        StageRun run = new StageRun(plan, live, warmup, start);
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
    private ArrivalSchedule schedule(StagePlan plan) {
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

    /** Mutable state of one running stage. */
    private final class StageRun {
        final StagePlan plan;
        final Live live;
        final boolean warmup;
        final long start;
        final long deadline;
        final long limit;
        final SlotGate slots;
        final LoopShare[] shares;
        final CountDownLatch dispatched = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);
        final AtomicInteger sharesLeft;
        volatile boolean dispatchDone;
        volatile boolean cancelled;

        /** When the stage was cancelled (nanoTime); 0 when it was not. */
        volatile long cancelledAt;

        /** The stage's sessions ({@link Conversations}), or {@code null} for one of requests. */
        final SessionDriver sessions;

        /** Heads of the per-loop lists of requests in flight (each only touched on its loop). */
        final RequestExecution[] inFlightHeads = new RequestExecution[transport.loops()];

        StageRun(StagePlan plan, Live live, boolean warmup, long start) {
            this.plan = plan;
            this.live = live;
            this.warmup = warmup;
            this.start = start;
            this.deadline =
                    plan.duration() == null ? Long.MAX_VALUE : start + plan.duration().toNanos();
            this.limit = plan.numPrompts() > 0 ? plan.numPrompts() : Long.MAX_VALUE;
            int loops = transport.loops();
            this.slots =
                    !plan.closedLoop() && plan.maxConcurrency() != null
                            ? new SlotGate(plan.maxConcurrency(), loops, this::grantSlot)
                            : null;
            this.shares = new LoopShare[plan.closedLoop() ? 0 : loops];
            for (int loop = 0; loop < shares.length; loop++) {
                shares[loop] = new LoopShare(loop);
            }
            this.sharesLeft = new AtomicInteger(shares.length);
            if (conversations != null && !warmup && slots != null) {
                throw new IllegalArgumentException(
                        "stage "
                                + (plan.index() + 1)
                                + ": conversations have no cap on requests in flight");
            }
            this.sessions =
                    conversations != null && !warmup
                            ? new SessionDriver(
                                    new Hooks(), conversations, transport, prompts.size(), seed)
                            : null;
        }

        /** Starts dispatching (open loop) or the first requests (closed loop). */
        /** A slot freed for {@code loop}'s waiting request: it is sent on that loop. */
        private void grantSlot(int loop) {
            transport.execute(loop, shares[loop]::granted);
        }

        void begin() {
            if (plan.closedLoop()) {
                startClosedLoop();
                return;
            }
            for (LoopShare share : shares) {
                transport.execute(share.loop, share::next);
            }
        }

        void startClosedLoop() {
            int loops = transport.loops();
            // Never more workers than requests to send: each worker beyond the prompts would only
            // be a task that finds nothing left to claim (a concurrency of 2^31 - 1 with 5 prompts
            // queued tasks for minutes at 100 % CPU, the interrupt unheard meanwhile).
            long workers = Math.min(plan.concurrency(), limit);
            for (long c = 0; c < workers && !dispatchDone && !cancelled; c++) {
                int loop = (int) (c % loops);
                transport.execute(
                        loop,
                        sessions != null
                                ? () -> guarded(() -> sessions.nextSession(loop))
                                : () -> issueNext(loop));
            }
            // The loops decide when the stage is exhausted.
        }

        /** Closed loop: claims the next request index, or ends dispatching when none is left. */
        void issueNext(int loop) {
            try {
                while (true) {
                    long current = live.issued.get();
                    if (current >= limit || System.nanoTime() >= deadline || cancelled) {
                        markDispatchDone();
                        return;
                    }
                    if (live.issued.compareAndSet(current, current + 1)) {
                        live.started();
                        long now = System.nanoTime();
                        send(loop, current, now, 0, now);
                        return;
                    }
                }
            } catch (VirtualMachineError e) {
                // A task's throwable would only be logged by Netty, the stage left waiting.
                jvmError(e);
            }
        }

        void send(int loop, long index, long due, long slotWait, long dispatched) {
            int p =
                    conversations == null
                            ? (int) (index % prompts.size())
                            // A warm-up of conversations sends sessions' first turns.
                            : (int)
                                    (index
                                            % conversations.sessions(prompts.size())
                                            * conversations.turns());
            post(loop, p, -1, due, slotWait, dispatched, finished -> onFinished(loop, finished));
        }

        /**
         * Sends prompt {@code p}; {@code completion} hears how it ended.
         *
         * @param turn its turn index in a session, or -1
         */
        void post(
                int loop,
                int p,
                int turn,
                long due,
                long slotWait,
                long dispatched,
                RequestExecution.Completion completion) {
            RequestExecution execution =
                    new RequestExecution(
                            prompts.get(p),
                            warmup,
                            due,
                            slotWait,
                            protocol,
                            params,
                            tokenCounter,
                            completion);
            execution.turn = turn;
            execution.model = modelOf == null ? -1 : modelOf[p];
            if (cancelled) {
                live.unsent.incrementAndGet();
                execution.onCancelled(System.nanoTime());
                return;
            }
            execution.dispatchedNanos = dispatched;
            execution.sendNanos = System.nanoTime();
            RequestExecution head = inFlightHeads[loop];
            execution.nextInFlight = head;
            if (head != null) {
                head.previousInFlight = execution;
            }
            inFlightHeads[loop] = execution;
            execution.exchange = transport.post(loop, requests[p], execution);
        }

        void unlink(int loop, RequestExecution e) {
            if (e.previousInFlight != null) {
                e.previousInFlight.nextInFlight = e.nextInFlight;
            } else if (inFlightHeads[loop] == e) {
                inFlightHeads[loop] = e.nextInFlight;
            }
            if (e.nextInFlight != null) {
                e.nextInFlight.previousInFlight = e.previousInFlight;
            }
            e.previousInFlight = null;
            e.nextInFlight = null;
        }

        /** Stops dispatching and aborts what is in flight, on each loop. */
        synchronized void cancel() {
            if (cancelled) {
                return;
            }
            cancelledAt = System.nanoTime();
            cancelled = true;
            for (int loop = 0; loop < inFlightHeads.length; loop++) {
                int owner = loop;
                LoopShare share = owner < shares.length ? shares[owner] : null;
                transport.execute(
                        owner,
                        () -> {
                            try {
                                if (share != null) {
                                    share.next();
                                }
                                RequestExecution e = inFlightHeads[owner];
                                while (e != null) {
                                    RequestExecution next = e.nextInFlight;
                                    if (e.exchange != null) {
                                        e.exchange.cancel();
                                    }
                                    e = next;
                                }
                            } catch (VirtualMachineError e) {
                                jvmError(e);
                            }
                        });
            }
            if (plan.closedLoop() || sessions != null) {
                // Sessions in their think time send nothing more.
                markDispatchDone();
            }
        }

        void onFinished(int loop, RequestExecution execution) {
            unlink(loop, execution);
            live.inFlight.decrementAndGet();
            if (slots != null) {
                slots.release();
            }
            live.recorder.record(execution);
            if (plan.closedLoop() && !dispatchDone && sessions == null) {
                // Queued behind the current callback so the finished request's connection is back
                // in the pool first; issuing inline would open a new connection every time.
                transport.execute(loop, () -> issueNext(loop));
                return;
            }
            checkDone();
        }

        /** Runs {@code task} on a loop, a JVM failure ending the run rather than the loop. */
        void guarded(Runnable task) {
            try {
                task.run();
            } catch (VirtualMachineError e) {
                jvmError(e);
            }
        }

        /** What this stage offers its {@link SessionDriver}. */
        private final class Hooks implements SessionDriver.Stage {
            @Override
            public boolean closedLoop() {
                return plan.closedLoop();
            }

            @Override
            public boolean cancelled() {
                return cancelled;
            }

            @Override
            public long deadline() {
                return deadline;
            }

            @Override
            public long limit() {
                return limit;
            }

            @Override
            public Live live() {
                return live;
            }

            @Override
            public void post(
                    int loop, int p, int turn, long due, RequestExecution.Completion completion) {
                live.issued.incrementAndGet();
                live.started();
                StageRun.this.post(loop, p, turn, due, 0, System.nanoTime(), completion);
            }

            @Override
            public void finished(int loop, RequestExecution execution) {
                onFinished(loop, execution);
            }

            @Override
            public void dispatchDone() {
                markDispatchDone();
            }

            @Override
            public void jvmError(VirtualMachineError error) {
                LoadEngine.this.jvmError(error);
            }
        }

        void markDispatchDone() {
            if (!dispatchDone) {
                dispatchDone = true;
                dispatched.countDown();
            }
            checkDone();
        }

        void checkDone() {
            if (dispatchDone && live.recorder.finished() == live.issued.get()) {
                done.countDown();
            }
        }

        /**
         * One event loop's share of an open-loop schedule: the requests whose index is {@code loop}
         * modulo the number of loops. Only touched on that loop.
         */
        private final class LoopShare {
            final int loop;
            final int stride = transport.loops();
            final ArrivalSchedule schedule;

            /** Blocked time of this loop waiting for slots, for the slot wait of its requests. */
            final BlockedIntervals slotBlocked = new BlockedIntervals();

            long index;
            long due;
            boolean finished;

            /** A timer for {@link #due} is set (or a slot grant is on its way). */
            boolean waiting;

            /** When this loop began waiting for a slot; 0 when it is not waiting for one. */
            long slotWaitStart;

            ScheduledFuture<?> timer;

            LoopShare(int loop) {
                this.loop = loop;
                this.schedule = Double.isInfinite(plan.requestRate()) ? null : schedule(plan);
                // The schedule is one sequence for the whole stage; this loop takes every
                // stride-th offset of it, starting at its own index.
                this.index = loop;
                if (schedule != null) {
                    for (int i = 0; i < loop; i++) {
                        schedule.nextOffsetNanos();
                    }
                }
                this.due = start + (schedule == null ? 0 : schedule.nextOffsetNanos());
            }

            /**
             * Sends every request of this share that is due, then sets a timer for the next one.
             * Runs on the loop: from {@link #begin}, a timer, a slot grant or a cancel.
             */
            void next() {
                if (finished) {
                    return;
                }
                try {
                    long now = System.nanoTime();
                    while (true) {
                        if (cancelled || index >= limit || due >= deadline) {
                            finish();
                            return;
                        }
                        if (due > now) {
                            if (!waiting) {
                                waiting = true;
                                timer = transport.schedule(loop, this::timerFired, due - now);
                            }
                            return;
                        }
                        long slotWait = 0;
                        if (slots != null) {
                            if (slotWaitStart == 0) {
                                if (!slots.acquire(loop, due)) {
                                    slotWaitStart = now;
                                    waitForSlotUntilDeadline(now);
                                    return;
                                }
                            } else {
                                // Resumed by a grant: the slot is ours.
                                slotBlocked.add(slotWaitStart, now);
                                slotWaitStart = 0;
                            }
                            slotWait = slotBlocked.blockedSince(due);
                        }
                        // A request due inside the window is sent even when the loop reaches it
                        // late: dropping it would hide exactly the lag the profile must report.
                        if (sessions != null) {
                            sessions.startSession(loop, index, due);
                        } else {
                            live.issued.incrementAndGet();
                            live.started();
                            send(loop, index, due, slotWait, now);
                        }
                        index += stride;
                        due = start + nextOffset();
                        now = System.nanoTime();
                    }
                } catch (VirtualMachineError e) {
                    // Not a bug of the dispatcher: the run ends (the caller says why).
                    finish();
                    jvmError(e);
                } catch (RuntimeException | Error e) {
                    // Never leave the stage waiting for a share that died: report and stop it.
                    LOG.log(Level.SEVERE, "stage " + plan.index() + ": dispatch failed", e);
                    finish();
                    throw e;
                }
            }

            private long nextOffset() {
                if (schedule == null) {
                    return 0;
                }
                for (int i = 1; i < stride; i++) {
                    schedule.nextOffsetNanos();
                }
                return schedule.nextOffsetNanos();
            }

            private void timerFired() {
                timer = null;
                waiting = false;
                next();
            }

            /** Called on the loop when {@link SlotGate} handed this share a slot. */
            void granted() {
                if (finished) {
                    // Stopped meanwhile (deadline or cancel): the slot goes back.
                    slots.release();
                    return;
                }
                if (timer != null) {
                    timer.cancel(false);
                    timer = null;
                }
                waiting = false;
                next();
            }

            /** A stage with a duration stops waiting for a slot at its end. */
            private void waitForSlotUntilDeadline(long now) {
                if (deadline == Long.MAX_VALUE) {
                    return;
                }
                timer =
                        transport.schedule(
                                loop,
                                () -> {
                                    timer = null;
                                    if (!finished && slots.withdraw(loop)) {
                                        finish();
                                    }
                                },
                                Math.max(0, deadline - now));
            }

            private void finish() {
                if (finished) {
                    return;
                }
                finished = true;
                if (timer != null) {
                    timer.cancel(false);
                    timer = null;
                }
                if (slotWaitStart != 0 && slots.withdraw(loop)) {
                    slotWaitStart = 0;
                }
                if (sharesLeft.decrementAndGet() == 0) {
                    if (sessions != null) {
                        sessions.noMoreStarts();
                    } else {
                        markDispatchDone();
                    }
                }
            }
        }
    }
}

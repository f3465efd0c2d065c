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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Logger;

/**
 * Runs load stages against one target.
 *
 * <p>Open loop: a dedicated dispatcher thread walks the absolute schedule (request i due at stage
 * start + t_i). It parks until shortly before the due instant and spins the last stretch, because
 * {@link LockSupport#parkNanos} alone oversleeps by tens of microseconds; then it hands the request
 * to an event loop, which takes the send instant. Schedule lag is due → send, so a dispatcher or
 * event loop that falls behind shows up in the lag rather than silently lowering the rate. With a
 * max-concurrency cap the dispatcher blocks for a free slot in FIFO order; that wait is recorded as
 * slot wait and is part of the lag.
 *
 * <p>Closed loop: {@code concurrency} requests start at once and each completion starts the next
 * request on the same event loop.
 */
public final class LoadEngine {

    private static final Logger LOG = Logger.getLogger(LoadEngine.class.getName());
    private static final long DEFAULT_SPIN_NANOS =
            Long.getLong("inferencebench.spinMicros", 50) * 1000;

    /** Most connections opened ahead of a stage (more are opened on demand). */
    private static final long MAX_PRECONNECT = 1024;

    /** Head start of the dispatcher over the first due instant when it had to re-anchor. */
    private static final long WAKE_MARGIN_NANOS = 20_000;

    /** How far ahead of "now" a stage's schedule starts, once its dispatcher thread is waiting. */
    private static final long STAGE_LEAD_NANOS = 1_000_000;

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
    private long spinNanos = DEFAULT_SPIN_NANOS;
    private boolean collectBeforeStage = true;
    private volatile boolean cancelled;
    private volatile StageRun current;

    public LoadEngine(
            HttpTransport transport,
            Protocol protocol,
            GenerationParams params,
            String path,
            List<Prompt> prompts,
            TokenCounter tokenCounter,
            Slo slo,
            int sampleCap,
            long seed,
            Duration requestTimeout,
            StageObserver observer) {
        if (prompts.isEmpty()) {
            throw new IllegalArgumentException("the dataset yielded no prompts");
        }
        this.transport = transport;
        this.protocol = protocol;
        this.params = params;
        this.path = path;
        this.prompts = List.copyOf(prompts);
        this.tokenCounter = tokenCounter;
        this.slo = slo;
        this.sampleCap = sampleCap;
        this.seed = seed;
        this.requestTimeout = requestTimeout;
        this.observer = observer;
        this.accept = params.stream() ? "text/event-stream" : "application/json";
        // Requests are encoded once, before any clock starts, so the hot path only wraps bytes.
        this.requests = new HttpTransport.PreparedRequest[this.prompts.size()];
        for (int i = 0; i < requests.length; i++) {
            try {
                requests[i] =
                        transport.preparePost(
                                path, accept, protocol.requestBody(this.prompts.get(i), params));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        Instant now = Instant.now();
        this.nanoAnchor = System.nanoTime();
        this.epochAnchor = now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /** Whether to run a GC before each stage (on by default; off for throw-away engines). */
    public void setCollectBeforeStage(boolean collect) {
        this.collectBeforeStage = collect;
    }

    /** How long the dispatcher spins before a due instant instead of parking. */
    public void setSpinNanos(long spinNanos) {
        this.spinNanos = Math.max(0, spinNanos);
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
                        1.0);
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
        // Collect now, while nothing is measured, instead of pausing in the middle of the stage
        // (the first full collection also raises the metaspace threshold that class loading of
        // the warm-up would otherwise trip mid-stage).
        if (collectBeforeStage) {
            System.gc();
        }
        return run(plan, false, observer);
    }

    private StageResult run(StagePlan plan, boolean warmup, StageObserver stageObserver) {
        StageResult result = new StageResult(sampleCap);
        result.stageIndex = plan.index();
        result.requestedRate = plan.closedLoop() ? Double.POSITIVE_INFINITY : plan.requestRate();
        result.concurrency = plan.closedLoop() ? plan.concurrency() : plan.maxConcurrency();
        result.numPromptsRequested = plan.numPrompts();
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
        // The dispatcher thread is started and waiting before the schedule is anchored, and the
        // first due instant lies a little ahead: thread start-up (a millisecond, far more on a
        // loaded machine) would otherwise be charged as lag to the first requests of every stage.
        // If the thread still wakes after that instant, it re-anchors the schedule at its wake-up.
        CountDownLatch go = new CountDownLatch(1);
        StageRun[] handed = new StageRun[1];
        Thread dispatcher =
                Thread.ofPlatform()
                        .name("ib-dispatcher-" + plan.index())
                        .priority(Thread.MAX_PRIORITY)
                        .unstarted(
                                () -> {
                                    awaitUninterruptibly(go);
                                    StageRun r = handed[0];
                                    // Woken after the planned start (a loaded machine): the
                                    // schedule begins now instead, so the wake-up is not
                                    // charged to the first requests as lag.
                                    long ready = System.nanoTime() + WAKE_MARGIN_NANOS;
                                    if (ready > r.start) {
                                        r.anchor(ready);
                                    }
                                    if (plan.closedLoop()) {
                                        r.startClosedLoop();
                                    } else {
                                        r.dispatchOpenLoop();
                                    }
                                });
        dispatcher.start();
        awaitWaiting(dispatcher);
        long start = System.nanoTime() + STAGE_LEAD_NANOS;
        Live live = new Live(plan, recorder, start);
        StageRun run = new StageRun(plan, live, warmup, start);
        run.dispatcher = dispatcher;
        handed[0] = run;
        stageObserver.onStageStart(plan, recorder, live);
        current = run;
        if (cancelled) {
            // Cancelled between stages: this one sends nothing.
            run.cancel();
        }
        RunnerCpuMeter.Mark cpuAtStart = cpuMeter.mark();
        go.countDown();
        try {
            dispatcher.join();
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
        return finished;
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

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            // A cancel interrupted the wait; the dispatcher sees it and stops.
            Thread.currentThread().interrupt();
        }
    }

    /** Waits (at most 200 ms) until a freshly started thread is parked on its start latch. */
    private static void awaitWaiting(Thread thread) {
        long end = System.nanoTime() + 200_000_000L;
        while (thread.getState() != Thread.State.WAITING && System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    /**
     * When the dispatcher was blocked waiting for a max-concurrency slot. A request's slot wait is
     * all blocked time between its due instant and its dispatch, including time spent queued behind
     * earlier requests that were waiting for slots (FIFO), not only its own wait. Due instants
     * never decrease, so intervals ending before the current due instant are dropped.
     */
    static final class BlockedIntervals {
        private final java.util.ArrayDeque<long[]> intervals = new java.util.ArrayDeque<>();
        private long total;

        void add(long start, long end) {
            intervals.addLast(new long[] {start, end, total});
            total += end - start;
        }

        long blockedSince(long due) {
            while (!intervals.isEmpty() && intervals.peekFirst()[1] <= due) {
                intervals.removeFirst();
            }
            if (intervals.isEmpty()) {
                return 0;
            }
            long[] first = intervals.peekFirst();
            return total - first[2] - Math.max(0, due - first[0]);
        }
    }

    /** Mutable state of one running stage. */
    private final class StageRun {
        final StagePlan plan;
        final Live live;
        final boolean warmup;
        volatile long start;
        volatile long deadline;
        final Semaphore slots;
        final CountDownLatch done = new CountDownLatch(1);
        final BlockedIntervals slotBlocked = new BlockedIntervals();
        volatile boolean dispatchDone;
        volatile boolean cancelled;
        volatile Thread dispatcher;

        /** Heads of the per-loop lists of requests in flight (each only touched on its loop). */
        final RequestExecution[] inFlightHeads = new RequestExecution[transport.loops()];

        StageRun(StagePlan plan, Live live, boolean warmup, long start) {
            this.plan = plan;
            this.live = live;
            this.warmup = warmup;
            anchor(start);
            this.slots =
                    !plan.closedLoop() && plan.maxConcurrency() != null
                            ? new Semaphore(plan.maxConcurrency(), true)
                            : null;
        }

        /** Sets the stage start; only before the first request is dispatched. */
        void anchor(long startNanos) {
            this.start = startNanos;
            this.deadline =
                    plan.duration() == null
                            ? Long.MAX_VALUE
                            : startNanos + plan.duration().toNanos();
            live.startNanos = startNanos;
        }

        void dispatchOpenLoop() {
            long start = this.start;
            long deadline = this.deadline;
            ArrivalSchedule schedule =
                    Double.isInfinite(plan.requestRate())
                            ? null
                            : new ArrivalSchedule(
                                    plan.requestRate(),
                                    plan.arrival(),
                                    plan.burstiness(),
                                    seed * 1_000_003L + plan.index());
            int loops = transport.loops();
            long limit = plan.numPrompts() > 0 ? plan.numPrompts() : Long.MAX_VALUE;
            try {
                for (long i = 0; i < limit && !cancelled; i++) {
                    long offset = schedule == null ? 0 : schedule.nextOffsetNanos();
                    long due = start + offset;
                    if (due >= deadline) {
                        break;
                    }
                    if (!waitUntil(due)) {
                        break;
                    }
                    long woke = System.nanoTime();
                    long slotWait = 0;
                    if (slots != null) {
                        if (!slots.tryAcquire()) {
                            long waitStart = System.nanoTime();
                            long budget =
                                    deadline == Long.MAX_VALUE
                                            ? Long.MAX_VALUE
                                            : deadline - waitStart;
                            if (!slots.tryAcquire(budget, TimeUnit.NANOSECONDS)) {
                                break;
                            }
                            slotBlocked.add(waitStart, System.nanoTime());
                        }
                        slotWait = slotBlocked.blockedSince(due);
                    }
                    // A request due inside the window is sent even when the dispatcher reaches it
                    // late: dropping it would hide exactly the lag the profile must report.
                    final long index = i;
                    final long slotWaitFinal = slotWait;
                    int loop = (int) (i % loops);
                    live.issued.incrementAndGet();
                    live.started();
                    transport.execute(loop, () -> send(loop, index, due, slotWaitFinal, woke));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                markDispatchDone();
            }
        }

        void startClosedLoop() {
            int loops = transport.loops();
            int concurrency = plan.concurrency();
            for (int c = 0; c < concurrency; c++) {
                int loop = c % loops;
                transport.execute(loop, () -> issueNext(loop));
            }
            // The loops decide when the stage is exhausted; nothing more to do on this thread.
        }

        /** Closed loop: claims the next request index, or ends dispatching when none is left. */
        void issueNext(int loop) {
            long limit = plan.numPrompts() > 0 ? plan.numPrompts() : Long.MAX_VALUE;
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
        }

        void send(int loop, long index, long due, long slotWait, long dispatched) {
            int p = (int) (index % prompts.size());
            RequestExecution execution =
                    new RequestExecution(
                            prompts.get(p),
                            warmup,
                            due,
                            slotWait,
                            protocol,
                            params,
                            tokenCounter,
                            finished -> onFinished(loop, finished));
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
            cancelled = true;
            Thread thread = dispatcher;
            if (thread != null) {
                thread.interrupt();
            }
            for (int loop = 0; loop < inFlightHeads.length; loop++) {
                int owner = loop;
                transport.execute(
                        owner,
                        () -> {
                            RequestExecution e = inFlightHeads[owner];
                            while (e != null) {
                                RequestExecution next = e.nextInFlight;
                                if (e.exchange != null) {
                                    e.exchange.cancel();
                                }
                                e = next;
                            }
                        });
            }
            if (plan.closedLoop()) {
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
            if (plan.closedLoop() && !dispatchDone) {
                // Queued behind the current callback so the finished request's connection is back
                // in the pool first; issuing inline would open a new connection every time.
                transport.execute(loop, () -> issueNext(loop));
                return;
            }
            checkDone();
        }

        void markDispatchDone() {
            dispatchDone = true;
            checkDone();
        }

        void checkDone() {
            if (dispatchDone && live.recorder.finished() == live.issued.get()) {
                done.countDown();
            }
        }

        /** Waits for {@code due}; false when the stage was cancelled meanwhile. */
        private boolean waitUntil(long due) {
            long remaining;
            while ((remaining = due - System.nanoTime()) > spinNanos) {
                LockSupport.parkNanos(remaining - spinNanos);
                if (cancelled) {
                    return false;
                }
            }
            while (System.nanoTime() < due) {
                Thread.onSpinWait();
            }
            return !cancelled;
        }
    }
}

package io.inferencebench.runner.engine;

import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.backend.Protocol;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.dataset.TokenCounter;
import io.inferencebench.runner.engine.LoadEngine.Live;
import io.inferencebench.runner.http.HttpTransport;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;

/**
 * One running stage of a {@link LoadEngine}: its dispatch (an open-loop share per event loop, or
 * the closed loop's workers, or a {@link SessionDriver}'s sessions), the requests in flight per
 * loop, and when it is done. Each loop's state is only touched on that loop.
 */
final class StageRun {
    private final LoadEngine engine;
    private final HttpTransport transport;
    private final List<Prompt> prompts;
    private final HttpTransport.PreparedRequest[] requests;
    private final int[] modelOf;
    private final Protocol protocol;
    private final GenerationParams params;
    private final TokenCounter tokenCounter;
    private final Conversations conversations;

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
    final RequestExecution[] inFlightHeads;

    StageRun(LoadEngine engine, StagePlan plan, Live live, boolean warmup, long start) {
        this.engine = engine;
        this.transport = engine.transport;
        this.prompts = engine.prompts;
        this.requests = engine.requests;
        this.modelOf = engine.modelOf;
        this.protocol = engine.protocol;
        this.params = engine.params;
        this.tokenCounter = engine.tokenCounter;
        this.conversations = engine.conversations;
        this.inFlightHeads = new RequestExecution[transport.loops()];
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
                                new Hooks(), conversations, transport, prompts.size(), engine.seed)
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
            engine.jvmError(e);
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
                            engine.jvmError(e);
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
            engine.jvmError(e);
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
            engine.jvmError(error);
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
            this.schedule = Double.isInfinite(plan.requestRate()) ? null : engine.schedule(plan);
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
         * Sends every request of this share that is due, then sets a timer for the next one. Runs
         * on the loop: from {@link #begin}, a timer, a slot grant or a cancel.
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
                engine.jvmError(e);
            } catch (RuntimeException | Error e) {
                // Never leave the stage waiting for a share that died: report and stop it.
                LoadEngine.LOG.log(Level.SEVERE, "stage " + plan.index() + ": dispatch failed", e);
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

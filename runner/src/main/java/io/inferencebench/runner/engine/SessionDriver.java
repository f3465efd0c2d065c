package io.inferencebench.runner.engine;

import io.inferencebench.runner.http.HttpTransport;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sessions of one conversation stage ({@link Conversations}): a session sends its turns one
 * after another, each after the previous reply and the think time (on a timer of its event loop),
 * and a failed turn ends it. In a closed loop each user takes the next session when its last one
 * ends ({@link #nextSession}); at a rate the stage's schedule starts them ({@link #startSession}).
 * The stage's dispatching ends when no session is left to start and none is in progress; at its
 * duration no turn is sent any more and the sessions in progress are cut.
 */
final class SessionDriver {

    /** What the driver needs of the stage it runs in ({@code LoadEngine}'s running stage). */
    interface Stage {
        boolean closedLoop();

        boolean cancelled();

        /** The stage's end (nanoTime), {@link Long#MAX_VALUE} without a duration. */
        long deadline();

        /** Sessions the stage runs. */
        long limit();

        LoadEngine.Live live();

        /** Sends prompt {@code p} as turn {@code turn} due at {@code due}; counted as issued. */
        void post(int loop, int p, int turn, long due, RequestExecution.Completion completion);

        /** Records a finished request of a session, as the stage records every request. */
        void finished(int loop, RequestExecution execution);

        /** No request is sent any more: the stage ends when the ones in flight have. */
        void dispatchDone();

        /** The JVM failed on a loop: the run ends (the engine's caller says why). */
        void jvmError(VirtualMachineError error);
    }

    private final Stage stage;
    private final Conversations shape;
    private final HttpTransport transport;
    private final int preparedSessions;
    private final long seed;

    /** Sessions taken so far (a closed loop counts them against the limit). */
    private final AtomicLong taken = new AtomicLong();

    /** Sessions in progress, plus users about to take one. */
    private final AtomicInteger active = new AtomicInteger();

    /**
     * No session starts any more (a user found none left, or the schedule ended): dispatching ends
     * when none is in progress.
     */
    private volatile boolean exhausted;

    /**
     * @param prompts prompts prepared, laid out session by session
     * @param seed the run's seed, from which drawn think times come
     */
    SessionDriver(
            Stage stage, Conversations shape, HttpTransport transport, int prompts, long seed) {
        this.stage = stage;
        this.shape = shape;
        this.transport = transport;
        this.preparedSessions = shape.sessions(prompts);
        this.seed = seed;
    }

    /** One session in progress: which it is and its next turn. Only touched on its loop. */
    private final class Session {
        final long index;
        final int firstPrompt;
        int turn;

        Session(long index) {
            this.index = index;
            this.firstPrompt = (int) (index % preparedSessions) * shape.turns();
        }
    }

    /** A user free for a session: takes the next one, or stops when none is left. */
    void nextSession(int loop) {
        active.incrementAndGet();
        long index = take();
        if (index < 0) {
            userStopped();
            return;
        }
        long now = System.nanoTime();
        stage.live().recorder.sessionStarted(now);
        sendTurn(loop, new Session(index), now);
    }

    /** A session of a stage at a rate starts at its due instant {@code due}. */
    void startSession(int loop, long index, long due) {
        active.incrementAndGet();
        stage.live().recorder.sessionStarted(System.nanoTime());
        sendTurn(loop, new Session(index), due);
    }

    /** The schedule of a stage at a rate has ended: the last session in progress ends it. */
    void noMoreStarts() {
        exhausted = true;
        active.incrementAndGet();
        sessionEnded();
    }

    /** The index of the next session to run, or -1 when none is left. */
    private long take() {
        while (true) {
            long count = taken.get();
            if (count >= stage.limit()
                    || System.nanoTime() >= stage.deadline()
                    || stage.cancelled()) {
                return -1;
            }
            if (taken.compareAndSet(count, count + 1)) {
                return count;
            }
        }
    }

    /** Sends the session's next turn, due at {@code due}, unless the stage is over. */
    private void sendTurn(int loop, Session session, long due) {
        try {
            if (stage.cancelled() || System.nanoTime() >= stage.deadline()) {
                // Cut by the stage's end: its user takes no further session either.
                userStopped();
                return;
            }
            stage.post(
                    loop,
                    session.firstPrompt + session.turn,
                    session.turn,
                    due,
                    finished -> onTurnFinished(loop, session, finished));
        } catch (VirtualMachineError e) {
            // A timer's throwable would only be logged by Netty, the stage left waiting.
            stage.jvmError(e);
        }
    }

    /**
     * A turn ended: the session's next turn after the think time, or, when it was the last or
     * failed, the user's next session.
     */
    private void onTurnFinished(int loop, Session session, RequestExecution execution) {
        stage.finished(loop, execution);
        if (execution.cancelled) {
            userStopped();
            return;
        }
        session.turn++;
        boolean last = session.turn == shape.turns();
        if (!execution.succeeded() || last) {
            stage.live().recorder.sessionEnded(execution.succeeded());
            if (!stage.closedLoop()) {
                sessionEnded();
                return;
            }
            // Queued behind this callback so the connection is back in the pool first.
            transport.execute(
                    loop,
                    () -> {
                        nextSession(loop);
                        sessionEnded();
                    });
            return;
        }
        long think = shape.thinkNanos(seed, session.index, session.turn);
        long due = (execution.endNanos > 0 ? execution.endNanos : System.nanoTime()) + think;
        if (due >= stage.deadline()) {
            // The next turn would come after the stage's end: the session is cut there.
            userStopped();
            return;
        }
        long wait = due - System.nanoTime();
        if (wait <= 0) {
            transport.execute(loop, () -> sendTurn(loop, session, due));
        } else {
            transport.schedule(loop, () -> sendTurn(loop, session, due), wait);
        }
    }

    /**
     * A session ends for good: no session left for its user to take, or the stage's end cut it. In
     * a closed loop the user stops, and from now on the last session to end ends dispatching; at a
     * rate, the schedule decides when no session starts any more.
     */
    private void userStopped() {
        if (stage.closedLoop()) {
            exhausted = true;
        }
        sessionEnded();
    }

    /** A session (or a user's attempt to take one) ended; the last one ends dispatching. */
    private void sessionEnded() {
        if (active.decrementAndGet() == 0 && exhausted) {
            stage.dispatchDone();
        }
    }
}

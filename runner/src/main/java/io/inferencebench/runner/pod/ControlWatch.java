package io.inferencebench.runner.pod;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Follows the control ConfigMap {@code <run>-control}: a watch delivers changes at once, and a
 * periodic {@code get} covers a watch that silently stopped (the re-list fallback). Also notices
 * the end of the run: the {@code cancel} key set to {@code true}, the control ConfigMap deleted
 * after it existed, or the BenchmarkRun gone or replaced (other uid). A JVM error (out of memory)
 * on its thread would silently end the periodic checks; it is handed to the waiting pod instead.
 */
final class ControlWatch implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(ControlWatch.class.getName());

    private final KubernetesClient client;
    private final String namespace;
    private final String name;
    private final String runName;
    private final String runUid;
    private final Duration pollInterval;
    private final Duration runCheckInterval;
    private final ScheduledExecutorService scheduler;
    private final Object lock = new Object();
    private Map<String, String> data = Map.of();
    private volatile Consumer<Map<String, String>> onChange;
    private boolean seen;
    private boolean deleted;
    private String runGone;
    private volatile boolean closed;
    private volatile boolean runCheckAllowed = true;
    private VirtualMachineError jvmError;
    private Watch watch;

    ControlWatch(
            KubernetesClient client,
            String namespace,
            String name,
            String runName,
            String runUid,
            Duration pollInterval,
            Duration runCheckInterval) {
        this.client = client;
        this.namespace = namespace;
        this.name = name;
        this.runName = runName;
        this.runUid = runUid;
        this.pollInterval = pollInterval;
        this.runCheckInterval = runCheckInterval;
        this.scheduler =
                Executors.newSingleThreadScheduledExecutor(
                        r -> Thread.ofPlatform().daemon().name("ib-control-watch").unstarted(r));
    }

    void start() {
        poll();
        openWatch();
        scheduler.scheduleWithFixedDelay(
                this::poll,
                pollInterval.toMillis(),
                pollInterval.toMillis(),
                TimeUnit.MILLISECONDS);
        if (runUid != null) {
            scheduler.scheduleWithFixedDelay(
                    this::checkRun,
                    runCheckInterval.toMillis(),
                    runCheckInterval.toMillis(),
                    TimeUnit.MILLISECONDS);
        }
    }

    private void openWatch() {
        if (closed) {
            return;
        }
        try {
            Watch opened =
                    client.configMaps()
                            .inNamespace(namespace)
                            .withName(name)
                            .watch(
                                    new Watcher<>() {
                                        @Override
                                        public void eventReceived(Action action, ConfigMap cm) {
                                            if (action == Action.DELETED) {
                                                update(null);
                                            } else if (action != Action.ERROR
                                                    && action != Action.BOOKMARK) {
                                                update(cm);
                                            }
                                        }

                                        @Override
                                        public void onClose(WatcherException cause) {
                                            // fabric8 gave up reconnecting; start afresh later.
                                            if (!closed) {
                                                scheduler.schedule(
                                                        ControlWatch.this::openWatch,
                                                        1,
                                                        TimeUnit.SECONDS);
                                            }
                                        }
                                    });
            synchronized (lock) {
                watch = opened;
            }
        } catch (KubernetesClientException | IllegalStateException e) {
            LOG.log(Level.FINE, "watch on " + name + " failed; polling meanwhile", e);
            if (!closed) {
                scheduler.schedule(this::openWatch, pollInterval.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }

    private void poll() {
        try {
            update(client.configMaps().inNamespace(namespace).withName(name).get());
        } catch (KubernetesClientException e) {
            // Transient: the next poll or the watch brings the state.
            LOG.log(Level.FINE, "get " + name + " failed", e);
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "get " + name + " failed", e);
        } catch (VirtualMachineError e) {
            jvmFailed(e);
        }
    }

    /** Hands a JVM error to whoever waits (a periodic task that throws is never run again). */
    private void jvmFailed(VirtualMachineError e) {
        synchronized (lock) {
            if (jvmError == null) {
                jvmError = e;
            }
            lock.notifyAll();
        }
    }

    private void checkRun() {
        if (!runCheckAllowed) {
            return;
        }
        try {
            GenericKubernetesResource run =
                    client.genericKubernetesResources(runResource())
                            .inNamespace(namespace)
                            .withName(runName)
                            .get();
            String gone = null;
            if (run == null) {
                gone = "BenchmarkRun " + namespace + "/" + runName + " was deleted";
            } else if (!runUid.equals(run.getMetadata().getUid())) {
                gone = "BenchmarkRun " + namespace + "/" + runName + " was re-created";
            }
            if (gone != null) {
                synchronized (lock) {
                    runGone = gone;
                    lock.notifyAll();
                }
            }
        } catch (KubernetesClientException e) {
            if (e.getCode() == 403) {
                // Without get on benchmarkruns the deleted control ConfigMap still tells.
                runCheckAllowed = false;
            }
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "get BenchmarkRun failed", e);
        } catch (VirtualMachineError e) {
            jvmFailed(e);
        }
    }

    static ResourceDefinitionContext runResource() {
        return new ResourceDefinitionContext.Builder()
                .withGroup(BenchmarkRun.GROUP)
                .withVersion(BenchmarkRun.VERSION)
                .withPlural(BenchmarkRun.PLURAL)
                .withKind(BenchmarkRun.KIND)
                .withNamespaced(true)
                .build();
    }

    private void update(ConfigMap cm) {
        Map<String, String> published = null;
        synchronized (lock) {
            if (cm == null) {
                if (seen) {
                    deleted = true;
                }
            } else {
                seen = true;
                deleted = false;
                data = cm.getData() == null ? Map.of() : Map.copyOf(cm.getData());
                published = data;
            }
            lock.notifyAll();
        }
        Consumer<Map<String, String>> listener = onChange;
        if (published != null && listener != null) {
            try {
                listener.accept(published);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "control data listener failed", e);
            }
        }
    }

    /**
     * Who hears every control data read (from the watch or a poll, the same data possibly twice),
     * on the watch's threads, outside the lock; set before {@link #start()}.
     */
    void onChange(Consumer<Map<String, String>> listener) {
        this.onChange = listener;
    }

    /** Why the run ended for this pod, or {@code null} while it goes on. */
    String stopReason() {
        synchronized (lock) {
            return stopReasonLocked();
        }
    }

    private String stopReasonLocked() {
        if ("true".equalsIgnoreCase(data.getOrDefault(RunnerWorkOrder.CANCEL_KEY, "").strip())) {
            return "the run was cancelled";
        }
        if (deleted) {
            return "control ConfigMap " + name + " was deleted";
        }
        return runGone;
    }

    /**
     * Waits for a control key.
     *
     * @param key the key
     * @return its value, or {@code null} when the run ended first ({@link #stopReason()} says why)
     * @throws VirtualMachineError when the JVM failed on the watch's thread
     */
    String awaitKey(String key) throws InterruptedException {
        Map<String, String> published =
                awaitAny(
                        d -> {
                            String value = d.get(key);
                            return value != null && !value.isBlank();
                        });
        // each change replaces the data with an immutable copy: what satisfied the test stays
        return published == null ? null : published.get(key);
    }

    /**
     * Waits until the control data satisfy a condition (e.g. a search's next barrier and rate, or
     * its end).
     *
     * @param until tested on every change of the data
     * @return the data that satisfied it, or {@code null} when the run ended first ({@link
     *     #stopReason()} says why)
     */
    Map<String, String> awaitAny(Predicate<Map<String, String>> until) throws InterruptedException {
        synchronized (lock) {
            while (true) {
                if (jvmError != null) {
                    throw jvmError;
                }
                if (stopReasonLocked() != null) {
                    return null;
                }
                if (until.test(data)) {
                    return data;
                }
                lock.wait(1000);
            }
        }
    }

    /**
     * Waits until the run ends for this pod or the timeout passes.
     *
     * @return the stop reason, or {@code null} on timeout
     */
    String awaitStop(long timeoutMillis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        synchronized (lock) {
            String reason;
            long left;
            while ((reason = stopReasonLocked()) == null
                    && (left = deadline - System.currentTimeMillis()) > 0) {
                lock.wait(left);
            }
            return reason;
        }
    }

    /** Wakes waiters (used when the stage finished). */
    void wakeUp() {
        synchronized (lock) {
            lock.notifyAll();
        }
    }

    @Override
    public void close() {
        closed = true;
        scheduler.shutdownNow();
        synchronized (lock) {
            if (watch != null) {
                watch.close();
            }
        }
    }
}

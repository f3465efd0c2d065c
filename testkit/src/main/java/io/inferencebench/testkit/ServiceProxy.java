package io.inferencebench.testkit;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A kube-proxy stand-in (userspace mode, TCP only): every ClusterIP becomes a local address on the
 * pod network's bridge, and a listener per Service port forwards each connection to a ready
 * endpoint of the Service's EndpointSlices, round robin. Pods and the host reach Services by
 * ClusterIP exactly as in a cluster; pods also find them by name through {@link #hostsEntries}.
 */
final class ServiceProxy implements AutoCloseable {

    private final PodNetwork network;
    private final SharedIndexInformer<Service> services;
    private final SharedIndexInformer<EndpointSlice> slices;
    private final Map<String, Listener> listeners = new ConcurrentHashMap<>();
    private final Map<String, Set<String>> addressUsers = new ConcurrentHashMap<>();
    private volatile boolean closed;

    ServiceProxy(KubernetesClient client, PodNetwork network) {
        this.network = network;
        this.slices = client.discovery().v1().endpointSlices().inAnyNamespace().inform();
        this.services =
                client.services()
                        .inAnyNamespace()
                        .inform(
                                new ResourceEventHandler<>() {
                                    @Override
                                    public void onAdd(Service service) {
                                        sync(service);
                                    }

                                    @Override
                                    public void onUpdate(Service oldService, Service newService) {
                                        sync(newService);
                                    }

                                    @Override
                                    public void onDelete(Service service, boolean unknown) {
                                        remove(key(service));
                                    }
                                },
                                0);
    }

    private static String key(Service service) {
        return service.getMetadata().getNamespace() + "/" + service.getMetadata().getName();
    }

    private synchronized void sync(Service service) {
        if (closed) {
            return;
        }
        String key = key(service);
        String ip = service.getSpec().getClusterIP();
        if (ip == null || ip.isEmpty() || ip.equals("None")) {
            remove(key);
            return;
        }
        Set<String> wanted = new java.util.HashSet<>();
        for (ServicePort port : service.getSpec().getPorts()) {
            if (port.getProtocol() != null && !port.getProtocol().equals("TCP")) {
                continue;
            }
            String listenerKey = key + "|" + ip + ":" + port.getPort();
            wanted.add(listenerKey);
            listeners.computeIfAbsent(
                    listenerKey,
                    k -> {
                        addressUsers.computeIfAbsent(ip, x -> ConcurrentHashMap.newKeySet()).add(k);
                        network.addServiceAddress(ip);
                        return new Listener(
                                service.getMetadata().getNamespace(),
                                service.getMetadata().getName(),
                                port.getName(),
                                ip,
                                port.getPort());
                    });
        }
        for (String existing : List.copyOf(listeners.keySet())) {
            if (existing.startsWith(key + "|") && !wanted.contains(existing)) {
                closeListener(existing);
            }
        }
    }

    private synchronized void remove(String serviceKey) {
        for (String existing : List.copyOf(listeners.keySet())) {
            if (existing.startsWith(serviceKey + "|")) {
                closeListener(existing);
            }
        }
    }

    private void closeListener(String listenerKey) {
        Listener listener = listeners.remove(listenerKey);
        if (listener == null) {
            return;
        }
        listener.close();
        Set<String> users = addressUsers.get(listener.ip);
        if (users != null) {
            users.remove(listenerKey);
            if (users.isEmpty()) {
                addressUsers.remove(listener.ip);
                network.removeServiceAddress(listener.ip);
            }
        }
    }

    /** {@code /etc/hosts} lines naming every Service with a ClusterIP, as cluster DNS would. */
    String hostsEntries(String podNamespace) {
        StringBuilder out = new StringBuilder();
        for (Service service : services.getStore().list()) {
            String ip = service.getSpec().getClusterIP();
            if (ip == null || ip.isEmpty() || ip.equals("None")) {
                continue;
            }
            String name = service.getMetadata().getName();
            String ns = service.getMetadata().getNamespace();
            out.append(ip)
                    .append(' ')
                    .append(name)
                    .append('.')
                    .append(ns)
                    .append(".svc.cluster.local ")
                    .append(name)
                    .append('.')
                    .append(ns)
                    .append(".svc ")
                    .append(name)
                    .append('.')
                    .append(ns);
            if (ns.equals(podNamespace)) {
                out.append(' ').append(name);
            }
            out.append('\n');
        }
        return out.toString();
    }

    private List<InetSocketAddress> readyEndpoints(
            String namespace, String service, String portName) {
        List<InetSocketAddress> result = new ArrayList<>();
        for (EndpointSlice slice : slices.getStore().list()) {
            if (!namespace.equals(slice.getMetadata().getNamespace())
                    || slice.getMetadata().getLabels() == null
                    || !service.equals(
                            slice.getMetadata().getLabels().get("kubernetes.io/service-name"))
                    || slice.getPorts() == null
                    || slice.getEndpoints() == null) {
                continue;
            }
            Integer port =
                    slice.getPorts().stream()
                            .filter(
                                    p ->
                                            Objects.equals(
                                                    emptyToNull(p.getName()),
                                                    emptyToNull(portName)))
                            .map(p -> p.getPort())
                            .findFirst()
                            .orElse(null);
            if (port == null) {
                continue;
            }
            for (var endpoint : slice.getEndpoints()) {
                boolean ready =
                        endpoint.getConditions() == null
                                || !Boolean.FALSE.equals(endpoint.getConditions().getReady());
                if (ready) {
                    endpoint.getAddresses()
                            .forEach(a -> result.add(new InetSocketAddress(a, port)));
                }
            }
        }
        return result;
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    @Override
    public synchronized void close() {
        closed = true;
        services.close();
        slices.close();
        for (String key : List.copyOf(listeners.keySet())) {
            closeListener(key);
        }
    }

    private final class Listener {
        final String namespace;
        final String service;
        final String portName;
        final String ip;
        final int port;
        final AtomicInteger next = new AtomicInteger();
        private ServerSocket socket;

        Listener(String namespace, String service, String portName, String ip, int port) {
            this.namespace = namespace;
            this.service = service;
            this.portName = portName;
            this.ip = ip;
            this.port = port;
            try {
                socket = new ServerSocket();
                socket.setReuseAddress(true);
                socket.bind(new InetSocketAddress(InetAddress.getByName(ip), port), 512);
                Thread.ofVirtual().name("ib-proxy-" + service + ":" + port).start(this::accept);
            } catch (IOException e) {
                System.err.println(
                        "[local-node] service proxy cannot listen on "
                                + ip
                                + ":"
                                + port
                                + ": "
                                + e);
            }
        }

        private void accept() {
            while (!socket.isClosed()) {
                try {
                    Socket client = socket.accept();
                    Thread.ofVirtual().start(() -> forward(client));
                } catch (IOException e) {
                    return;
                }
            }
        }

        private void forward(Socket client) {
            List<InetSocketAddress> endpoints = readyEndpoints(namespace, service, portName);
            if (endpoints.isEmpty()) {
                closeQuietly(client);
                return;
            }
            InetSocketAddress target =
                    endpoints.get(Math.floorMod(next.getAndIncrement(), endpoints.size()));
            Socket upstream = new Socket();
            try {
                upstream.setTcpNoDelay(true);
                client.setTcpNoDelay(true);
                upstream.connect(target, 3000);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(upstream);
                return;
            }
            Thread back = Thread.ofVirtual().start(() -> pump(upstream, client));
            pump(client, upstream);
            try {
                back.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            closeQuietly(client);
            closeQuietly(upstream);
        }

        private static void pump(Socket from, Socket to) {
            byte[] buffer = new byte[16 * 1024];
            try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
                to.shutdownOutput();
            } catch (IOException e) {
                closeQuietly(from);
                closeQuietly(to);
            }
        }

        void close() {
            closeQuietly(socket);
        }
    }

    private static void closeQuietly(java.io.Closeable closeable) {
        try {
            if (closeable != null) {
                closeable.close();
            }
        } catch (IOException e) {
            // already closed
        }
    }
}

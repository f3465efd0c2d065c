package io.inferencebench.testkit;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;

/**
 * The Services and EndpointSlices the tests create, built in one place: a Service with one port
 * (the shape every benchmark target has), and the slice the endpoint slice controller would write
 * for it (clusters without controllers, and Services without a selector, need it written by hand).
 */
public final class ServiceObjects {

    /** The label that ties an EndpointSlice to its Service. */
    public static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";

    private ServiceObjects() {}

    /**
     * Service {@code name} with one port {@code port}, named {@code portName} (null: unnamed),
     * forwarding to {@code targetPort} (null: the same number), selecting the pods labelled {@code
     * app=<appLabel>} (null: no selector, its endpoints written by hand).
     */
    public static Service service(
            String name, String appLabel, String portName, int port, IntOrString targetPort) {
        ServiceBuilder service =
                new ServiceBuilder().withNewMetadata().withName(name).endMetadata();
        var spec = service.withNewSpec();
        if (appLabel != null) {
            spec.addToSelector("app", appLabel);
        }
        return spec.addNewPort()
                .withName(portName)
                .withPort(port)
                .withTargetPort(targetPort)
                .endPort()
                .endSpec()
                .build();
    }

    /**
     * EndpointSlice {@code name} of Service {@code service}: one IPv4 endpoint at {@code address},
     * ready or not, and one TCP port {@code portName} (null: unnamed) numbered {@code port}.
     */
    public static EndpointSlice endpointSlice(
            String name, String service, String address, boolean ready, String portName, int port) {
        return new EndpointSliceBuilder()
                .withNewMetadata()
                .withName(name)
                .addToLabels(SERVICE_NAME_LABEL, service)
                .endMetadata()
                .withAddressType("IPv4")
                .addNewEndpoint()
                .withAddresses(address)
                .withNewConditions()
                .withReady(ready)
                .endConditions()
                .endEndpoint()
                .addNewPort()
                .withName(portName)
                .withPort(port)
                .withProtocol("TCP")
                .endPort()
                .build();
    }
}

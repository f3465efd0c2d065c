package io.inferencebench.crds.workorder;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Certificate checks a runner pod applies to an https target, resolved from {@code
 * spec.target.tls}.
 *
 * @param caFile path of the mounted PEM CA bundle in the pod, or {@code null} for the default trust
 *     store
 * @param insecureSkipVerify accept any certificate (the pod logs a warning)
 * @param serverName name to verify and send as SNI, or {@code null} for the URL's host
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TlsOrder(String caFile, boolean insecureSkipVerify, String serverName) {}

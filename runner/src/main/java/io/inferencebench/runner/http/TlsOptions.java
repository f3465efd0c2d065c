package io.inferencebench.runner.http;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLException;

/**
 * How an https target's certificate is checked. By default against the JVM's trust store, with the
 * host name verified; {@code caCert} replaces the trust store with a PEM bundle; {@code
 * insecureSkipVerify} checks nothing (an explicit opt-out, logged loudly by the caller); {@code
 * serverName} is the name sent as SNI and verified instead of the URL's host.
 *
 * @param caCert PEM file of trusted CA certificates, or {@code null} for the JVM's trust store
 * @param insecureSkipVerify accept any certificate and host name
 * @param serverName name to verify (and send as SNI), or {@code null} for the URL's host
 */
public record TlsOptions(Path caCert, boolean insecureSkipVerify, String serverName) {

    /** The default: the JVM's trust store, host name verified. */
    public static final TlsOptions VERIFY = new TlsOptions(null, false, null);

    /**
     * Checks that the options make a usable context (the CA file exists and holds certificates).
     *
     * @throws IllegalArgumentException naming the problem
     */
    public void check() {
        context();
    }

    /**
     * Builds the client context.
     *
     * @throws IllegalArgumentException when the CA file is missing or not PEM certificates
     */
    SslContext context() {
        SslContextBuilder builder = SslContextBuilder.forClient();
        if (insecureSkipVerify) {
            builder.trustManager(InsecureTrustManagerFactory.INSTANCE);
        } else if (caCert != null) {
            if (!Files.isReadable(caCert)) {
                throw new IllegalArgumentException("cannot read " + caCert);
            }
            try {
                builder.trustManager(Files.newInputStream(caCert));
            } catch (IOException | IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        caCert + " holds no PEM certificate: " + e.getMessage(), e);
            }
        }
        try {
            return builder.build();
        } catch (SSLException e) {
            throw new IllegalArgumentException(
                    (caCert != null ? caCert + ": " : "")
                            + "no usable TLS context: "
                            + e.getMessage(),
                    e);
        }
    }
}

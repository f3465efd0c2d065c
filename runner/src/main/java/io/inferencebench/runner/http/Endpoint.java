package io.inferencebench.runner.http;

import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/**
 * Where a transport connects and how its TLS is checked.
 *
 * @param ssl the TLS context for https, {@code null} for plain http
 * @param tlsName the name sent as SNI and verified in the certificate
 * @param verifyHostName whether the certificate must name {@code tlsName} (off only with
 *     insecureSkipVerify)
 */
record Endpoint(String host, int port, SslContext ssl, String tlsName, boolean verifyHostName) {

    /** Whether the port is the scheme's default, so the Host header need not name it. */
    boolean defaultPort() {
        return port == (ssl != null ? 443 : 80);
    }

    /** The TLS handler for a new connection's pipeline; only when {@link #ssl} is set. */
    SslHandler tlsHandler(SocketChannel ch) {
        SslHandler handler = ssl.newHandler(ch.alloc(), tlsName, port);
        if (verifyHostName) {
            // Netty checks the chain but not the name unless asked: without this any
            // certificate the trust store accepts would do for any host.
            SSLEngine engine = handler.engine();
            SSLParameters parameters = engine.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            engine.setSSLParameters(parameters);
        }
        return handler;
    }
}

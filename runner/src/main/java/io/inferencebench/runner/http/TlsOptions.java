package io.inferencebench.runner.http;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * How an https target's certificate is checked. By default against the JVM's trust store, with the
 * host name verified; {@code caCert} replaces the trust store with a PEM bundle; {@code
 * insecureSkipVerify} checks nothing (an explicit opt-out, logged loudly by the caller); {@code
 * serverName} is the name sent as SNI and verified instead of the URL's host.
 *
 * <p>One setting for every connection to the target: the load's transport ({@link #context()}), and
 * the JDK HTTP clients of the {@code /tokenize} probe and the metrics scraper ({@link
 * #jdkContext()}) check with the same {@link #trustManager()}.
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
     * Builds the load transport's context.
     *
     * @throws IllegalArgumentException when the CA file is missing or not PEM certificates
     */
    SslContext context() {
        try {
            return SslContextBuilder.forClient().trustManager(trustManager()).build();
        } catch (SSLException e) {
            throw new IllegalArgumentException(
                    (caCert != null ? caCert + ": " : "")
                            + "no usable TLS context: "
                            + e.getMessage(),
                    e);
        }
    }

    /**
     * A context for the JDK's {@link java.net.http.HttpClient} that checks certificates and host
     * names as the load's connections do (the client's own host name check is replaced by the trust
     * manager's, which honours {@link #serverName}).
     *
     * @throws IllegalArgumentException when the CA file is missing or not PEM certificates
     */
    public SSLContext jdkContext() {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, new TrustManager[] {trustManager()}, null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("no usable TLS context: " + e.getMessage(), e);
        }
    }

    /**
     * The trust manager of every connection: the CA file's or the JVM's certificates, and the name:
     * {@link #serverName} when set, else the host the engine was created for (the URL's).
     */
    X509ExtendedTrustManager trustManager() {
        if (insecureSkipVerify) {
            return new TrustAll();
        }
        X509ExtendedTrustManager trust = platformOrCa();
        return serverName == null ? trust : new NamedTrust(trust, serverName);
    }

    private X509ExtendedTrustManager platformOrCa() {
        try {
            TrustManagerFactory factory =
                    TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            if (caCert == null) {
                factory.init((KeyStore) null);
            } else {
                if (!Files.isReadable(caCert)) {
                    throw new IllegalArgumentException("cannot read " + caCert);
                }
                KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
                store.load(null, null);
                int n = 0;
                try (InputStream in = Files.newInputStream(caCert)) {
                    for (Certificate c :
                            CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                        store.setCertificateEntry("ca-" + n++, c);
                    }
                } catch (IOException | CertificateException e) {
                    throw new IllegalArgumentException(
                            caCert + " holds no PEM certificate: " + e.getMessage(), e);
                }
                if (n == 0) {
                    throw new IllegalArgumentException(caCert + " holds no PEM certificate");
                }
                factory.init(store);
            }
            for (TrustManager m : factory.getTrustManagers()) {
                if (m instanceof X509ExtendedTrustManager x) {
                    return x;
                }
            }
            throw new IllegalArgumentException("the JVM has no X.509 trust manager");
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException(
                    (caCert != null ? caCert + ": " : "")
                            + "no usable TLS context: "
                            + e.getMessage(),
                    e);
        }
    }

    /**
     * What a TLS failure means for the user: which check failed (expired, not yet valid, host name,
     * untrusted CA), what to change, then the JDK's reason.
     */
    public static String describeFailure(Throwable cause) {
        Throwable root = cause;
        CertificateExpiredException expired = null;
        CertificateNotYetValidException notYetValid = null;
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof CertificateExpiredException e) {
                expired = e;
            } else if (t instanceof CertificateNotYetValidException e) {
                notYetValid = e;
            }
            root = t;
            if (t.getCause() == t) {
                break;
            }
        }
        String reason = root.getMessage() != null ? root.getMessage() : root.toString();
        if (expired != null) {
            return "certificate expired: the server's certificate (or one of its chain) is valid"
                    + " only until "
                    + after(expired.getMessage(), "NotAfter:")
                    + " (notAfter); renew it, or check this machine's clock";
        }
        if (notYetValid != null) {
            return "certificate not yet valid: the server's certificate (or one of its chain) is"
                    + " valid only from "
                    + after(notYetValid.getMessage(), "NotBefore:")
                    + " (notBefore); check the clocks of the server and this machine";
        }
        String hint;
        if (reason.contains("No subject alternative")
                || reason.contains("No name matching")
                || reason.contains("does not name")) {
            hint =
                    "hostname mismatch: the certificate does not name this host; check the URL or"
                            + " set the name it carries with --tls-server-name"
                            + " (spec.target.tls.serverName)";
        } else if (reason.contains("PKIX")
                || reason.contains("unable to find valid certification")) {
            hint =
                    "the server's certificate is not signed by a trusted CA; pass its CA with --ca-cert"
                            + " (spec.target.tls.caConfigMapRef)";
        } else {
            hint = "TLS handshake failed";
        }
        return hint + ": " + reason;
    }

    /** The TLS failure in {@code cause}'s chain, or null when it is no TLS failure. */
    public static SSLException tlsFailure(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof SSLException ssl) {
                return ssl;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }

    private static String after(String message, String label) {
        if (message == null) {
            return "a date that has passed";
        }
        int at = message.indexOf(label);
        return (at >= 0 ? message.substring(at + label.length()) : message).strip();
    }

    /** Accepts every certificate and name: {@code insecureSkipVerify}. */
    private static final class TrustAll extends X509ExtendedTrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {}

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {}

        @Override
        public void checkClientTrusted(
                X509Certificate[] chain, String authType, SSLEngine engine) {}

        @Override
        public void checkServerTrusted(
                X509Certificate[] chain, String authType, SSLEngine engine) {}

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {}

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {}

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }

    /**
     * The chain checked by the platform's trust manager, the host name against {@code name} instead
     * of the host the connection was opened to (the JDK's HTTP client gives no way to verify
     * another name).
     */
    private static final class NamedTrust extends X509ExtendedTrustManager {
        private final X509ExtendedTrustManager chain;
        private final String name;

        NamedTrust(X509ExtendedTrustManager chain, String name) {
            this.chain = chain;
            this.name = name;
        }

        @Override
        public void checkServerTrusted(X509Certificate[] certs, String authType, Socket socket)
                throws CertificateException {
            checkServerTrusted(certs, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] certs, String authType, SSLEngine engine)
                throws CertificateException {
            checkServerTrusted(certs, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] certs, String authType)
                throws CertificateException {
            chain.checkServerTrusted(certs, authType);
            verifyName(name, certs[0]);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] certs, String authType, Socket socket)
                throws CertificateException {
            chain.checkClientTrusted(certs, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] certs, String authType, SSLEngine engine)
                throws CertificateException {
            chain.checkClientTrusted(certs, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] certs, String authType)
                throws CertificateException {
            chain.checkClientTrusted(certs, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return chain.getAcceptedIssuers();
        }
    }

    /**
     * Whether {@code cert} names {@code expected} in its subjectAltName (RFC 6125: DNS names
     * case-insensitively, a wildcard for the whole leftmost label only; IP addresses as addresses).
     *
     * @throws CertificateException in the JDK's words when it does not
     */
    static void verifyName(String expected, X509Certificate cert) throws CertificateException {
        String host = expected.toLowerCase(Locale.ROOT);
        if (host.endsWith(".")) {
            host = host.substring(0, host.length() - 1);
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        Collection<List<?>> names = cert.getSubjectAlternativeNames();
        boolean ip = host.indexOf(':') >= 0 || host.matches("[0-9.]+");
        if (ip) {
            InetAddress want = literal(host);
            if (names != null && want != null) {
                for (List<?> n : names) {
                    if (Integer.valueOf(7).equals(n.get(0))
                            && want.equals(literal(String.valueOf(n.get(1))))) {
                        return;
                    }
                }
            }
            throw new CertificateException(
                    "No subject alternative names matching IP address " + expected + " found");
        }
        if (names != null) {
            for (List<?> n : names) {
                if (Integer.valueOf(2).equals(n.get(0))
                        && dnsMatches(host, String.valueOf(n.get(1)))) {
                    return;
                }
            }
        }
        throw new CertificateException(
                "No subject alternative DNS name matching " + expected + " found.");
    }

    private static InetAddress literal(String text) {
        try {
            // a literal: no lookup happens
            return InetAddress.getByName(text);
        } catch (UnknownHostException | SecurityException e) {
            return null;
        }
    }

    private static boolean dnsMatches(String host, String pattern) {
        String p = pattern.toLowerCase(Locale.ROOT);
        if (p.endsWith(".")) {
            p = p.substring(0, p.length() - 1);
        }
        if (!p.startsWith("*.")) {
            return p.equals(host);
        }
        String suffix = p.substring(1);
        // "*.example.com": one label, and never a wildcard over a single-label suffix ("*.com")
        int firstDot = host.indexOf('.');
        return suffix.indexOf('.', 1) > 0
                && firstDot > 0
                && host.substring(firstDot).equals(suffix);
    }
}

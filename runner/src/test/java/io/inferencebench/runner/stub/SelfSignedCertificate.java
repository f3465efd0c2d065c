package io.inferencebench.runner.stub;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * A self-signed certificate made for one test with the JDK's keytool: a PKCS12 key store for the
 * server and the certificate as PEM for the client's CA bundle.
 */
public record SelfSignedCertificate(Path keyStore, Path pem, char[] password) {

    /**
     * @param dir where the files go
     * @param subjectAltNames e.g. {@code ip:127.0.0.1,dns:localhost}
     */
    public static SelfSignedCertificate create(Path dir, String subjectAltNames) throws Exception {
        Path keyStore = dir.resolve("server.p12");
        Path pem = dir.resolve("ca.pem");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        run(
                keytool,
                "-genkeypair",
                "-alias",
                "server",
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=inferencebench-test",
                "-ext",
                "SAN=" + subjectAltNames,
                "-validity",
                "2",
                "-storetype",
                "PKCS12",
                "-keystore",
                keyStore.toString(),
                "-storepass",
                "changeit");
        run(
                keytool,
                "-exportcert",
                "-rfc",
                "-alias",
                "server",
                "-keystore",
                keyStore.toString(),
                "-storepass",
                "changeit",
                "-file",
                pem.toString());
        return new SelfSignedCertificate(keyStore, pem, "changeit".toCharArray());
    }

    /**
     * A server certificate issued by a CA made for the test, valid from {@code startDate} for
     * {@code validityDays}: the key store presents the chain (server, CA), {@link #pem()} is the
     * CA's certificate, so that the client's checks go past the chain to the certificate's own
     * dates (a trusted self-signed certificate is a trust anchor, whose dates the JDK does not
     * check).
     *
     * @param startDate keytool's {@code -startdate}, e.g. {@code -10d} (ten days ago), {@code +5d}
     */
    public static SelfSignedCertificate issued(
            Path dir, String subjectAltNames, String startDate, int validityDays) throws Exception {
        Path caStore = dir.resolve("ca.p12");
        Path caPem = dir.resolve("ca.pem");
        Path keyStore = dir.resolve("server.p12");
        Path request = dir.resolve("server.csr");
        Path serverPem = dir.resolve("server.pem");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        String[] store = {"-storetype", "PKCS12", "-storepass", "changeit"};
        run(
                concat(
                        new String[] {
                            keytool,
                            "-genkeypair",
                            "-alias",
                            "ca",
                            "-keyalg",
                            "EC",
                            "-groupname",
                            "secp256r1",
                            "-dname",
                            "CN=inferencebench-test-ca",
                            "-ext",
                            "bc:c",
                            "-validity",
                            "60",
                            "-keystore",
                            caStore.toString()
                        },
                        store));
        run(
                concat(
                        new String[] {
                            keytool,
                            "-exportcert",
                            "-rfc",
                            "-alias",
                            "ca",
                            "-keystore",
                            caStore.toString(),
                            "-file",
                            caPem.toString()
                        },
                        store));
        run(
                concat(
                        new String[] {
                            keytool,
                            "-genkeypair",
                            "-alias",
                            "server",
                            "-keyalg",
                            "EC",
                            "-groupname",
                            "secp256r1",
                            "-dname",
                            "CN=inferencebench-test",
                            "-keystore",
                            keyStore.toString()
                        },
                        store));
        run(
                concat(
                        new String[] {
                            keytool,
                            "-certreq",
                            "-alias",
                            "server",
                            "-keystore",
                            keyStore.toString(),
                            "-file",
                            request.toString()
                        },
                        store));
        run(
                concat(
                        new String[] {
                            keytool,
                            "-gencert",
                            "-rfc",
                            "-alias",
                            "ca",
                            "-keystore",
                            caStore.toString(),
                            "-infile",
                            request.toString(),
                            "-outfile",
                            serverPem.toString(),
                            "-ext",
                            "SAN=" + subjectAltNames,
                            "-startdate",
                            startDate,
                            "-validity",
                            Integer.toString(validityDays)
                        },
                        store));
        run(
                concat(
                        new String[] {
                            keytool,
                            "-importcert",
                            "-noprompt",
                            "-alias",
                            "ca",
                            "-file",
                            caPem.toString(),
                            "-keystore",
                            keyStore.toString()
                        },
                        store));
        run(
                concat(
                        new String[] {
                            keytool,
                            "-importcert",
                            "-noprompt",
                            "-alias",
                            "server",
                            "-file",
                            serverPem.toString(),
                            "-keystore",
                            keyStore.toString()
                        },
                        store));
        return new SelfSignedCertificate(keyStore, caPem, "changeit".toCharArray());
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    /** A server-side context presenting this certificate. */
    public SSLContext serverContext() throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keyStore)) {
            store.load(in, password);
        }
        KeyManagerFactory kmf =
                KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(store, password);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), null, null);
        return context;
    }

    private static void run(String... command) throws Exception {
        List<String> args = new ArrayList<>(List.of(command));
        Process p = new ProcessBuilder(args).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("keytool failed: " + output);
        }
    }
}

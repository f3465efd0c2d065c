package io.inferencebench.runner.stub;

import static io.inferencebench.testkit.Argv.argv;

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

    private static final String PASSWORD = "changeit";

    /**
     * @param dir where the files go
     * @param subjectAltNames e.g. {@code ip:127.0.0.1,dns:localhost}
     */
    public static SelfSignedCertificate create(Path dir, String subjectAltNames) throws Exception {
        Path keyStore = dir.resolve("server.p12");
        Path pem = dir.resolve("ca.pem");
        keytool(
                "-genkeypair -alias server -keyalg EC -groupname secp256r1"
                        + " -dname CN=inferencebench-test -ext SAN=%s -validity 2 -keystore %s",
                subjectAltNames, keyStore);
        keytool("-exportcert -rfc -alias server -keystore %s -file %s", keyStore, pem);
        return new SelfSignedCertificate(keyStore, pem, PASSWORD.toCharArray());
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
        keytool(
                "-genkeypair -alias ca -keyalg EC -groupname secp256r1"
                        + " -dname CN=inferencebench-test-ca -ext bc:c -validity 60 -keystore %s",
                caStore);
        keytool("-exportcert -rfc -alias ca -keystore %s -file %s", caStore, caPem);
        keytool(
                "-genkeypair -alias server -keyalg EC -groupname secp256r1"
                        + " -dname CN=inferencebench-test -keystore %s",
                keyStore);
        keytool("-certreq -alias server -keystore %s -file %s", keyStore, request);
        keytool(
                "-gencert -rfc -alias ca -keystore %s -infile %s -outfile %s -ext SAN=%s"
                        + " -startdate %s -validity %s",
                caStore, request, serverPem, subjectAltNames, startDate, validityDays);
        keytool("-importcert -noprompt -alias ca -file %s -keystore %s", caPem, keyStore);
        keytool("-importcert -noprompt -alias server -file %s -keystore %s", serverPem, keyStore);
        return new SelfSignedCertificate(keyStore, caPem, PASSWORD.toCharArray());
    }

    /**
     * Runs the JDK's keytool with {@code options} (words, {@code %s} for each of {@code values}) on
     * PKCS12 stores with the test password.
     */
    private static void keytool(String options, Object... values) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(argv(options, values)));
        command.addAll(List.of("-storetype", "PKCS12", "-storepass", PASSWORD));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("keytool failed: " + output);
        }
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
}

package io.inferencebench.runner.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.inferencebench.runner.stub.SelfSignedCertificate;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TlsOptionsTest {

    private static Throwable handshake(Throwable root) {
        CertPathValidatorException validator =
                new CertPathValidatorException("validity check failed", root);
        CertificateException pkix =
                new CertificateException("PKIX path validation failed: " + validator, validator);
        SSLHandshakeException e = new SSLHandshakeException(pkix.getMessage());
        e.initCause(pkix);
        return e;
    }

    @Test
    void expiryAndNotYetValidAreToldApartFromAnUntrustedCa() {
        assertThat(
                        TlsOptions.describeFailure(
                                handshake(
                                        new CertificateExpiredException(
                                                "NotAfter: Mon Nov 30 10:00:00 UTC 2026"))))
                .startsWith(
                        "certificate expired: the server's certificate (or one of its chain) is"
                                + " valid only until Mon Nov 30 10:00:00 UTC 2026 (notAfter)");
        assertThat(
                        TlsOptions.describeFailure(
                                handshake(
                                        new CertificateNotYetValidException(
                                                "NotBefore: Mon Dec 14 10:00:00 UTC 2026"))))
                .startsWith("certificate not yet valid: ")
                .contains("valid only from Mon Dec 14 10:00:00 UTC 2026 (notBefore)");
        SSLHandshakeException untrusted =
                new SSLHandshakeException(
                        "PKIX path building failed: unable to find valid certification path");
        assertThat(TlsOptions.describeFailure(untrusted))
                .startsWith("the server's certificate is not signed by a trusted CA");
        assertThat(
                        TlsOptions.describeFailure(
                                new SSLHandshakeException(
                                        "No subject alternative DNS name matching x found.")))
                .startsWith("hostname mismatch: ");
    }

    @Test
    void serverNamesAreMatchedAsRfc6125Says(@TempDir Path dir) throws Exception {
        SelfSignedCertificate cert =
                SelfSignedCertificate.create(
                        dir, "dns:*.bench.internal,dns:llm.example.net,ip:10.0.0.7,ip:::1");
        X509Certificate x;
        try (InputStream in = Files.newInputStream(cert.pem())) {
            x = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
        for (String ok :
                new String[] {
                    "a.bench.internal", "LLM.Example.NET", "llm.example.net.", "10.0.0.7", "[::1]"
                }) {
            assertThatCode(() -> TlsOptions.verifyName(ok, x)).as(ok).doesNotThrowAnyException();
        }
        for (String bad :
                new String[] {
                    "bench.internal", "a.b.bench.internal", "example.net", "10.0.0.8", "::2"
                }) {
            assertThatThrownBy(() -> TlsOptions.verifyName(bad, x))
                    .as(bad)
                    .isInstanceOf(CertificateException.class)
                    .hasMessageContaining("No subject alternative");
        }
    }
}

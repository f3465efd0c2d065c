package io.inferencebench.testkit;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throw-away certificate authority for a local control plane: the cluster CA, the API server's
 * serving certificate, client certificates (identity = CN, groups = O) and the ServiceAccount token
 * signing key pair.
 */
public final class Pki {

    private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());
    private static final Duration VALIDITY = Duration.ofDays(7);

    /** A certificate with its private key. */
    public record Credential(X509Certificate certificate, PrivateKey key) {
        public String certificatePem() {
            return pem(certificate);
        }

        public String keyPem() {
            return pem(key);
        }

        public void write(Path certFile, Path keyFile) {
            writeString(certFile, certificatePem());
            writeString(keyFile, keyPem());
        }
    }

    private final Credential ca;

    private Pki(Credential ca) {
        this.ca = ca;
    }

    /** Creates a new self-signed cluster CA. */
    public static Pki newCa(String commonName) {
        try {
            KeyPair keys = keyPair();
            var name = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.CN, commonName).build();
            Instant now = Instant.now();
            var builder =
                    new JcaX509v3CertificateBuilder(
                            name,
                            BigInteger.valueOf(SERIAL.incrementAndGet()),
                            Date.from(now.minus(Duration.ofHours(1))),
                            Date.from(now.plus(VALIDITY)),
                            name,
                            keys.getPublic());
            var ext = new JcaX509ExtensionUtils();
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
            builder.addExtension(
                    Extension.keyUsage,
                    true,
                    new KeyUsage(
                            KeyUsage.keyCertSign | KeyUsage.cRLSign | KeyUsage.digitalSignature));
            builder.addExtension(
                    Extension.subjectKeyIdentifier,
                    false,
                    ext.createSubjectKeyIdentifier(keys.getPublic()));
            return new Pki(new Credential(sign(builder, keys.getPrivate()), keys.getPrivate()));
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot create CA", e);
        }
    }

    public Credential ca() {
        return ca;
    }

    /** A TLS server certificate valid for the given DNS names and IP addresses. */
    public Credential server(String commonName, List<String> dnsNames, List<String> ips) {
        List<GeneralName> names = new ArrayList<>();
        dnsNames.forEach(d -> names.add(new GeneralName(GeneralName.dNSName, d)));
        ips.forEach(ip -> names.add(new GeneralName(GeneralName.iPAddress, ip)));
        return issue(commonName, List.of(), names, KeyPurposeId.id_kp_serverAuth);
    }

    /** A client certificate: Kubernetes reads the user from CN and the groups from O. */
    public Credential client(String user, String... groups) {
        return issue(user, List.of(groups), List.of(), KeyPurposeId.id_kp_clientAuth);
    }

    private Credential issue(
            String commonName,
            List<String> organizations,
            List<GeneralName> altNames,
            KeyPurposeId purpose) {
        try {
            KeyPair keys = keyPair();
            var subject = new X500NameBuilder(BCStyle.INSTANCE);
            organizations.forEach(o -> subject.addRDN(BCStyle.O, o));
            subject.addRDN(BCStyle.CN, commonName);
            Instant now = Instant.now();
            var builder =
                    new JcaX509v3CertificateBuilder(
                            ca.certificate(),
                            BigInteger.valueOf(SERIAL.incrementAndGet()),
                            Date.from(now.minus(Duration.ofHours(1))),
                            Date.from(now.plus(VALIDITY)),
                            subject.build(),
                            keys.getPublic());
            var ext = new JcaX509ExtensionUtils();
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purpose));
            builder.addExtension(
                    Extension.authorityKeyIdentifier,
                    false,
                    ext.createAuthorityKeyIdentifier(ca.certificate()));
            if (!altNames.isEmpty()) {
                builder.addExtension(
                        Extension.subjectAlternativeName,
                        false,
                        new GeneralNames(altNames.toArray(GeneralName[]::new)));
            }
            return new Credential(sign(builder, ca.key()), keys.getPrivate());
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot issue certificate for " + commonName, e);
        }
    }

    /**
     * A fresh ECDSA P-256 key pair (certificates and ServiceAccount token signing): generating it
     * takes microseconds where RSA takes up to seconds on a loaded machine.
     */
    public static KeyPair keyPair() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(
                    new java.security.spec.ECGenParameterSpec("secp256r1"), new SecureRandom());
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** An SSL context that trusts this CA and presents the given client credential. */
    public SSLContext sslContext(Credential client) {
        try {
            char[] password = "changeit".toCharArray();
            KeyStore keyStore = KeyStore.getInstance("PKCS12");
            keyStore.load(null, null);
            keyStore.setKeyEntry(
                    "client",
                    client.key(),
                    password,
                    new X509Certificate[] {client.certificate(), ca.certificate()});
            KeyManagerFactory kmf =
                    KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keyStore, password);
            KeyStore trustStore = KeyStore.getInstance("PKCS12");
            trustStore.load(null, null);
            trustStore.setCertificateEntry("ca", ca.certificate());
            TrustManagerFactory tmf =
                    TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trustStore);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), new SecureRandom());
            return context;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot build SSL context", e);
        }
    }

    /** A kubeconfig document for the given server URL and client credential. */
    public String kubeconfig(String serverUrl, String userName, Credential client) {
        return """
                apiVersion: v1
                kind: Config
                clusters:
                - name: local
                  cluster:
                    server: %s
                    certificate-authority-data: %s
                users:
                - name: %s
                  user:
                    client-certificate-data: %s
                    client-key-data: %s
                contexts:
                - name: local
                  context:
                    cluster: local
                    user: %s
                    namespace: default
                current-context: local
                """
                .formatted(
                        serverUrl,
                        base64(ca.certificatePem()),
                        userName,
                        base64(client.certificatePem()),
                        base64(client.keyPem()),
                        userName);
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey signer)
            throws GeneralSecurityException {
        try {
            var contentSigner = new JcaContentSignerBuilder("SHA256withECDSA").build(signer);
            return new JcaX509CertificateConverter().getCertificate(builder.build(contentSigner));
        } catch (org.bouncycastle.operator.OperatorCreationException e) {
            throw new GeneralSecurityException(e);
        }
    }

    /** PEM encoding of a certificate or key (keys in PKCS#8 or SubjectPublicKeyInfo form). */
    public static String pem(Object object) {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
            if (object instanceof PrivateKey key) {
                writer.writeObject(
                        new org.bouncycastle.util.io.pem.PemObject(
                                "PRIVATE KEY", key.getEncoded()));
            } else {
                writer.writeObject(object);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    private static String base64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    static void writeString(Path file, String content) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

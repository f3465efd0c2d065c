package io.inferencebench.e2e.programs;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Runs inside a pod with a ServiceAccount and reports, one line per call, what the API server lets
 * it do: {@code <label> <HTTP status> <body on one line>}. It uses only the JDK and what the
 * kubelet mounts (the projected token, {@code ca.crt}, {@code namespace}) and the in-cluster
 * environment ({@code KUBERNETES_SERVICE_HOST/PORT}), nothing of the test's classpath.
 *
 * <p>Calls: who am I ({@code SelfSubjectReview}), my rules in my namespace ({@code
 * SelfSubjectRulesReview}), then reads and writes that the runner Role allows or must not allow
 * (writes with {@code dryRun=All}: authorized like real ones, nothing stored). {@code args[0]}: a
 * namespace that is not the pod's.
 */
public final class RunnerRbacProbe {
    private static final Path SA = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");

    private RunnerRbacProbe() {}

    public static void main(String[] args) throws Exception {
        String token = Files.readString(SA.resolve("token")).strip();
        String ns = Files.readString(SA.resolve("namespace")).strip();
        String other = args.length > 0 ? args[0] : "default";
        String base =
                "https://"
                        + System.getenv("KUBERNETES_SERVICE_HOST")
                        + ":"
                        + System.getenv("KUBERNETES_SERVICE_PORT");
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        var certs =
                CertificateFactory.getInstance("X.509")
                        .generateCertificates(
                                new ByteArrayInputStream(Files.readAllBytes(SA.resolve("ca.crt"))));
        int i = 0;
        for (var cert : certs) {
            trust.setCertificateEntry("ca-" + i++, cert);
        }
        TrustManagerFactory tmf =
                TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, tmf.getTrustManagers(), null);
        HttpClient http =
                HttpClient.newBuilder()
                        .sslContext(ssl)
                        .connectTimeout(Duration.ofSeconds(5))
                        .build();
        String here = base + "/api/v1/namespaces/" + ns;
        String there = base + "/api/v1/namespaces/" + other;
        String cm =
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"probe\"}}";
        Probe probe = new Probe(http, token);
        probe.call(
                "whoami",
                "POST",
                base + "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}");
        probe.call(
                "rules",
                "POST",
                base + "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectRulesReview\","
                        + "\"spec\":{\"namespace\":\""
                        + ns
                        + "\"}}");
        probe.call("list-configmaps", "GET", here + "/configmaps", null);
        probe.call("create-configmap", "POST", here + "/configmaps?dryRun=All", cm);
        probe.call("delete-configmap", "DELETE", here + "/configmaps/probe?dryRun=All", null);
        probe.call("list-secrets", "GET", here + "/secrets", null);
        probe.call("list-pods", "GET", here + "/pods", null);
        probe.call("list-jobs", "GET", base + "/apis/batch/v1/namespaces/" + ns + "/jobs", null);
        probe.call(
                "list-benchmarkruns",
                "GET",
                base + "/apis/inferencebench.io/v1alpha1/namespaces/" + ns + "/benchmarkruns",
                null);
        probe.call("list-configmaps-elsewhere", "GET", there + "/configmaps", null);
        probe.call("create-configmap-elsewhere", "POST", there + "/configmaps?dryRun=All", cm);
    }

    private record Probe(HttpClient http, String token) {
        void call(String label, String method, String url, String body) throws Exception {
            HttpRequest.Builder request =
                    HttpRequest.newBuilder(URI.create(url))
                            .timeout(Duration.ofSeconds(10))
                            .header("Authorization", "Bearer " + token)
                            .header("Accept", "application/json");
            if (body != null) {
                request.header("Content-Type", "application/json")
                        .method(method, HttpRequest.BodyPublishers.ofString(body));
            } else {
                request.method(method, HttpRequest.BodyPublishers.noBody());
            }
            HttpResponse<String> response =
                    http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            System.out.println(
                    label + " " + response.statusCode() + " " + response.body().replace('\n', ' '));
        }
    }
}

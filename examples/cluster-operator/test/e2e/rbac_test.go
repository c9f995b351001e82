/*
Copyright 2026 The tenon Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/clouddns/clouddnstest"
	"github.com/tenon-dev/tenon/examples/cluster-operator/internal/dns"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/testing/matchers"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// The manager binary, run as a user bound to nothing but config/rbac/role.yaml (the ClusterRole
// and the Role that controller-gen generates from the +kubebuilder:rbac markers), reconciles a
// sample Cluster to Ready and cleans it up. A verb the markers miss would fail with Forbidden
// here, as on a real cluster, where envtest's administrator would have hidden it.
func TestTheManagerRunsWithOnlyTheGeneratedRBAC(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()

	// As in a deployment, the Role for the DNS credentials is in the operator's namespace, and
	// so is the Secret.
	ensureNamespace(t, systemNamespace)
	token := rand.Text()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "dns-credentials", Namespace: systemNamespace}}
	_, err := ctrl.CreateOrUpdate(ctx, env.Client(), secret, func() error {
		secret.Data = map[string][]byte{dns.TokenKey: []byte(token)}
		return nil
	})
	g.Expect(err).NotTo(HaveOccurred())
	dnsAPI := clouddnstest.NewServer(clouddnstest.Options{Token: token})
	dnsServer := httptest.NewServer(dnsAPI)
	t.Cleanup(dnsServer.Close)

	namespace, directory := env.Namespace(t), env.Namespace(t)
	user := env.NewUser(t, "cluster-operator", testenv.RoleFiles{
		filepath.Join(moduleDir, "config", "rbac", "role.yaml"),
		// What the metrics endpoint's authentication and authorization need.
		filepath.Join(moduleDir, "config", "rbac", "metrics_auth_role.yaml"),
	})
	kubeconfig := writeKubeconfig(t, user.Config())
	startKubelet(t, namespace)

	probeAddress, metricsAddress := freeAddress(t), freeAddress(t)
	output := runManager(t, buildManager(t),
		"--kubeconfig="+kubeconfig,
		"--leader-elect=false",
		"--metrics-bind-address="+metricsAddress, // served over HTTPS, with authentication and authorization (--metrics-secure)
		"--health-probe-bind-address="+probeAddress,
		"--dns-endpoint="+dnsServer.URL,
		"--dns-credentials="+systemNamespace+"/dns-credentials",
		"--directory-namespace="+directory,
		"--zap-log-level=debug",
	)
	g.Eventually(func(g Gomega) {
		resp, err := http.Get("http://" + probeAddress + "/readyz")
		g.Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed(), "the manager's ready check")

	cluster := readSample(t, "apps_v1alpha1_cluster.yaml")
	cluster.Namespace = namespace
	g.Expect(env.Client().Create(ctx, cluster)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(env.Client().Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
		g.Expect(cluster).To(matchers.BeReady())
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed(), "manager output:\n%s", output)
	g.Expect(cluster).To(matchers.BeCompliant())
	g.Expect(cluster).To(matchers.HaveKStatus(conditions.KStatusCurrent))
	g.Expect(dnsAPI.Records()).To(HaveLen(1))
	checkMetricsEndpoint(t, metricsAddress, probeAddress)
	entry := &corev1.ConfigMap{}
	g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: directory, Name: namespace + "." + cluster.Name}, entry)).To(Succeed())

	g.Expect(env.Client().Delete(ctx, cluster)).To(Succeed())

	g.Eventually(cluster).WithTimeout(timeout).WithPolling(interval).Should(matchers.BeGone(env.Client()), "manager output:\n%s", output)
	g.Expect(dnsAPI.Records()).To(BeEmpty())
	g.Expect(entry).To(matchers.BeGone(env.Client()))

	log := output.String()
	g.Expect(log).To(ContainSubstring(`"msg":"starting manager"`), "the output was captured")
	g.Expect(strings.ToLower(log)).NotTo(ContainSubstring("forbidden"), "no request was denied")
	g.Expect(log).NotTo(ContainSubstring(token), "the DNS token never appears in the logs")
}

// checkMetricsEndpoint checks the manager's metrics endpoint as it ships: HTTPS, a bearer token
// the manager checks with a TokenReview, and a SubjectAccessReview for "get /metrics", which
// config/rbac/metrics_reader_role.yaml grants. And its liveness probe.
func checkMetricsEndpoint(t *testing.T, metricsAddress, probeAddress string) {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	token := func(name string, reader bool) string {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		g.Expect(env.Client().Create(ctx, sa)).To(Succeed())
		if reader {
			binding := &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "metrics-reader-"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "metrics-reader"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
			}
			g.Expect(env.Client().Create(ctx, binding)).To(Succeed())
			t.Cleanup(func() { _ = env.Client().Delete(context.Background(), binding) })
		}
		request := &authenticationv1.TokenRequest{}
		g.Expect(env.Client().SubResource("token").Create(ctx, sa, request)).To(Succeed())
		return request.Status.Token
	}
	reader := readRBAC(t, filepath.Join(moduleDir, "config", "rbac", "metrics_reader_role.yaml"))
	g.Expect(env.Client().Create(ctx, reader)).To(Or(Succeed(), Satisfy(apierrors.IsAlreadyExists)))
	scraper, stranger := token("prometheus", true), token("stranger", false)

	// The manager's certificate is self-signed, as controller-runtime makes it without one given.
	httpClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed
	scrape := func(token string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+metricsAddress+"/metrics", http.NoBody)
		g.Expect(err).NotTo(HaveOccurred())
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := httpClient.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		g.Expect(err).NotTo(HaveOccurred())
		return resp.StatusCode, string(body)
	}

	g.Eventually(func(g Gomega) {
		code, body := scrape(scraper)
		g.Expect(code).To(Equal(http.StatusOK), body)
		g.Expect(body).To(ContainSubstring(`tenon_condition{kind="Cluster"`))
		g.Expect(body).To(ContainSubstring(`controller_runtime_reconcile_total{controller="cluster-controller"`))
	}).WithTimeout(timeout).WithPolling(interval).Should(Succeed(), "an authorized scrape")
	code, _ := scrape("")
	g.Expect(code).To(Equal(http.StatusUnauthorized), "no token")
	code, _ = scrape(stranger)
	g.Expect(code).To(Equal(http.StatusForbidden), "a token without get /metrics")

	resp, err := http.Get("http://" + probeAddress + "/healthz")
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "the liveness probe")
}

// readRBAC reads the one ClusterRole of a file of config/rbac.
func readRBAC(t *testing.T, path string) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("failed to read %s: %v", path, err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(data, role); err != nil {
		t.Fatalf("failed to decode %s: %v", path, err)
	}
	return role
}

// buildManager builds the manager binary, as `make build` does, into a temporary directory.
func buildManager(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "manager")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd")
	cmd.Dir = moduleDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("failed to build the manager: %v\n%s", err, out)
	}
	return bin
}

// runManager starts the manager binary with args and returns its output, which grows while it
// runs. When the test ends the manager gets SIGTERM, as from the kubelet, and must exit cleanly
// within ten seconds; it is killed otherwise, so that no process outlives the test.
func runManager(t *testing.T, bin string, args ...string) *output {
	t.Helper()
	out := &output{}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("failed to start the manager: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		timer := time.NewTimer(10 * time.Second)
		defer timer.Stop()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the manager did not exit cleanly on SIGTERM: %v\n%s", err, out)
			}
		case <-timer.C:
			_ = cmd.Process.Kill()
			err := <-exited
			t.Errorf("the manager did not exit within 10s of SIGTERM and was killed (%v)\n%s", err, out)
		}
	})
	return out
}

// writeKubeconfig writes a kubeconfig file for cfg, for a program such as the manager binary.
func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthority:     cfg.CAFile,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos["operator"] = &clientcmdapi.AuthInfo{
		ClientCertificate:     cfg.CertFile,
		ClientCertificateData: cfg.CertData,
		ClientKey:             cfg.KeyFile,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
	}
	kc.Contexts["operator"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "operator"}
	kc.CurrentContext = "operator"
	path := filepath.Join(t.TempDir(), "operator.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatalf("failed to write the kubeconfig: %v", err)
	}
	return path
}

// freeAddress returns a local address with a port that was free a moment ago.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("failed to find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// readSample reads a Cluster from config/samples.
func readSample(t *testing.T, name string) *appsv1alpha1.Cluster {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleDir, "config", "samples", name))
	if err != nil {
		t.Fatalf("failed to read the sample: %v", err)
	}
	cluster := &appsv1alpha1.Cluster{}
	if err := yaml.UnmarshalStrict(data, cluster); err != nil {
		t.Fatalf("failed to decode the sample %s: %v", name, err)
	}
	if cluster.Kind != "Cluster" {
		t.Fatalf("sample %s is a %s, not a Cluster", name, cluster.Kind)
	}
	return cluster
}

// output collects a process's output; it is safe for concurrent use.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

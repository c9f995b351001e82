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

package requeue_test

import (
	"context"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tenon-dev/tenon/conditions"
	"github.com/tenon-dev/tenon/fencing"
	"github.com/tenon-dev/tenon/internal/testtypes"
	"github.com/tenon-dev/tenon/patch"
	"github.com/tenon-dev/tenon/requeue"
	"github.com/tenon-dev/tenon/testing/testenv"
)

var updateErrorTable = flag.Bool("update-error-table", false,
	"rewrite the error table of docs/requeue.md from what TestAPIServerErrorsAreTreatedAsDocumented observed")

// errorCase is one error the API server (or tenon's fence) gives a controller, produced against
// envtest, with what the documentation says requeue does with it.
type errorCase struct {
	// name is the test's name and the table's "how" column.
	name string
	// produce sends the request that fails, and returns its error.
	produce func(ctx context.Context, t *testing.T, ns string) error
	// want* are the table's columns as docs/requeue.md states them.
	wantResponse, wantClass, wantBackoff, wantReport string
}

// errorLabel marks the objects the admission policies and webhooks of the test refuse, so that
// they refuse nothing else.
const errorLabel = "requeue.tenon.dev/refuse"

func TestAPIServerErrorsAreTreatedAsDocumented(t *testing.T) {
	const (
		quiet      = "quiet requeue with backoff, no error"
		retried    = "error: logged, counted, retried with backoff"
		terminal   = "terminal error: logged once, not retried"
		nothing    = "nothing changes"
		reconciles = "`Reconciling` True (RetryingAfterError), `Ready` left alone"
	)
	cases := []errorCase{
		{
			name:         "an update of a stale copy",
			produce:      staleUpdate,
			wantResponse: "409 Conflict", wantClass: "conflict", wantBackoff: quiet, wantReport: nothing,
		},
		{
			name:         "a server-side apply of a field another field manager owns",
			produce:      applyConflict,
			wantResponse: "409 Conflict", wantClass: "field_conflict", wantBackoff: retried,
			wantReport: "`Stalled` True and `Ready` False (FieldManagerConflict)",
		},
		{
			name:         "a create that exists already",
			produce:      createTwice,
			wantResponse: "409 AlreadyExists", wantClass: "already_exists", wantBackoff: quiet, wantReport: nothing,
		},
		{
			name:         "a field the API server's validation refuses",
			produce:      invalidField,
			wantResponse: "422 Invalid", wantClass: "invalid", wantBackoff: terminal,
			wantReport: "`Stalled` True and `Ready` False (Invalid)",
		},
		{
			name:         "a ValidatingAdmissionPolicy's denial",
			produce:      policyDenial,
			wantResponse: "422 Invalid", wantClass: "invalid", wantBackoff: terminal,
			wantReport: "`Stalled` True and `Ready` False (Invalid)",
		},
		{
			name:         "a verb RBAC does not grant",
			produce:      rbacDenial,
			wantResponse: "403 Forbidden", wantClass: "auth", wantBackoff: retried, wantReport: reconciles,
		},
		{
			name:         "a create in a namespace being deleted (NamespaceLifecycle admission)",
			produce:      createInTerminatingNamespace,
			wantResponse: "403 Forbidden", wantClass: "auth", wantBackoff: retried, wantReport: reconciles,
		},
		{
			name:         "a validating webhook's denial (controller-runtime's admission.Denied)",
			produce:      webhookDenial("deny", admission.Denied("replicas must be odd")),
			wantResponse: "403 Forbidden", wantClass: "auth", wantBackoff: retried, wantReport: reconciles,
		},
		{
			name:         "a validating webhook's denial without a status code",
			produce:      webhookDenial("deny-without-code", admission.Response{}),
			wantResponse: "400 (no reason)", wantClass: "invalid", wantBackoff: terminal,
			wantReport: "`Stalled` True and `Ready` False (Failed)",
		},
		{
			name:         "a get of an object that does not exist",
			produce:      getMissing,
			wantResponse: "404 NotFound", wantClass: "not_found", wantBackoff: retried, wantReport: reconciles,
		},
		{
			name:         "a paged list continued after etcd compacted its revision",
			produce:      continueAfterCompaction,
			wantResponse: "410 Expired", wantClass: "gone", wantBackoff: quiet, wantReport: nothing,
		},
		{
			name:         "an eviction a PodDisruptionBudget still being processed holds (client-go's retries off)",
			produce:      evictionHeldByABudget,
			wantResponse: "429 TooManyRequests, Retry-After 10", wantClass: "throttled",
			wantBackoff: "quiet requeue after the server's Retry-After (10s), no error", wantReport: nothing,
		},
		{
			name:         "a webhook that cannot be reached, with failurePolicy Fail",
			produce:      unreachableWebhook,
			wantResponse: "500 InternalError", wantClass: "transient", wantBackoff: retried, wantReport: reconciles,
		},
		{
			name:         "a service proxy request to a Service without endpoints",
			produce:      proxyWithoutEndpoints,
			wantResponse: "503 ServiceUnavailable", wantClass: "transient", wantBackoff: retried, wantReport: reconciles,
		},
		{
			name:         "a list at a resourceVersion the API server has not reached (client-go's retries off)",
			produce:      listFromTheFuture,
			wantResponse: "504 Timeout, Retry-After 1", wantClass: "transient", wantBackoff: retried, wantReport: reconciles,
		},
		{
			name:         "a write refused by tenon's leader election fence",
			produce:      fencedWrite,
			wantResponse: "none: not sent", wantClass: "fenced", wantBackoff: quiet, wantReport: nothing,
		},
		{
			name:         "a condition tenon's patch helper refuses to write as invalid",
			produce:      invalidConditionWrite,
			wantResponse: "none: not sent", wantClass: "invalid", wantBackoff: terminal, wantReport: "`Stalled` True and `Ready` False (Failed)",
		},
	}

	var rows []errorRow
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			err := tc.produce(ctx, t, env.Namespace(t))
			g.Expect(err).To(HaveOccurred())
			row := observe(tc.name, err)
			want := errorRow{how: tc.name, response: tc.wantResponse, class: tc.wantClass, backoff: tc.wantBackoff, report: tc.wantReport}
			g.Expect(row).To(Equal(want), "%v\n%s", err, cmp.Diff(want, row, cmp.AllowUnexported(errorRow{})))
			rows = append(rows, row)
		})
	}
	if t.Failed() {
		return
	}
	if len(rows) != len(cases) {
		t.Logf("ran %d of the %d cases (-run): the error table is not checked", len(rows), len(cases))
		return
	}
	checkErrorTable(t, renderErrorTable(rows))
}

// errorRow is one row of the error table of docs/requeue.md.
type errorRow struct {
	how, response, class, backoff, report string
}

// observe runs err through Classify, WithBackoff and Report, and describes what each did.
func observe(how string, err error) errorRow {
	row := errorRow{how: how, response: describeResponse(err), class: requeue.Classify(err).String()}

	r := requeue.WithBackoff(reconcile.Func(func(context.Context, reconcile.Request) (ctrl.Result, error) {
		return ctrl.Result{}, err
	}), requeue.BackoffOptions{Name: "error-table", Registerer: prometheus.NewRegistry()})
	res, retErr := r.Reconcile(context.Background(), reconcile.Request{})
	switch {
	case retErr == nil && res.RequeueAfter > 0 && requeue.Classify(err) == requeue.ClassThrottled:
		row.backoff = fmt.Sprintf("quiet requeue after the server's Retry-After (%s), no error", res.RequeueAfter)
	case retErr == nil && res.RequeueAfter > 0:
		row.backoff = "quiet requeue with backoff, no error"
	case errors.Is(retErr, reconcile.TerminalError(nil)):
		row.backoff = "terminal error: logged once, not retried"
	case retErr != nil:
		row.backoff = "error: logged, counted, retried with backoff"
	default:
		row.backoff = "done"
	}

	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 2}}
	conditions.MarkTrue(w, conditions.Ready, conditions.ReasonSucceeded, "")
	before := w.DeepCopy()
	_ = requeue.Report(w, err)
	stalled, reconciling := conditions.Get(w, conditions.Stalled), conditions.Get(w, conditions.Reconciling)
	switch {
	case stalled != nil && conditions.IsFalse(w, conditions.Ready):
		row.report = fmt.Sprintf("`Stalled` %s and `Ready` False (%s)", stalled.Status, stalled.Reason)
	case reconciling != nil && conditions.IsTrue(w, conditions.Ready):
		row.report = fmt.Sprintf("`Reconciling` %s (%s), `Ready` left alone", reconciling.Status, reconciling.Reason)
	case cmp.Equal(before, w):
		row.report = "nothing changes"
	default:
		row.report = fmt.Sprintf("unexpected: %v", w.Status.Conditions)
	}
	return row
}

// describeResponse returns the status code and reason of the API server's answer, with its
// Retry-After.
func describeResponse(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return "none: not sent"
	}
	s := status.Status()
	reason := string(s.Reason)
	if reason == "" {
		reason = "(no reason)"
	}
	out := fmt.Sprintf("%d %s", s.Code, reason)
	if s.Details != nil && s.Details.RetryAfterSeconds > 0 {
		out += fmt.Sprintf(", Retry-After %d", s.Details.RetryAfterSeconds)
	}
	return out
}

// The error table's place in docs/requeue.md.
const (
	errorTableStart = "<!-- error table: generated by TestAPIServerErrorsAreTreatedAsDocumented (requeue/errors_test.go); do not edit -->"
	errorTableEnd   = "<!-- end of error table -->"
)

func renderErrorTable(rows []errorRow) string {
	var b strings.Builder
	b.WriteString("| The API server answers | to | Class | `WithBackoff` | `Report` |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s |\n", r.response, r.how, r.class, r.backoff, r.report)
	}
	return b.String()
}

// checkErrorTable fails t when the error table of docs/requeue.md is not table; with
// -update-error-table it rewrites it instead.
func checkErrorTable(t *testing.T, table string) {
	t.Helper()
	path := filepath.Join("..", "docs", "requeue.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("failed to read the error table: %v", err)
	}
	before, rest, found := strings.Cut(string(doc), errorTableStart+"\n")
	current, after, foundEnd := strings.Cut(rest, errorTableEnd)
	if !found || !foundEnd {
		t.Fatalf("%s has no error table between %q and %q", path, errorTableStart, errorTableEnd)
	}
	if current == table {
		return
	}
	if *updateErrorTable {
		if err := os.WriteFile(path, []byte(before+errorTableStart+"\n"+table+errorTableEnd+after), 0o644); err != nil {
			t.Fatalf("failed to rewrite the error table: %v", err)
		}
		return
	}
	t.Errorf("the error table of %s is not what the API server's errors get (-want, +got); rewrite it with\n"+
		"go test ./requeue -run TestAPIServerErrorsAreTreatedAsDocumented -update-error-table\n%s", path, cmp.Diff(current, table))
}

// configMap returns a ConfigMap in ns named name (generated from it when it ends with "-").
func configMap(ns, name string, labels map[string]string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Labels: labels}}
	if strings.HasSuffix(name, "-") {
		cm.GenerateName = name
	} else {
		cm.Name = name
	}
	return cm
}

func staleUpdate(ctx context.Context, t *testing.T, ns string) error {
	c := env.Client()
	cm := configMap(ns, "stale", nil)
	if err := c.Create(ctx, cm); err != nil {
		t.Fatalf("failed to create the ConfigMap: %v", err)
	}
	stale := cm.DeepCopy()
	cm.Data = map[string]string{"a": "1"}
	if err := c.Update(ctx, cm); err != nil {
		t.Fatalf("failed to update the ConfigMap: %v", err)
	}
	stale.Data = map[string]string{"a": "2"}
	return c.Update(ctx, stale)
}

func applyConflict(ctx context.Context, t *testing.T, ns string) error {
	if err := applyConfigMapColor(ctx, env.Client(), ns, "gitops", "blue"); err != nil {
		t.Fatalf("failed to apply as gitops: %v", err)
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "w-config", Namespace: ns},
		Data:       map[string]string{"color": "green"},
	}
	_, err := newApplier().Apply(ctx, cm)
	return err
}

func createTwice(ctx context.Context, t *testing.T, ns string) error {
	if err := env.Client().Create(ctx, configMap(ns, "twice", nil)); err != nil {
		t.Fatalf("failed to create the ConfigMap: %v", err)
	}
	return env.Client().Create(ctx, configMap(ns, "twice", nil))
}

func invalidField(ctx context.Context, _ *testing.T, ns string) error {
	cm := configMap(ns, "invalid", nil)
	cm.Data = map[string]string{"not a key!": "x"}
	return env.Client().Create(ctx, cm)
}

// refusedCreate creates labelled ConfigMaps until the API server refuses one: admission
// policies and webhooks take effect a moment after they are created.
func refusedCreate(ctx context.Context, t *testing.T, ns, label string) error {
	t.Helper()
	var refused error
	NewWithT(t).Eventually(func() error {
		refused = env.Client().Create(ctx, configMap(ns, "refused-", map[string]string{errorLabel: label}))
		return refused
	}).WithContext(ctx).WithTimeout(30*time.Second).WithPolling(100*time.Millisecond).Should(HaveOccurred(),
		"the %s admission never refused the create", label)
	return refused
}

// createAndDelete creates obj as the environment's administrator and deletes it when the test
// ends.
func createAndDelete(ctx context.Context, t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client().Create(ctx, obj); err != nil {
		t.Fatalf("failed to create %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() {
		if err := client.IgnoreNotFound(env.Client().Delete(context.Background(), obj)); err != nil {
			t.Errorf("failed to delete %T %s: %v", obj, obj.GetName(), err)
		}
	})
}

func policyDenial(ctx context.Context, t *testing.T, ns string) error {
	name := "requeue-errors-" + ns
	createAndDelete(ctx, t, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "refused by the policy"}},
		},
	})
	createAndDelete(ctx, t, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
				ObjectSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{errorLabel: "policy"}},
			},
		},
	})
	return refusedCreate(ctx, t, ns, "policy")
}

func rbacDenial(ctx context.Context, t *testing.T, ns string) error {
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
	}
	u := env.NewUser(t, "requeue-reader", testenv.Roles{role}, testenv.RoleNamespace(ns))
	c, err := client.New(u.Config(), client.Options{Scheme: env.Scheme()})
	if err != nil {
		t.Fatalf("failed to build the user's client: %v", err)
	}
	return c.Create(ctx, configMap(ns, "forbidden", nil))
}

func createInTerminatingNamespace(ctx context.Context, t *testing.T, _ string) error {
	g := NewWithT(t)
	c := env.Client()
	terminating := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "requeue-terminating-"}}
	g.Expect(c.Create(ctx, terminating)).To(Succeed())
	// A ConfigMap whose finalizer holds the namespace in Terminating until the test ends.
	held := configMap(terminating.Name, "held", nil)
	held.Finalizers = []string{"requeue.tenon.dev/hold"}
	g.Expect(c.Create(ctx, held)).To(Succeed())
	t.Cleanup(func() {
		held.Finalizers = nil
		if err := client.IgnoreNotFound(c.Update(context.Background(), held)); err != nil {
			t.Errorf("failed to release the ConfigMap that holds the namespace: %v", err)
		}
	})
	g.Expect(c.Delete(ctx, terminating)).To(Succeed())
	var refused error
	g.Eventually(func() error {
		refused = c.Create(ctx, configMap(terminating.Name, "late-", nil))
		return refused
	}).WithContext(ctx).WithTimeout(30 * time.Second).Should(HaveOccurred())
	return refused
}

// webhookDenial returns a producer of the denial of a validating webhook whose handler always
// answers response, served over TLS by the test.
func webhookDenial(path string, response admission.Response) func(ctx context.Context, t *testing.T, ns string) error {
	return func(ctx context.Context, t *testing.T, ns string) error {
		handler := &admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
			return response
		})}
		server := httptest.NewTLSServer(handler)
		t.Cleanup(server.Close)
		registerWebhook(ctx, t, ns, path, server.URL+"/"+path, caBundle(server))
		return refusedCreate(ctx, t, ns, path)
	}
}

func unreachableWebhook(ctx context.Context, t *testing.T, ns string) error {
	server := httptest.NewTLSServer(nil)
	bundle := caBundle(server)
	url := server.URL + "/gone"
	server.Close() // nothing listens at url any more
	registerWebhook(ctx, t, ns, "unreachable", url, bundle)
	return refusedCreate(ctx, t, ns, "unreachable")
}

// caBundle returns the PEM of the test server's certificate, which the API server is to trust.
func caBundle(server *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
}

// registerWebhook registers a validating webhook at url for creates of ConfigMaps in ns that
// have the label errorLabel=label, which fails closed.
func registerWebhook(ctx context.Context, t *testing.T, ns, label, url string, caBundle []byte) {
	fail, none, timeout := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone, int32(5)
	createAndDelete(ctx, t, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "requeue-" + label + "-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    label + ".requeue.tenon.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{errorLabel: label}},
		}},
	})
}

func getMissing(ctx context.Context, _ *testing.T, ns string) error {
	return env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: "missing"}, &corev1.ConfigMap{})
}

func continueAfterCompaction(ctx context.Context, t *testing.T, ns string) error {
	g := NewWithT(t)
	c := env.Client()
	for range 2 {
		g.Expect(c.Create(ctx, configMap(ns, "page-", nil))).To(Succeed())
	}
	var page corev1.ConfigMapList
	g.Expect(c.List(ctx, &page, client.InNamespace(ns), client.Limit(1))).To(Succeed())
	g.Expect(page.Continue).NotTo(BeEmpty())
	// A write after the list, so that compacting up to the current revision removes the list's.
	g.Expect(c.Create(ctx, configMap(ns, "page-", nil))).To(Succeed())
	// The API server's watch cache keeps the recent past; a restart empties it, so the rest of
	// the list must come from etcd, which no longer has that revision.
	_, err := env.CompactEtcd(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.RestartAPIServer(ctx)).To(Succeed())
	return c.List(ctx, &page, client.InNamespace(ns), client.Limit(1), client.Continue(page.Continue))
}

func evictionHeldByABudget(ctx context.Context, t *testing.T, ns string) error {
	g := NewWithT(t)
	c := env.Client()
	labels := map[string]string{"app": "db"}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: ns, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "db"}}},
	}
	g.Expect(c.Create(ctx, pod)).To(Succeed())
	// A pending pod is evicted whatever its budget says; a running one is held.
	pod.Status.Phase = corev1.PodRunning
	g.Expect(c.Status().Update(ctx, pod)).To(Succeed())
	one := intstr.FromInt32(1)
	// No disruption controller runs in the environment, so the budget stays unprocessed.
	g.Expect(c.Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}},
	})).To(Succeed())
	cs := clientset(t)
	return cs.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(pod.Name).SubResource("eviction").
		Body(&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: ns}}).
		MaxRetries(0).Do(ctx).Error()
}

func proxyWithoutEndpoints(ctx context.Context, t *testing.T, ns string) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}, Selector: map[string]string{"app": "db"}},
	}
	if err := env.Client().Create(ctx, svc); err != nil {
		t.Fatalf("failed to create the Service: %v", err)
	}
	return clientset(t).CoreV1().RESTClient().Get().Namespace(ns).Resource("services").Name("db:http").
		SubResource("proxy").Suffix("healthz").MaxRetries(0).Do(ctx).Error()
}

func listFromTheFuture(ctx context.Context, t *testing.T, ns string) error {
	var list corev1.ConfigMapList
	if err := env.Client().List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatalf("failed to list ConfigMaps: %v", err)
	}
	var rv int64
	if _, err := fmt.Sscan(list.ResourceVersion, &rv); err != nil {
		t.Fatalf("failed to read the list's resourceVersion %q: %v", list.ResourceVersion, err)
	}
	return clientset(t).CoreV1().RESTClient().Get().Namespace(ns).Resource("configmaps").
		Param("resourceVersion", fmt.Sprint(rv+1_000_000)).Param("resourceVersionMatch", string(metav1.ResourceVersionMatchNotOlderThan)).
		MaxRetries(0).Do(ctx).Error()
}

func fencedWrite(ctx context.Context, t *testing.T, ns string) error {
	inner, err := resourcelock.NewFromKubeconfig(resourcelock.LeasesResourceLock, ns, "requeue-errors",
		resourcelock.ResourceLockConfig{Identity: "replica-a"}, env.Config(), 10*time.Second)
	if err != nil {
		t.Fatalf("failed to build the lease lock: %v", err)
	}
	// The lock never acquired the lease: its fence is closed.
	lock, err := fencing.NewLock(inner)
	if err != nil {
		t.Fatalf("failed to build the fencing lock: %v", err)
	}
	cfg := env.Config()
	cfg.Wrap(lock.WrapTransport)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme()})
	if err != nil {
		t.Fatalf("failed to build the fenced client: %v", err)
	}
	return c.Create(ctx, configMap(ns, "fenced", nil))
}

// invalidConditionWrite patches a Widget with a condition whose reason the API server would
// reject: the patch helper refuses it before sending anything.
func invalidConditionWrite(ctx context.Context, t *testing.T, ns string) error {
	w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "invalid-condition", Namespace: ns}}
	if err := env.Client().Create(ctx, w); err != nil {
		t.Fatalf("failed to create the Widget: %v", err)
	}
	h, err := patch.NewHelper(w, env.Client())
	if err != nil {
		t.Fatalf("failed to create the patch helper: %v", err)
	}
	conditions.MarkFalse(w, conditions.Ready, "rolling out", "1 of 3 replicas ready")
	return h.Patch(ctx, w)
}

func clientset(t *testing.T) *kubernetes.Clientset {
	cs, err := kubernetes.NewForConfig(env.Config())
	if err != nil {
		t.Fatalf("failed to build a clientset: %v", err)
	}
	return cs
}

// newApplier returns the Applier of the test's controller.
func newApplier() *patch.Applier {
	return patch.NewApplier(env.Client(), "widget-controller", patch.ApplierOptions{})
}

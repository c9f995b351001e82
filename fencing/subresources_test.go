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

package fencing_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/fencing"
	"github.com/tenon-dev/tenon/testing/testenv"
)

// wire records what the fenced transport let through to the network: every request, with the
// protocol it is upgraded to or the one its response came over.
type wire struct {
	mu   sync.Mutex
	seen []string
}

func (w *wire) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		// client-go's streaming round trippers, underneath, add the Upgrade header; the
		// subprotocol's header says which one will.
		var proto string
		switch {
		case req.Header.Get("Sec-Websocket-Protocol") != "":
			proto = "websocket"
		case req.Header.Get("X-Stream-Protocol-Version") != "":
			proto = "SPDY/3.1"
		}
		resp, err := rt.RoundTrip(req)
		if proto == "" && resp != nil {
			proto = resp.Proto
		}
		w.mu.Lock()
		w.seen = append(w.seen, proto)
		w.mu.Unlock()
		return resp, err
	})
}

// take returns what was recorded since the last take.
func (w *wire) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := w.seen
	w.seen = nil
	return seen
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// action is a request that acts through a subresource, over one protocol.
type action struct {
	name        string
	subresource string
	// protocol is what the request goes out as: the protocol it upgrades to, or HTTP/2.0.
	protocol string
	do       func(ctx context.Context, cfg *rest.Config, ns, pod string) error
}

// streamURL is the URL of a pod's exec or attach subresource, as kubectl builds it.
func streamURL(cfg *rest.Config, ns, pod, subresource string) (*rest.Request, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	req := cs.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(pod).SubResource(subresource)
	if subresource == "exec" {
		return req.VersionedParams(&corev1.PodExecOptions{Command: []string{"promote"}, Stdout: true}, clientgoscheme.ParameterCodec), nil
	}
	return req.VersionedParams(&corev1.PodAttachOptions{Stdout: true}, clientgoscheme.ParameterCodec), nil
}

func stream(subresource string, websocket bool) func(ctx context.Context, cfg *rest.Config, ns, pod string) error {
	return func(ctx context.Context, cfg *rest.Config, ns, pod string) error {
		req, err := streamURL(cfg, ns, pod, subresource)
		if err != nil {
			return err
		}
		var exec remotecommand.Executor
		if websocket {
			exec, err = remotecommand.NewWebSocketExecutor(cfg, http.MethodGet, req.URL().String())
		} else {
			exec, err = remotecommand.NewSPDYExecutor(cfg, http.MethodPost, req.URL())
		}
		if err != nil {
			return err
		}
		return exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: io.Discard})
	}
}

func portForward(websocket bool) func(ctx context.Context, cfg *rest.Config, ns, pod string) error {
	return func(_ context.Context, cfg *rest.Config, ns, pod string) error {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		u := cs.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(pod).SubResource("portforward").URL()
		if websocket {
			d, err := portforward.NewSPDYOverWebsocketDialer(u, cfg)
			if err != nil {
				return err
			}
			conn, _, err := d.Dial(portforward.PortForwardProtocolV1Name)
			if err == nil {
				_ = conn.Close()
			}
			return err
		}
		rt, upgrader, err := spdy.RoundTripperFor(cfg)
		if err != nil {
			return err
		}
		conn, _, err := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, http.MethodPost, u).Dial(portforward.PortForwardProtocolV1Name)
		if err == nil {
			_ = conn.Close()
		}
		return err
	}
}

func proxyGet(resource, name string) func(ctx context.Context, cfg *rest.Config, ns, pod string) error {
	return func(ctx context.Context, cfg *rest.Config, ns, pod string) error {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		if name == "" {
			name = pod + ":8080"
		}
		return cs.CoreV1().RESTClient().Get().Namespace(ns).Resource(resource).Name(name).SubResource("proxy").
			Suffix("promote").MaxRetries(0).Do(ctx).Error()
	}
}

func evict(ctx context.Context, cfg *rest.Config, ns, pod string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return cs.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns}})
}

func bind(ctx context.Context, cfg *rest.Config, ns, pod string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return cs.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns},
		Target:     corev1.ObjectReference{Kind: "Node", Name: "node-1"},
	}, metav1.CreateOptions{})
}

// overHTTP1 sends do's requests over HTTP/1.1: client-go speaks HTTP/2 to an API server over
// TLS unless TLS negotiates otherwise.
func overHTTP1(do func(ctx context.Context, cfg *rest.Config, ns, pod string) error) func(ctx context.Context, cfg *rest.Config, ns, pod string) error {
	return func(ctx context.Context, cfg *rest.Config, ns, pod string) error {
		cfg = rest.CopyConfig(cfg)
		cfg.NextProtos = []string{"http/1.1"}
		return do(ctx, cfg, ns, pod)
	}
}

var actions = []action{
	{"exec over WebSocket", "exec", "websocket", stream("exec", true)},
	{"exec over SPDY", "exec", "SPDY/3.1", stream("exec", false)},
	{"attach over WebSocket", "attach", "websocket", stream("attach", true)},
	{"attach over SPDY", "attach", "SPDY/3.1", stream("attach", false)},
	{"port-forward over WebSocket", "portforward", "websocket", portForward(true)},
	{"port-forward over SPDY", "portforward", "SPDY/3.1", portForward(false)},
	{"a get through a pod's proxy", "proxy", "HTTP/2.0", proxyGet("pods", "")},
	{"a get through a service's proxy", "proxy", "HTTP/2.0", proxyGet("services", "db:http")},
	{"a get through a service's proxy over HTTP/1.1", "proxy", "HTTP/1.1", overHTTP1(proxyGet("services", "db:http"))},
	{"an eviction", "eviction", "HTTP/2.0", evict},
	{"an eviction over HTTP/1.1", "eviction", "HTTP/1.1", overHTTP1(evict)},
	{"a binding", "binding", "HTTP/2.0", bind},
	{"a binding over HTTP/1.1", "binding", "HTTP/1.1", overHTTP1(bind)},
}

// TestAFencedLeaderCannotActThroughSubresourcesOrUpgradedConnections sends every request that
// acts through a subresource, over each protocol client-go speaks for it, as a leader whose fence
// is open (they reach the API server), paused past its lease, and deposed by another holder
// (the fence refuses them, and the API server's audit log has none of them).
func TestAFencedLeaderCannotActThroughSubresourcesOrUpgradedConnections(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "leader"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "pods/exec", "pods/attach", "pods/portforward", "pods/proxy", "pods/eviction", "pods/binding", "services", "services/proxy"}, Verbs: []string{"*"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"*"}},
		},
	}
	u := env.NewUser(t, "subresource-leader", testenv.Roles{role}, testenv.RoleNamespace(ns))
	inner, err := resourcelock.NewFromKubeconfig(resourcelock.LeasesResourceLock, ns, leaseName,
		resourcelock.ResourceLockConfig{Identity: u.Name()}, u.Config(), renewDeadline)
	g.Expect(err).NotTo(HaveOccurred())
	lock, err := fencing.NewLock(inner)
	g.Expect(err).NotTo(HaveOccurred())
	w := &wire{}
	cfg := u.Config()
	cfg.Wrap(w.wrap) // inside the fence: what reaches the network
	cfg.Wrap(lock.WrapTransport)

	g.Expect(env.Client().Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}, Selector: map[string]string{"app": "db"}},
	})).To(Succeed())

	renew := func(seconds int32) {
		now := metav1.NowMicro()
		g.Expect(lock.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: u.Name(), LeaseDurationSeconds: int(seconds), AcquireTime: metav1.Now(), RenewTime: metav1.Time(now)})).To(Succeed())
	}
	now := metav1.Now()
	g.Expect(lock.Create(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: u.Name(), LeaseDurationSeconds: 60, AcquireTime: now, RenewTime: now})).To(Succeed())

	states := []struct {
		name string
		// enter brings the leader into the state.
		enter func(g Gomega)
		open  bool
	}{
		{"a leader whose fence is open", func(Gomega) {}, true},
		{"a leader paused past its lease", func(g Gomega) {
			renew(1) // a lease of a second: the fence closes 0.8 s after this renewal started
			g.Eventually(lock.Check).WithTimeout(5 * time.Second).Should(HaveOccurred())
		}, false},
		{"a leader deposed by another holder", func(g Gomega) {
			renew(60)
			g.Expect(lock.Check()).To(Succeed())
			var lease coordinationv1.Lease
			g.Expect(env.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: leaseName}, &lease)).To(Succeed())
			standby := "replica-b"
			lease.Spec.HolderIdentity = &standby
			g.Expect(env.Client().Update(ctx, &lease)).To(Succeed())
			_, _, err := lock.Get(ctx) // the leader elector's next Get sees the takeover
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(lock.Check()).To(HaveOccurred())
		}, false},
	}
	for si, state := range states {
		t.Run(state.name, func(t *testing.T) {
			g := NewWithT(t)
			state.enter(g)
			before, err := env.AuditLog().Mark(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			for ai, a := range actions {
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("db-%d-%d", si, ai), Namespace: ns, Labels: map[string]string{"app": "db"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "db"}}},
				}
				g.Expect(env.Client().Create(ctx, pod)).To(Succeed())
				w.take()
				err := a.do(ctx, cfg, ns, pod.Name)
				sent := w.take()
				if state.open {
					g.Expect(sent).To(ContainElement(a.protocol), "%s must go out over %s", a.name, a.protocol)
					continue
				}
				g.Expect(sent).To(BeEmpty(), "%s must not leave the process: %v", a.name, err)
				var refused *fencing.RefusedError
				g.Expect(errors.As(err, &refused) || strings.Contains(fmt.Sprint(err), "write refused by the fence")).To(BeTrue(),
					"%s must fail with the fence's refusal, got %v", a.name, err)
			}
			events, err := env.AuditLog().Since(before)
			g.Expect(err).NotTo(HaveOccurred())
			got := events.ByUser(u.Name()).Count(func(e testenv.AuditEvent) string { return e.Subresource })
			delete(got, "") // the lease's own requests
			want := map[string]int{}
			if state.open {
				for _, a := range actions {
					want[a.subresource]++
				}
			}
			g.Expect(got).To(Equal(want), "the requests of the leader that reached the API server, by subresource")
		})
	}
}

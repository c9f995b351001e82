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

package realkinds

import (
	"path/filepath"
	"runtime"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CRDDirectory returns the directory of the CRDs the kinds of other projects need, for
// testenv.Options.CRDDirectoryPaths.
func CRDDirectory() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "crds")
}

// Kind is a kind the tests draw objects of.
type Kind struct {
	// GVK is the kind, at the version the tests read and write (a CRD's storage version).
	GVK schema.GroupVersionKind
	// Resource is its plural resource name.
	Resource string
	// Family groups kinds by the project that defines them: "core", "apps", "batch" for
	// Kubernetes' own, and "cluster-api", "cert-manager", "gateway-api", "flux", "kueue", "keda".
	Family string
	// Namespaced is false for a cluster-scoped kind.
	Namespaced bool
	// NoStatus is set for a kind without a status (ConfigMap, Secret).
	NoStatus bool
	// New returns an empty typed object of the kind (client-go's Go type) for a built-in kind,
	// and nil for a custom resource, which the tests handle as unstructured objects.
	New func() client.Object
	// Seed is a valid object of the kind to create, without its name and namespace, status
	// included; the status is written through the status subresource after the creation.
	Seed func() map[string]any
	// Mutable are the top-level parts of the object (and of spec) that an update may change: a
	// kind whose spec the API server keeps immutable (a Pod's, a Job's template) lists only what
	// may change, so that most generated edits are ones a controller could make. The others are
	// edited too, now and then: the API server's refusal is an outcome the tests predict.
	Mutable []string
}

// Builtin reports whether k is one of Kubernetes' own kinds.
func (k Kind) Builtin() bool { return k.New != nil }

// Roots returns the parts of k's objects the generator edits (see [Gen.EditObject]), each as
// often as it should be drawn: metadata's labels, annotations, finalizers and owner references,
// the parts an update may change (Mutable, or the spec, the status and a ConfigMap's or a Secret's
// data), and, now and then, the whole spec even where the API server refuses changes to it; and
// status.conditions often, where the seed has conditions.
func Roots(k Kind) []string {
	roots := []string{"metadata.labels", "metadata.annotations", "metadata.finalizers", "metadata.ownerReferences"}
	switch {
	case len(k.Mutable) > 0:
		for _, m := range k.Mutable {
			if m != "metadata" {
				roots = append(roots, m, m)
			}
		}
		if _, hasSpec := k.Seed()["spec"]; hasSpec {
			roots = append(roots, "spec")
		}
	case k.NoStatus:
		roots = append(roots, "data", "data", "data")
	default:
		roots = append(roots, "spec", "spec", "spec", "status", "status", "status")
	}
	// Conditions often: the shape whose items carry fields of their own (a heartbeat, a severity).
	if st, _ := k.Seed()["status"].(map[string]any); st != nil && st["conditions"] != nil {
		roots = append(roots, "status.conditions", "status.conditions", "status.conditions")
	}
	return roots
}

// condition returns a condition of the metav1.Condition shape.
func condition(t, status, reason string) map[string]any {
	return map[string]any{"type": t, "status": status, "reason": reason, "message": "seeded",
		"lastTransitionTime": "2026-01-01T00:00:00Z"}
}

func podTemplate(app string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": app}},
		"spec": map[string]any{"containers": []any{map[string]any{
			"name": "main", "image": "registry.example.com/app:1.0",
			"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}},
			"ports":     []any{map[string]any{"name": "http", "containerPort": int64(8080), "protocol": "TCP"}},
			"env":       []any{map[string]any{"name": "MODE", "value": "seed"}},
		}}},
	}
}

// Kinds returns every kind the tests draw from: at least one of each family.
func Kinds() []Kind {
	return slices.Concat(coreKinds(), workloadKinds(), clusterAPIKinds(), otherCRDKinds())
}

// coreKinds returns the core API group's kinds: configuration, a Service, a cluster-scoped Node
// and a Pod.
func coreKinds() []Kind {
	return []Kind{
		{
			GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Resource: "configmaps", Family: "core", Namespaced: true, NoStatus: true,
			New:  func() client.Object { return &corev1.ConfigMap{} },
			Seed: func() map[string]any { return map[string]any{"data": map[string]any{"a": "1", "b.txt": "two"}} },
		},
		{
			GVK: corev1.SchemeGroupVersion.WithKind("Secret"), Resource: "secrets", Family: "core", Namespaced: true, NoStatus: true,
			New: func() client.Object { return &corev1.Secret{} },
			Seed: func() map[string]any {
				return map[string]any{"type": "Opaque", "data": map[string]any{"password": "c2VlZA=="}}
			},
			Mutable: []string{"data", "metadata"},
		},
		{
			GVK: corev1.SchemeGroupVersion.WithKind("Service"), Resource: "services", Family: "core", Namespaced: true,
			New: func() client.Object { return &corev1.Service{} },
			Seed: func() map[string]any {
				return map[string]any{"spec": map[string]any{
					"selector": map[string]any{"app": "web"},
					"ports":    []any{map[string]any{"name": "http", "port": int64(80), "targetPort": int64(8080), "protocol": "TCP"}},
				}}
			},
			Mutable: []string{"spec.selector", "spec.ports", "spec.sessionAffinity", "spec.publishNotReadyAddresses", "status", "metadata"},
		},
		{
			GVK: corev1.SchemeGroupVersion.WithKind("Node"), Resource: "nodes", Family: "core",
			New: func() client.Object { return &corev1.Node{} },
			Seed: func() map[string]any {
				return map[string]any{
					"spec": map[string]any{"taints": []any{map[string]any{"key": "example.com/dedicated", "value": "db", "effect": "NoSchedule"}}},
					"status": map[string]any{
						"capacity":    map[string]any{"cpu": "4", "memory": "8Gi", "pods": "110"},
						"allocatable": map[string]any{"cpu": "3800m", "memory": "7Gi", "pods": "110"},
						"addresses":   []any{map[string]any{"type": "InternalIP", "address": "10.0.0.7"}},
						"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "KubeletReady",
							"message": "kubelet is posting ready status", "lastHeartbeatTime": "2026-01-01T00:00:10Z",
							"lastTransitionTime": "2026-01-01T00:00:00Z"}},
					},
				}
			},
			Mutable: []string{"spec.taints", "spec.unschedulable", "status", "metadata"},
		},
		{
			GVK: corev1.SchemeGroupVersion.WithKind("Pod"), Resource: "pods", Family: "core", Namespaced: true,
			New: func() client.Object { return &corev1.Pod{} },
			Seed: func() map[string]any {
				return map[string]any{
					"spec": podTemplate("web")["spec"],
					"status": map[string]any{"phase": "Pending", "conditions": []any{map[string]any{
						"type": "PodScheduled", "status": "True", "lastProbeTime": nil, "lastTransitionTime": "2026-01-01T00:00:00Z"}}},
				}
			},
			Mutable: []string{"spec.activeDeadlineSeconds", "status", "metadata"},
		},
	}
}

// workloadKinds returns the workload kinds of apps and batch.
func workloadKinds() []Kind {
	return []Kind{
		{
			GVK: appsv1.SchemeGroupVersion.WithKind("Deployment"), Resource: "deployments", Family: "apps", Namespaced: true,
			New: func() client.Object { return &appsv1.Deployment{} },
			Seed: func() map[string]any {
				return map[string]any{
					"spec": map[string]any{"replicas": int64(2), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}, "template": podTemplate("web")},
					"status": map[string]any{"replicas": int64(2), "readyReplicas": int64(1), "observedGeneration": int64(1),
						"conditions": []any{map[string]any{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
							"message": "seeded", "lastUpdateTime": "2026-01-01T00:00:05Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}}},
				}
			},
			Mutable: []string{"spec.replicas", "spec.template.spec", "spec.strategy", "spec.minReadySeconds", "spec.paused", "status", "metadata"},
		},
		{
			GVK: appsv1.SchemeGroupVersion.WithKind("StatefulSet"), Resource: "statefulsets", Family: "apps", Namespaced: true,
			New: func() client.Object { return &appsv1.StatefulSet{} },
			Seed: func() map[string]any {
				return map[string]any{
					"spec":   map[string]any{"replicas": int64(3), "serviceName": "db", "selector": map[string]any{"matchLabels": map[string]any{"app": "db"}}, "template": podTemplate("db")},
					"status": map[string]any{"replicas": int64(3), "readyReplicas": int64(2), "availableReplicas": int64(2)},
				}
			},
			Mutable: []string{"spec.replicas", "spec.template.spec", "spec.updateStrategy", "spec.minReadySeconds", "status", "metadata"},
		},
		{
			GVK: batchv1.SchemeGroupVersion.WithKind("Job"), Resource: "jobs", Family: "batch", Namespaced: true,
			New: func() client.Object { return &batchv1.Job{} },
			Seed: func() map[string]any {
				tmpl := podTemplate("job")
				tmpl["spec"].(map[string]any)["restartPolicy"] = "Never"
				return map[string]any{
					"spec": map[string]any{"backoffLimit": int64(2), "template": tmpl},
				}
			},
			Mutable: []string{"spec.parallelism", "spec.activeDeadlineSeconds", "spec.suspend", "metadata"},
		},
	}
}

// clusterAPIKinds returns the kinds of Cluster API and cert-manager, CRDs with deep schemas and
// conditions.
func clusterAPIKinds() []Kind {
	return []Kind{
		{
			GVK: schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"}, Resource: "clusters",
			Family: "cluster-api", Namespaced: true,
			Seed: func() map[string]any {
				return map[string]any{
					"spec": map[string]any{"clusterNetwork": map[string]any{"pods": map[string]any{"cidrBlocks": []any{"192.168.0.0/16"}}}},
					"status": map[string]any{"phase": "Provisioning",
						"conditions": []any{condition("Available", "False", "NotAvailable"), condition("InfrastructureReady", "True", "Ready")}},
				}
			},
		},
		{
			GVK: schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Machine"}, Resource: "machines",
			Family: "cluster-api", Namespaced: true,
			Seed: func() map[string]any {
				return map[string]any{
					"spec": map[string]any{"clusterName": "demo", "bootstrap": map[string]any{"dataSecretName": "demo-bootstrap"},
						"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachine", "name": "demo-md"}},
					"status": map[string]any{"phase": "Pending", "conditions": []any{condition("Ready", "False", "NotReady")}},
				}
			},
		},
		{
			GVK: schema.GroupVersionKind{Group: "deprecatedtest.cluster.x-k8s.io", Version: "v1alpha1", Kind: "Phase1Obj"}, Resource: "phase1objs",
			Family: "cluster-api", Namespaced: true,
			Seed: func() map[string]any {
				// Cluster API's v1beta1 conditions: a severity beside metav1.Condition's fields.
				ready := condition("Ready", "False", "WaitingForInfrastructure")
				ready["severity"] = "Info"
				delete(ready, "observedGeneration")
				return map[string]any{"spec": map[string]any{"foo": "seed"}, "status": map[string]any{"conditions": []any{ready}}}
			},
		},
		{
			GVK: schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}, Resource: "certificates",
			Family: "cert-manager", Namespaced: true,
			Seed: func() map[string]any {
				return map[string]any{
					"spec": map[string]any{"secretName": "web-tls", "dnsNames": []any{"web.example.com"},
						"issuerRef": map[string]any{"name": "letsencrypt", "kind": "ClusterIssuer"}},
					"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "Issuing",
						"message": "seeded", "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": int64(1)}}},
				}
			},
		},
		{
			GVK: schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "CertificateRequest"}, Resource: "certificaterequests",
			Family: "cert-manager", Namespaced: true,
			Seed: func() map[string]any {
				return map[string]any{
					"spec": map[string]any{"request": "c2VlZA==", "issuerRef": map[string]any{"name": "letsencrypt"}},
				}
			},
		},
	}
}

// otherCRDKinds returns the kinds of Gateway API, Flux, Kueue and KEDA.
func otherCRDKinds() []Kind {
	return []Kind{
		{
			GVK: schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "GatewayClass"}, Resource: "gatewayclasses",
			Family: "gateway-api",
			Seed: func() map[string]any {
				return map[string]any{"spec": map[string]any{"controllerName": "example.com/gateway-controller"}}
			},
		},
		{
			GVK: schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"}, Resource: "gateways",
			Family: "gateway-api", Namespaced: true,
			Seed: func() map[string]any {
				return map[string]any{"spec": map[string]any{"gatewayClassName": "example",
					"listeners": []any{map[string]any{"name": "http", "port": int64(80), "protocol": "HTTP"}}}}
			},
		},
		{
			GVK: schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "GitRepository"}, Resource: "gitrepositories",
			Family: "flux", Namespaced: true,
			Seed: func() map[string]any {
				return map[string]any{"spec": map[string]any{"url": "https://git.example.com/app.git", "interval": "5m",
					"ref": map[string]any{"branch": "main"}}}
			},
		},
		{
			GVK: schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "LocalQueue"}, Resource: "localqueues",
			Family: "kueue", Namespaced: true,
			Seed: func() map[string]any {
				return map[string]any{"spec": map[string]any{"clusterQueue": "cluster-queue"}}
			},
		},
		{
			GVK: schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "ClusterQueue"}, Resource: "clusterqueues",
			Family: "kueue",
			Seed: func() map[string]any {
				return map[string]any{"spec": map[string]any{"namespaceSelector": map[string]any{}}}
			},
		},
		{
			GVK: schema.GroupVersionKind{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"}, Resource: "scaledobjects",
			Family: "keda", Namespaced: true,
			Seed: func() map[string]any {
				return map[string]any{"spec": map[string]any{"scaleTargetRef": map[string]any{"name": "web"}, "maxReplicaCount": int64(5),
					"triggers": []any{map[string]any{"type": "cpu", "metricType": "Utilization", "metadata": map[string]any{"value": "50"}}}}}
			},
		},
	}
}

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

package desired

import (
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/tenon-dev/tenon/examples/cluster-operator/api/v1alpha1"
)

// Labels every child carries; the operator's cache holds only objects with ManagedByLabel.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "cluster-operator"
	NameLabel      = "app.kubernetes.io/name"
	InstanceLabel  = "app.kubernetes.io/instance"
)

// The ports of a Cluster's members and the repository of their image.
const (
	// ClientPort is where clients reach a member.
	ClientPort int32 = 7000
	// PeerPort is where members reach each other.
	PeerPort int32 = 7001
	// ImageRepository is the members' image, tagged with spec.version.
	ImageRepository = "registry.example.com/cluster"
)

// Labels returns the labels of every child of cluster.
func Labels(cluster *appsv1alpha1.Cluster) map[string]string {
	return map[string]string{NameLabel: "cluster", InstanceLabel: cluster.Name, ManagedByLabel: ManagedBy}
}

// Selector returns the labels that select cluster's members.
func Selector(cluster *appsv1alpha1.Cluster) map[string]string {
	return map[string]string{NameLabel: "cluster", InstanceLabel: cluster.Name}
}

// ConfigMap returns the cluster's configuration, in its namespace: spec.version, spec.replicas
// and spec.config.
func ConfigMap(cluster *appsv1alpha1.Cluster) *corev1.ConfigMap {
	data := map[string]string{"version": cluster.Spec.Version, "replicas": fmt.Sprint(cluster.Spec.Replicas)}
	maps.Copy(data, cluster.Spec.Config)
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: cluster.Name + "-config", Namespace: cluster.Namespace, Labels: Labels(cluster)},
		Data:       data,
	}
}

// DirectoryEntry returns the cluster's entry in directoryNamespace, where every Cluster is
// listed with its DNS name and version. It lives in another namespace than the Cluster, where no
// owner reference can point back.
func DirectoryEntry(cluster *appsv1alpha1.Cluster, directoryNamespace string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: cluster.Namespace + "." + cluster.Name, Namespace: directoryNamespace, Labels: Labels(cluster)},
		Data:       map[string]string{"namespace": cluster.Namespace, "name": cluster.Name, "dnsName": cluster.Spec.DNSName, "version": cluster.Spec.Version},
	}
}

// Service returns the Service clients reach the cluster through; its cluster IP is what the DNS
// record points at.
//
// Ports name their protocol although TCP is the default: the protocol is part of a port's key,
// and a key the API server fills in keeps patch.Applier from proving that an apply would change
// nothing, so every change another writer makes (such as the StatefulSet controller's status)
// would cost a request that changes nothing.
func Service(cluster *appsv1alpha1.Cluster) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: cluster.Name, Namespace: cluster.Namespace, Labels: Labels(cluster)},
		Spec: corev1.ServiceSpec{
			Selector: Selector(cluster),
			Ports:    []corev1.ServicePort{{Name: "client", Protocol: corev1.ProtocolTCP, Port: ClientPort, TargetPort: intstr.FromString("client")}},
		},
	}
}

// PeerService returns the headless Service that names the cluster's members to each other.
func PeerService(cluster *appsv1alpha1.Cluster) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: cluster.Name + "-peers", Namespace: cluster.Namespace, Labels: Labels(cluster)},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			PublishNotReadyAddresses: true,
			Selector:                 Selector(cluster),
			Ports:                    []corev1.ServicePort{{Name: "peer", Protocol: corev1.ProtocolTCP, Port: PeerPort, TargetPort: intstr.FromString("peer")}},
		},
	}
}

// StatefulSet returns the cluster's members: spec.replicas pods of spec.version, which read the
// ConfigMap and find each other through the PeerService.
func StatefulSet(cluster *appsv1alpha1.Cluster) *appsv1.StatefulSet {
	peers := cluster.Name + "-peers"
	return &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: cluster.Name, Namespace: cluster.Namespace, Labels: Labels(cluster)},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(cluster.Spec.Replicas),
			ServiceName:         peers,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: Selector(cluster)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels(cluster)},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:  "member",
						Image: ImageRepository + ":" + cluster.Spec.Version,
						Args:  []string{"--peers=" + peers, "--config=/etc/cluster"},
						Ports: []corev1.ContainerPort{
							{Name: "client", ContainerPort: ClientPort, Protocol: corev1.ProtocolTCP},
							{Name: "peer", ContainerPort: PeerPort, Protocol: corev1.ProtocolTCP},
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/cluster"}},
					}},
					Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cluster.Name + "-config"}},
					}}},
				},
			},
		},
	}
}

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

package testenv

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// This file defines Disk, a custom resource with two versions, a defaulting, a validating and a
// conversion webhook, for the webhook tests of this package and of its Ginkgo suite, as a
// kubebuilder project has them. Its CRD and webhook configurations are in testdata/webhook.

// Paths of Disk's manifests, relative to this package's directory.
var (
	DiskCRDDirectory     = filepath.Join("testdata", "webhook", "crd")
	DiskWebhookDirectory = filepath.Join("testdata", "webhook", "config")
)

// DiskV1 and DiskV2 are the versions of Disk's group.
var (
	DiskV1Version = schema.GroupVersion{Group: "webhook.test.tenon.dev", Version: "v1"}
	DiskV2Version = schema.GroupVersion{Group: "webhook.test.tenon.dev", Version: "v2"}
)

// AddDisksToScheme registers both versions of Disk.
func AddDisksToScheme(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(DiskV1Version.WithKind("Disk"), &DiskV1{})
	s.AddKnownTypeWithName(DiskV1Version.WithKind("DiskList"), &DiskV1List{})
	s.AddKnownTypeWithName(DiskV2Version.WithKind("Disk"), &DiskV2{})
	s.AddKnownTypeWithName(DiskV2Version.WithKind("DiskList"), &DiskV2List{})
	metav1.AddToGroupVersion(s, DiskV1Version)
	metav1.AddToGroupVersion(s, DiskV2Version)
	return nil
}

// DiskV1 is Disk at v1: its size is a number of GiB.
type DiskV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DiskV1Spec `json:"spec,omitempty"`
}

// DiskV1Spec is the desired state of a DiskV1.
type DiskV1Spec struct {
	SizeGiB int32  `json:"sizeGiB,omitempty"`
	Tier    string `json:"tier,omitempty"`
}

// DiskV1List is a list of DiskV1.
type DiskV1List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DiskV1 `json:"items"`
}

// DiskV2 is Disk at v2, the storage version and the hub of conversions: its size is a quantity
// in Gi.
type DiskV2 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DiskV2Spec `json:"spec,omitempty"`
}

// DiskV2Spec is the desired state of a DiskV2.
type DiskV2Spec struct {
	Size string `json:"size,omitempty"`
	Tier string `json:"tier,omitempty"`
}

// DiskV2List is a list of DiskV2.
type DiskV2List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DiskV2 `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (d *DiskV1) DeepCopyObject() runtime.Object {
	c := *d
	d.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// DeepCopyObject implements runtime.Object.
func (l *DiskV1List) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = make([]DiskV1, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*DiskV1)
	}
	return &c
}

// DeepCopyObject implements runtime.Object.
func (d *DiskV2) DeepCopyObject() runtime.Object {
	c := *d
	d.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// DeepCopyObject implements runtime.Object.
func (l *DiskV2List) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = make([]DiskV2, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*DiskV2)
	}
	return &c
}

// Hub marks DiskV2 as the version the others convert to.
func (*DiskV2) Hub() {}

// ConvertTo converts d to the hub version.
func (d *DiskV1) ConvertTo(dst conversion.Hub) error {
	hub, ok := dst.(*DiskV2)
	if !ok {
		return fmt.Errorf("cannot convert a Disk to %T", dst)
	}
	hub.ObjectMeta = d.ObjectMeta
	hub.Spec = DiskV2Spec{Tier: d.Spec.Tier}
	if d.Spec.SizeGiB != 0 {
		hub.Spec.Size = strconv.Itoa(int(d.Spec.SizeGiB)) + "Gi"
	}
	return nil
}

// ConvertFrom converts the hub version to d.
func (d *DiskV1) ConvertFrom(src conversion.Hub) error {
	hub, ok := src.(*DiskV2)
	if !ok {
		return fmt.Errorf("cannot convert %T to a Disk", src)
	}
	d.ObjectMeta = hub.ObjectMeta
	d.Spec = DiskV1Spec{Tier: hub.Spec.Tier}
	if hub.Spec.Size != "" {
		n, err := strconv.ParseInt(strings.TrimSuffix(hub.Spec.Size, "Gi"), 10, 32)
		if err != nil || !strings.HasSuffix(hub.Spec.Size, "Gi") {
			return fmt.Errorf("spec.size %q is not a number of Gi", hub.Spec.Size)
		}
		d.Spec.SizeGiB = int32(n)
	}
	return nil
}

var (
	_ conversion.Hub         = (*DiskV2)(nil)
	_ conversion.Convertible = (*DiskV1)(nil)
)

// DiskWebhook defaults a Disk's tier to "standard" and refuses any tier but standard and
// premium. Its denials name Manager, to tell which manager answered.
type DiskWebhook struct {
	Manager string
}

// SetupDiskWebhooks registers the defaulting, validating and conversion webhooks of Disk with
// mgr, as a kubebuilder project's SetupWebhookWithManager does.
func SetupDiskWebhooks(mgr manager.Manager, name string) error {
	w := DiskWebhook{Manager: name}
	return ctrl.NewWebhookManagedBy(mgr, &DiskV2{}).WithDefaulter(w).WithValidator(w).Complete()
}

// Default sets the tier of a Disk that has none.
func (w DiskWebhook) Default(_ context.Context, d *DiskV2) error {
	if d.Spec.Tier == "" {
		d.Spec.Tier = "standard"
	}
	return nil
}

// ValidateCreate refuses an unknown tier.
func (w DiskWebhook) ValidateCreate(_ context.Context, d *DiskV2) (admission.Warnings, error) {
	return nil, w.validate(d)
}

// ValidateUpdate refuses an unknown tier.
func (w DiskWebhook) ValidateUpdate(_ context.Context, _, d *DiskV2) (admission.Warnings, error) {
	return nil, w.validate(d)
}

// ValidateDelete allows every deletion.
func (w DiskWebhook) ValidateDelete(context.Context, *DiskV2) (admission.Warnings, error) {
	return nil, nil
}

func (w DiskWebhook) validate(d *DiskV2) error {
	if !slices.Contains([]string{"standard", "premium"}, d.Spec.Tier) {
		return fmt.Errorf("spec.tier %q is neither standard nor premium (webhook of %s)", d.Spec.Tier, w.Manager)
	}
	return nil
}

var (
	_ admission.Defaulter[*DiskV2] = DiskWebhook{}
	_ admission.Validator[*DiskV2] = DiskWebhook{}
)

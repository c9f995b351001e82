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
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// controllerManager is a kube-controller-manager process running only the garbage collector and
// the namespace controller.
type controllerManager struct {
	*ownedProcess
}

// startControllerManager starts kube-controller-manager against e's API server as a member of
// system:masters, and returns once the garbage collector has deleted a probe object.
func startControllerManager(e *Environment, path string, output io.Writer) (*controllerManager, error) {
	user, err := e.env.AddUser(envtest.User{Name: "tenon:kube-controller-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("failed to provision the kube-controller-manager user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, fmt.Errorf("failed to render the kube-controller-manager kubeconfig: %w", err)
	}
	kubeconfigPath := filepath.Join(e.workDir, "kube-controller-manager.kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("failed to write the kube-controller-manager kubeconfig: %w", err)
	}

	p, err := startOwnedProcess(exec.Command(path,
		"--kubeconfig="+kubeconfigPath,
		"--controllers=garbagecollector,namespace",
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--kube-api-qps=200",
		"--kube-api-burst=400",
	), output, e.reaper)
	if err != nil {
		return nil, err
	}
	cm := &controllerManager{ownedProcess: p}

	ctx, cancel := context.WithTimeout(context.Background(), e.opts.StartTimeout)
	defer cancel()
	if err := cm.probe(ctx, e.client); err != nil {
		return nil, errors.Join(err, cm.stop())
	}
	return cm, nil
}

// probe creates an owner and a dependent in the default namespace, deletes the owner and waits
// until the garbage collector has deleted the dependent. The collector only processes deletions
// once its informers for every resource have synced, so this is the moment tests can rely on it.
func (cm *controllerManager) probe(ctx context.Context, c client.Client) error {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenon-gc-probe-", Namespace: metav1.NamespaceDefault}}
	if err := c.Create(ctx, owner); err != nil {
		return fmt.Errorf("failed to create the garbage-collector probe: %w", err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		GenerateName: owner.Name + "-",
		Namespace:    metav1.NamespaceDefault,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
			BlockOwnerDeletion: ptr.To(true),
		}},
	}}
	if err := c.Create(ctx, dependent); err != nil {
		return fmt.Errorf("failed to create the garbage-collector probe: %w", err)
	}
	if err := c.Delete(ctx, owner); err != nil {
		return fmt.Errorf("failed to delete the garbage-collector probe: %w", err)
	}
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		select {
		case <-cm.exited:
			return false, fmt.Errorf("kube-controller-manager exited: %w", cm.err)
		default:
		}
		err := c.Get(ctx, client.ObjectKeyFromObject(dependent), &corev1.ConfigMap{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, client.IgnoreNotFound(err)
	})
	if err != nil {
		return fmt.Errorf("the garbage collector did not start working: %w; its last output:\n%s", err, cm.tail)
	}
	return nil
}

// stop terminates the process and waits for it, killing it if it does not exit in time.
func (cm *controllerManager) stop() error {
	cm.ownedProcess.stop(10 * time.Second)
	return nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

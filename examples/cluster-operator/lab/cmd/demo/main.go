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

// Command demo runs the cluster operator live, on a control plane embedded in the process, and
// narrates what it does: it applies the sample Clusters, shows their conditions converge, scales
// one and shows observedGeneration catch up, deletes them and shows the finalizer clean up the
// DNS records, then prints a summary with the API writes per object.
//
// Everything runs in this process or under it: etcd, kube-apiserver and kube-controller-manager's
// garbage collector (tenon's testing/testenv, with the offline binaries `make envtest` builds),
// the simulated cloud DNS API, the simulated kubelet and the operator. It stops all of them when
// it ends, also on Ctrl-C; should it be killed outright, testenv's watchdog stops the control
// plane.
//
// Usage, from the lab's directory (`make demo` does this):
//
//	go run ./cmd/demo [-v] [-log-file path]
//
// The operator's logs go to a file (named at the end) unless -v sends them to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// options are the demo's flags.
type options struct {
	verbose          bool
	logFile          string
	configDir        string
	propagationDelay time.Duration
	replicaDelay     time.Duration
	timeout          time.Duration
}

func main() {
	var o options
	flag.BoolVar(&o.verbose, "v", false, "Write the operator's and the control plane's logs to stderr instead of a file.")
	flag.StringVar(&o.logFile, "log-file", filepath.Join(os.TempDir(), "cluster-operator-demo.log"),
		"Where the operator's logs go, unless -v.")
	flag.StringVar(&o.configDir, "config-dir", filepath.Join("..", "config"), "The operator's config directory: CRDs in crd/bases, sample Clusters in samples.")
	flag.DurationVar(&o.propagationDelay, "dns-propagation", 3*time.Second, "How long the simulated DNS API takes to propagate a change.")
	flag.DurationVar(&o.replicaDelay, "replica-delay", time.Second, "How long the simulated kubelet takes to make each replica ready.")
	flag.DurationVar(&o.timeout, "timeout", 3*time.Minute, "How long each phase may take before the demo gives up.")
	flag.Parse()

	logs, closeLogs, err := logSink(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
	logger := zap.New(zap.WriteTo(logs), zap.UseDevMode(true))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, os.Stdout, o)
	stop()
	closeLogs()
	if !o.verbose {
		fmt.Printf("\nThe operator's logs are in %s (run with -v to see them live).\n", o.logFile)
	}
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled):
		fmt.Println("\nInterrupted: everything the demo started has been stopped.")
		os.Exit(130)
	default:
		fmt.Fprintf(os.Stderr, "\ndemo failed: %v\n", err)
		os.Exit(1)
	}
}

// logSink returns where the logs go, and how to close it.
func logSink(o options) (io.Writer, func(), error) {
	if o.verbose {
		return os.Stderr, func() {}, nil
	}
	f, err := os.Create(o.logFile)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to create the log file: %w", err)
	}
	return f, func() { _ = f.Close() }, nil
}

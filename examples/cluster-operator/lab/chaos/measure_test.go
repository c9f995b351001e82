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

package chaos

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// freeAddr returns a local address no one listens on, for a server the operator starts.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("failed to find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// liveHeap returns the bytes the Go heap of the process serving pprof at addr holds once a
// garbage collection is done (runtime.MemStats.HeapAlloc right after runtime.GC, which
// /debug/pprof/heap?gc=1 runs).
func liveHeap(ctx context.Context, addr string) (int64, error) {
	stats, err := memStats(ctx, addr, true)
	if err != nil {
		return 0, err
	}
	heap, ok := stats["HeapAlloc"]
	if !ok {
		return 0, errors.New("no HeapAlloc in the heap profile")
	}
	return heap, nil
}

// memStats returns the integral fields of runtime.MemStats of the process serving pprof at addr,
// by name, as its heap profile prints them; after a garbage collection if gc.
func memStats(ctx context.Context, addr string, gc bool) (map[string]int64, error) {
	url := "http://" + addr + "/debug/pprof/heap?debug=1"
	if gc {
		url += "&gc=1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	stats := map[string]int64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		field, ok := strings.CutPrefix(sc.Text(), "# ")
		if !ok {
			continue
		}
		name, value, ok := strings.Cut(field, " = ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); err == nil {
			stats[name] = n
		}
	}
	return stats, sc.Err()
}

// saveHeapProfile saves the heap profile of the process serving pprof at addr to path.
func saveHeapProfile(ctx context.Context, addr, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/heap", http.NoBody)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// clockTicks is the unit of /proc/<pid>/stat's CPU times, USER_HZ: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// cpuTime returns the CPU time, user and system, process pid has used so far.
func cpuTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses and may hold spaces: utime and
	// stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat has %d fields after the name", pid, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// tenonFrame matches the functions of the tenon library, not of the example operator, and not
// requeue.WithBackoff's reconciler, which every reconcile runs inside: a sample with one of them
// on its stack is computation tenon does, with the client calls it makes.
var tenonFrame = regexp.MustCompile(`^github\.com/tenon-dev/tenon/(conditions|external|fencing|finalizer|ownership|patch|requeue)[./]`)

// sampleKind tells whose CPU time a profile's sample is.
type sampleKind int

const (
	// notTenon: no function of tenon's library is on the stack.
	notTenon sampleKind = iota
	// tenonComputation: tenon's own work (with the Go runtime's and libraries' functions it
	// calls, such as the JSON encoder and the allocator).
	tenonComputation
	// tenonClientCall: a client call tenon makes, from the REST client down (the HTTP round
	// trip, decoding the answer), which the floor operator makes too.
	tenonClientCall
	// tenonCallback: the operator's own code that tenon calls (the example's DNS provider
	// behind external.Resource, its functions that build the desired children).
	tenonCallback
)

// classify tells whose CPU time s is: tenon's (see tenonFrame), and then, by what the innermost
// function of tenon's on its stack was calling, its computation, a client call or the
// operator's own code called back.
func classify(s *profile.Sample) sampleKind {
	var callees []string // the functions below the innermost of tenon's, the leaf first
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function == nil {
				continue
			}
			name := line.Function.Name
			if tenonFrame.MatchString(name) && !strings.HasPrefix(name, "github.com/tenon-dev/tenon/requeue.(*backoff).") {
				return calleesKind(callees)
			}
			callees = append(callees, name)
		}
	}
	return notTenon
}

// calleesKind tells, from the functions called below tenon's innermost one (the leaf first),
// whether a sample is tenon's computation, a client call or the operator's code: the outermost
// of them that is either decides.
func calleesKind(callees []string) sampleKind {
	for i := len(callees) - 1; i >= 0; i-- {
		switch name := callees[i]; {
		case strings.HasPrefix(name, "github.com/tenon-dev/tenon/examples/"):
			return tenonCallback
		case strings.HasPrefix(name, "k8s.io/client-go/rest."), strings.HasPrefix(name, "net/http."):
			return tenonClientCall
		}
	}
	return tenonComputation
}

// cpuTotals is the CPU time profiles sampled: all of it, tenon's (see classify), and the parts
// of tenon's that are client calls and the operator's code it calls back.
type cpuTotals struct {
	all, tenon, clientCalls, callbacks time.Duration
}

// add adds the sample s of d to t.
func (t *cpuTotals) add(s *profile.Sample, d time.Duration) {
	t.all += d
	switch classify(s) {
	case notTenon:
		return
	case tenonClientCall:
		t.clientCalls += d
	case tenonCallback:
		t.callbacks += d
	case tenonComputation:
	}
	t.tenon += d
}

// cpuProfiler takes CPU profiles of the process serving pprof at an address, one after the
// other, and adds up their samples: all of them, and those in tenon's code.
type cpuProfiler struct {
	// dir, when set, is where each profile is saved as cpu-<n>.pb.gz.
	dir    string
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	totals   cpuTotals
	profiles int
	err      error
}

// cpuProfileChunk is how long each profile lasts; stop waits at most this long.
const cpuProfileChunk = 5 * time.Second

// startCPUProfiles profiles the process serving pprof at addr until stop, and saves the
// profiles in dir unless it is empty.
func startCPUProfiles(addr, dir string) *cpuProfiler {
	ctx, cancel := context.WithCancel(context.Background())
	p := &cpuProfiler{dir: dir, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for ctx.Err() == nil {
			if err := p.take(ctx, addr); err != nil && ctx.Err() == nil {
				// Not serving yet (the manager starts pprof with the rest): try again shortly.
				select {
				case <-ctx.Done():
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
	}()
	return p
}

// take takes one profile and adds it up.
func (p *cpuProfiler) take(ctx context.Context, addr string) error {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(cpuProfileChunk/time.Second))
	// Not canceled with ctx: a profile that has begun is read to its end, so that stop loses
	// no sample.
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, url, http.NoBody)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	prof, err := profile.ParseData(data)
	if err != nil {
		p.fail(err)
		return err
	}
	if p.dir != "" {
		if err := os.WriteFile(filepath.Join(p.dir, fmt.Sprintf("cpu-%03d.pb.gz", p.profiles)), data, 0o644); err != nil {
			p.fail(err)
			return err
		}
	}
	cpu := -1
	for i, st := range prof.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			cpu = i
		}
	}
	if cpu < 0 {
		err := fmt.Errorf("%s: no cpu nanoseconds sample type", url)
		p.fail(err)
		return err
	}
	var totals cpuTotals
	for _, s := range prof.Sample {
		totals.add(s, time.Duration(s.Value[cpu]))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.totals.all += totals.all
	p.totals.tenon += totals.tenon
	p.totals.clientCalls += totals.clientCalls
	p.totals.callbacks += totals.callbacks
	p.profiles++
	return nil
}

func (p *cpuProfiler) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.err = errors.Join(p.err, err)
}

// stop ends the profiles once the one under way is done, and returns the CPU time they
// sampled.
func (p *cpuProfiler) stop() (cpuTotals, error) {
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.profiles == 0 && p.err == nil {
		p.err = errors.New("no CPU profile was taken")
	}
	return p.totals, p.err
}

// traffic counts the bytes that went through a proxy: request bodies sent, and response
// bodies received, watches apart.
type traffic struct {
	sent, received, watched atomic.Int64
	// guards counts the bytes of sent that are guards of JSON patches (see guardBytes).
	guards atomic.Int64
}

// trafficCount is a snapshot of a traffic.
type trafficCount struct {
	Sent, Received, Watched, Guards int64
}

func (t *traffic) count() trafficCount {
	return trafficCount{Sent: t.sent.Load(), Received: t.received.Load(), Watched: t.watched.Load(), Guards: t.guards.Load()}
}

// countingReader counts the bytes read through it into n, and into read.
type countingReader struct {
	io.ReadCloser
	n    *atomic.Int64
	read atomic.Int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.n.Add(int64(n))
	r.read.Add(int64(n))
	return n, err
}

// countingWriter counts the bytes written through it; Unwrap lets the reverse proxy flush a
// watch's stream.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n.Add(int64(n))
	return n, err
}

func (w countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

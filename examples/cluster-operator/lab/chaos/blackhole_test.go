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
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// relay is a TCP relay between the operator and its proxy that can black-hole connections, as a
// load balancer or a NAT gateway that lost a connection's state does: while it is stalled, every
// connection, open or new, is accepted and goes silent, and stays silent after the relay heals;
// only connections made after that are relayed again. Nothing is closed, so only the client's own
// health checks and timeouts can notice. With a latency, every chunk the operator sends is held
// that long before it is relayed.
type relay struct {
	target string
	ln     net.Listener

	mu      sync.Mutex
	stalled bool
	latency time.Duration
	// frozen is closed when the relay stalls: the connections open at that moment go silent.
	frozen chan struct{}
	// conns are every connection of the relay, both sides; open are the operator's that are open.
	conns []net.Conn
	open  map[net.Conn]bool
	// accepted counts the connections accepted, silenced counts those that went silent.
	accepted, silenced int
}

// newRelay listens on a local port and relays to target (host:port).
func newRelay(t *testing.T, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("failed to listen: %v", err)
	}
	r := &relay{target: target, ln: ln, frozen: make(chan struct{}), open: map[net.Conn]bool{}}
	go r.accept()
	t.Cleanup(r.close)
	return r
}

// addr is the address the operator connects to.
func (r *relay) addr() string { return r.ln.Addr().String() }

func (r *relay) accept() {
	for {
		conn, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		r.accepted++
		r.conns = append(r.conns, conn)
		r.open[conn] = true
		stalled, frozen := r.stalled, r.frozen
		if stalled {
			r.silenced++
		}
		r.mu.Unlock()
		if stalled {
			continue // accepted, never read, never answered
		}
		go r.serve(conn, frozen)
	}
}

func (r *relay) serve(conn net.Conn, frozen chan struct{}) {
	defer func() {
		r.mu.Lock()
		delete(r.open, conn)
		r.mu.Unlock()
	}()
	upstream, err := net.Dial("tcp", r.target)
	if err != nil {
		_ = conn.Close()
		return
	}
	r.mu.Lock()
	r.conns = append(r.conns, upstream)
	r.mu.Unlock()
	go r.pipe(upstream, conn, frozen, false)
	r.pipe(conn, upstream, frozen, true)
}

// pipe copies from src to dst until either ends or the relay stalls; a chunk read after the
// stall is never written.
func (r *relay) pipe(dst, src net.Conn, frozen chan struct{}, delayed bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if delayed {
				if d := r.currentLatency(); d > 0 {
					timer := time.NewTimer(d)
					select {
					case <-timer.C:
					case <-frozen:
						timer.Stop()
					}
				}
			}
			select {
			case <-frozen:
				return // silent from now on: neither side hears anything more
			default:
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				_ = src.Close()
				return
			}
		}
		if err != nil {
			_ = dst.Close()
			return
		}
	}
}

func (r *relay) currentLatency() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.latency
}

// stall black-holes every open connection and every new one until heal.
func (r *relay) stall() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stalled {
		return
	}
	r.stalled = true
	r.silenced += len(r.open)
	close(r.frozen)
}

// heal relays new connections again; the silenced ones stay silent.
func (r *relay) heal() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stalled = false
	r.frozen = make(chan struct{})
}

// setLatency holds each chunk the operator sends for d before it is relayed.
func (r *relay) setLatency(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latency = d
}

// counts returns how many connections were accepted and how many went silent.
func (r *relay) counts() (accepted, silenced int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.accepted, r.silenced
}

func (r *relay) close() {
	_ = r.ln.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		_ = c.Close()
	}
}

// blackHole: the operator's connections to the API server are black-holed mid-convergence (open
// ones and new ones go silent and stay silent, as when a load balancer loses their state), while
// Clusters are created and scaled; then every request is slowed by seconds for a while. The
// operator must notice on its own (client-go's HTTP/2 health check closes a silent connection;
// the reconcile timeout ends a reconcile that waits on one), recover when the network heals, and
// lose nothing.
func blackHole(t *testing.T, w *world) *result {
	n := w.sizes.BlackHoleClusters
	ns := w.namespace(t, "blackhole")
	log := &writes{}
	p := w.newProxy(t, "blackhole", w.user.Config(), log)
	rl := newRelay(t, strings.TrimPrefix(p.server.URL, "https://"))
	const reconcileTimeout = 10 * time.Second
	// client-go pings an HTTP/2 connection that has been silent for the read-idle timeout and
	// closes it when the ping is not answered within the ping timeout (30s and 15s by default;
	// shortened here, as an operator may do, to keep the run short).
	proc := w.startOperatorWith(t, "blackhole", p.kubeconfigVia(t, rl.addr()),
		[]string{"HTTP2_READ_IDLE_TIMEOUT_SECONDS=5", "HTTP2_PING_TIMEOUT_SECONDS=3"},
		"--reconcile-timeout="+reconcileTimeout.String())
	before := w.createClusters(t, ns, "before", n, 3)

	timer := time.NewTimer(w.between(300*time.Millisecond, 1500*time.Millisecond))
	<-timer.C
	rl.stall()
	stalledAt := time.Now()
	during := w.createClusters(t, ns, "during", n, 1)
	w.setReplicas(t, ns, before, 5)
	hole := time.NewTimer(w.sizes.BlackHole)
	<-hole.C
	rl.heal()
	healed := time.Now()
	// Seconds of latency on every request for a while.
	latency := w.between(time.Second, 2*time.Second)
	rl.setLatency(latency)
	slowed := w.createClusters(t, ns, "slow", n, 1)
	slow := time.NewTimer(w.sizes.BlackHole)
	<-slow.C
	rl.setLatency(0)
	converge := w.waitConverged(t, ns)
	recovered := time.Since(healed)

	restarts := 0
	if !proc.running() {
		restarts++
		t.Errorf("the operator exited during the black hole: %v", proc.err)
	}
	// A reconcile that waited on a silent connection ended with its timeout, or with the error
	// of the closed connection: it was reported, it did not hang.
	timedOut := w.logsSince(stalledAt, "blackhole", "context deadline exceeded")
	want := map[string]int32{}
	for _, name := range before {
		want[name] = 5
	}
	for _, name := range slices.Concat(during, slowed) {
		want[name] = 1
	}
	mid := w.settledAudit(t, ns)
	lost, problems := w.lostEdits(t, ns, want)
	w.deleteAll(t, ns)
	deletion := w.waitGone(t, ns)
	final := w.settledAudit(t, ns)
	accepted, silenced := rl.counts()
	return &result{
		Operations: fmt.Sprintf("%d creates, %d scales, %d deletes; %d API writes by the operator", 3*n, n, 3*n, countWrites(log.list(), false)),
		Faults: fmt.Sprintf("every connection black-holed for %s (%d of %d connections went silent for ever), then %s of latency on every request for %s; %d reconcile errors named a deadline",
			secs(w.sizes.BlackHole), silenced, accepted, secs(latency), secs(w.sizes.BlackHole), timedOut),
		Convergence: fmt.Sprintf("converged %s after the network healed (%s after the latency ended), delete %s", secs(recovered), secs(converge), secs(deletion)),
		Leaked:      mid.Leaked + final.Leaked, Duplicated: mid.Duplicated + final.Duplicated, Lost: lost + restarts + mid.Missing, Wedged: mid.Wedged + final.Wedged,
		Problems: slices.Concat(mid.Problems, problems, final.Problems),
		Details: []string{
			fmt.Sprintf("%d Clusters of 3 replicas are created; 0.3–1.5s later a TCP relay between the operator and the API server stops relaying: the connections open then, and every new one, are accepted and never answered, and stay so after the relay heals (nothing is closed, as when a load balancer loses a connection's state). Meanwhile %d Clusters are created and the first %d scaled to 5.", n, n, n),
			fmt.Sprintf("After %s new connections are relayed again, each chunk the operator sends held for %s, while %d more Clusters are created; then the latency goes. The operator runs with --reconcile-timeout=%s and client-go's HTTP/2 health check at 5s idle + 3s ping timeout (HTTP2_READ_IDLE_TIMEOUT_SECONDS, HTTP2_PING_TIMEOUT_SECONDS; 30s + 15s by default).", secs(w.sizes.BlackHole), secs(latency), n, reconcileTimeout),
			"It must recover on its own, as the same process, with every Cluster as its user last wrote it.",
		},
	}
}

// logsSince counts the lines of replica's output written after since that contain text.
func (w *world) logsSince(since time.Time, replica, text string) int {
	n := 0
	for line := range strings.SplitSeq(w.logs.String(), "\n") {
		if !strings.HasPrefix(line, replica+" | ") || !strings.Contains(line, text) {
			continue
		}
		if at, ok := lineTime(line); ok && at.Before(since) {
			continue
		}
		n++
	}
	return n
}

// lineTime reads the "ts" field of a JSON log line of the manager.
func lineTime(line string) (time.Time, bool) {
	_, rest, ok := strings.Cut(line, `"ts":"`)
	if !ok {
		return time.Time{}, false
	}
	stamp, _, _ := strings.Cut(rest, `"`)
	ts, err := time.Parse(time.RFC3339Nano, stamp)
	return ts, err == nil
}

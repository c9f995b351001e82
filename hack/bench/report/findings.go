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

package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/tenon-dev/tenon/hack/bench/contender"
	"github.com/tenon-dev/tenon/hack/bench/harness"
)

// comparison is one figure on which the report compares tenon with the others. Lower is better
// for every one of them.
type comparison struct {
	workload string
	metric   Metric
	// ratio compares the per-run ratios to the floor instead of the figures themselves (wall time,
	// which drifts between runs).
	ratio bool
	// prec is the number of decimals to show.
	prec int
}

var comparisons = []comparison{
	{harness.Converge, WritesPerObject, false, 2},
	{harness.Steady, WritesPerObject, false, 2},
	{harness.Contention, WritesPerObject, false, 2},
	{harness.Delete, WritesPerObject, false, 2},
	{harness.Converge, Conflicts409, false, 0},
	{harness.Contention, Conflicts409, false, 0},
	{harness.Contention, ReconcileErrors, false, 0},
	{harness.Contention, LostUpdates, false, 0},
	{harness.Converge, WriteBytesPerObject, false, 0},
	{harness.Contention, WriteBytesPerObject, false, 0},
	{harness.Converge, WallSeconds, true, 2},
	{harness.Steady, WallSeconds, true, 2},
	{harness.Contention, WallSeconds, true, 2},
	{harness.Delete, WallSeconds, true, 2},
}

// finding is a figure on which a tenon contender is behind the floor or another contender.
type finding struct {
	tenon   string
	cmp     comparison
	mine    Stat
	ahead   []string
	overlap bool
}

// notAhead returns the figures on which tenon or tenon-ssa is behind the floor or another
// contender: by more than 1% and 0.005 for counts, by more than 5% for wall-time ratios.
func (r *Report) notAhead() []finding {
	var out []finding
	for _, t := range []string{contender.TenonName, "tenon-ssa"} {
		if !r.has(t) {
			continue
		}
		for _, cmp := range comparisons {
			get := func(c string) Stat {
				if cmp.ratio {
					return r.Ratio(c, cmp.workload, cmp.metric)
				}
				return r.Stat(c, cmp.workload, cmp.metric)
			}
			mine := get(t)
			if mine.N == 0 {
				continue
			}
			f := finding{tenon: t, cmp: cmp, mine: mine}
			for _, c := range r.names() {
				if c == t || (cmp.ratio && c == contender.FloorName) {
					continue
				}
				other := get(c)
				if other.N == 0 || !behind(mine.Median, other.Median, cmp.ratio) {
					continue
				}
				f.ahead = append(f.ahead, fmt.Sprintf("%s %s", c, fmtStatShort(other, cmp)))
				if other.Max >= mine.Min {
					f.overlap = true
				}
			}
			if len(f.ahead) > 0 {
				out = append(out, f)
			}
		}
	}
	return out
}

// behind reports whether mine is worse (higher) than other by more than the noise allowance.
func behind(mine, other float64, ratio bool) bool {
	if math.IsNaN(mine) || math.IsNaN(other) {
		return false
	}
	if ratio {
		return mine > other*1.05
	}
	return mine-other > 0.005 && mine > other*1.01
}

func fmtStatShort(s Stat, cmp comparison) string {
	if cmp.ratio {
		return fmtRatio(s)
	}
	return fmtStat(s, cmp.prec)
}

func (r *Report) writeNotAhead(b *strings.Builder) {
	b.WriteString("### Where tenon is not ahead\n\n")
	findings := r.notAhead()
	if len(findings) == 0 {
		b.WriteString("On every figure compared (writes per object, 409 responses, reconcile errors, lost updates, " +
			"write bytes and wall time in each workload), tenon and tenon-ssa are at least as good as every " +
			"other contender and the floor.\n\n")
		return
	}
	b.WriteString("Every figure on which tenon or tenon-ssa is behind the floor or another contender (by more than " +
		"1% for counts, 5% for wall-time ratios), with the cause where it was analysed. Lower is better for all.\n\n")
	causes := map[string]bool{}
	for _, f := range findings {
		what := f.cmp.workload + ": " + f.cmp.metric.Name
		if f.cmp.ratio {
			what += " ×floor"
		}
		note := ""
		if f.overlap {
			note = " The spreads overlap."
		}
		cause, key := r.cause(f)
		ref := ""
		if key != "" {
			ref = fmt.Sprintf(" Cause: [%s](#cause-%s).", causeTitles[key], key)
			causes[key] = true
		}
		fmt.Fprintf(b, "- **%s**, %s: %s against %s.%s%s\n", f.tenon, what, fmtStatShort(f.mine, f.cmp),
			strings.Join(f.ahead, ", "), note, ref)
		if key == "" && cause != "" {
			fmt.Fprintf(b, "  %s\n", cause)
		}
	}
	b.WriteString("\n")
	for _, key := range causeOrder {
		if !causes[key] {
			continue
		}
		fmt.Fprintf(b, "<a id=\"cause-%s\"></a>**%s.** %s\n\n", key, causeTitles[key], r.causeText(key))
	}
}

// The analysed causes, by key.
const (
	causeStaleCache   = "stale-cache"
	causeApplySkip    = "apply-skip"
	causeNoLock       = "no-lock"
	causeGuards       = "guards"
	causeWallNoise    = "wall-noise"
	causeRequeueDelay = "requeue-delay"
	causeCoalescing   = "coalescing"
	causeApplyBytes   = "apply-bytes"
	causeWritersPace  = "writers-pace"
)

var causeOrder = []string{causeStaleCache, causeApplySkip, causeNoLock, causeCoalescing, causeGuards, causeApplyBytes,
	causeRequeueDelay, causeWritersPace, causeWallNoise}

var causeTitles = map[string]string{
	causeStaleCache:   "a cache that lags behind the controller's own writes",
	causeApplySkip:    "the Applier cannot prove a no-op on a list other writers added to",
	causeNoLock:       "writes without a precondition cannot conflict",
	causeGuards:       "guarded JSON patches are larger",
	causeRequeueDelay: "a conflict is retried after a delay",
	causeWallNoise:    "wall time within the machine's noise",
	causeCoalescing:   "how many edits one reconcile absorbs depends on timing",
	causeApplyBytes:   "an apply request carries the whole desired status",
	causeWritersPace:  "the writers went slower, the controller settled as fast",
}

// cause names the analysed cause of a finding, or returns a note that it was not analysed.
func (r *Report) cause(f finding) (text, key string) {
	switch f.cmp.metric.Name {
	case WritesPerObject.Name:
		key = writesCause(f)
	case Conflicts409.Name:
		key = conflictsCause(f)
	case WriteBytesPerObject.Name:
		key = causeGuards
		if f.tenon == "tenon-ssa" {
			key = causeApplyBytes
		}
	}
	if key == "" && f.cmp.ratio {
		key = r.ratioCause(f)
	}
	if key == "" {
		return "Cause not analysed.", ""
	}
	return "", key
}

// writesCause is the cause of a finding on writes per object, if analysed.
func writesCause(f finding) string {
	w := f.cmp.workload
	switch {
	case f.tenon == "tenon-ssa" && w != harness.Delete:
		return causeApplySkip
	case w == harness.Converge:
		return causeStaleCache
	case w == harness.Contention && f.overlap:
		return causeCoalescing
	}
	return ""
}

// conflictsCause is the cause of a finding on 409 responses, if analysed.
func conflictsCause(f finding) string {
	switch f.cmp.workload {
	case harness.Converge:
		return causeStaleCache
	case harness.Contention:
		return causeNoLock
	}
	return ""
}

// ratioCause is the cause of a finding on a ratio of times, if analysed.
func (r *Report) ratioCause(f finding) string {
	w := f.cmp.workload
	switch {
	case w == harness.Contention && r.Stat(f.tenon, w, QuietRequeues).Median > 0:
		return causeRequeueDelay
	case w == harness.Contention && r.settlesAsFast(f.tenon):
		return causeWritersPace
	case w == harness.Converge && f.tenon == contender.TenonName && r.Stat(f.tenon, w, Conflicts409).Median > 0:
		return causeStaleCache
	case f.overlap:
		return causeWallNoise
	}
	return ""
}

// settlesAsFast reports whether contender t took at most 10% (or 0.3 s) longer than every other
// contender to settle after the writers stopped: then a longer contention workload is the
// writers' slower pace, not the controller.
func (r *Report) settlesAsFast(t string) bool {
	mine := r.Stat(t, harness.Contention, SettleSeconds).Median
	for _, c := range r.names() {
		if c == t || c == contender.FloorName {
			continue
		}
		if other := r.Stat(c, harness.Contention, SettleSeconds).Median; mine > other*1.1 && mine > other+0.3 {
			return false
		}
	}
	return true
}

// bytesPerWrite is the median of write bytes per object divided by the median of writes per object.
func (r *Report) bytesPerWrite(c, workload string) float64 {
	return r.Stat(c, workload, WriteBytesPerObject).Median / r.Stat(c, workload, WritesPerObject).Median
}

// settleList lists tenon's (or the other contenders') settle times after the writers, for
// causeWritersPace.
func (r *Report) settleList(tenon bool) string {
	var parts []string
	for _, c := range r.names() {
		if isTenon(c) != tenon {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s", c, fmtStat(r.Stat(c, harness.Contention, SettleSeconds), 1)))
	}
	return strings.Join(parts, ", ")
}

// causeText explains a cause with the figures of this report.
func (r *Report) causeText(key string) string {
	floor := contender.FloorName
	switch key {
	case causeStaleCache:
		return r.staleCacheText()
	case causeApplySkip:
		return r.applySkipText()
	case causeNoLock:
		return fmt.Sprintf("controllerutil's `CreateOrPatch` sends merge patches without a resourceVersion, so the API server "+
			"never answers 409, and that is also why it lost %s updates under contention: its status patch carries "+
			"the whole `status.conditions` list as its cache saw it and overwrites newer conditions of other "+
			"writers. tenon's 409s come from its guards (a `test` of what it read), which turn the same race into a "+
			"retry on the latest object.",
			fmtNum(r.Stat("controllerutil", harness.Contention, LostUpdates).Median, 0))
	case causeGuards:
		return fmt.Sprintf("A tenon patch is a JSON Patch whose operations carry their path and, for guarded fields, a "+
			"`test` of the value read; a merge patch of the same change is a bare JSON object. The guards are what "+
			"keep other writers' data safe. Per write request to converge: tenon %s bytes, the floor %s.",
			fmtNum(r.bytesPerWrite(contender.TenonName, harness.Converge), 0), fmtNum(r.bytesPerWrite(floor, harness.Converge), 0))
	case causeRequeueDelay:
		return "When tenon's patch helper runs out of retries on a conflict, `requeue.WithBackoff` requeues the object " +
			"after a jittered delay (200–400 ms) instead of returning an error for controller-runtime's " +
			"immediate rate-limited retry; the last edits of a contention run therefore take a little longer to " +
			"settle."
	case causeCoalescing:
		return "Under contention a controller writes once per reconcile that finds something to do, and a reconcile " +
			"absorbs every edit made before it read the object; how many edits fall into one reconcile depends on " +
			"timing, which differs from run to run. The spreads overlap: the difference is within that variation."
	case causeApplyBytes:
		return "A server-side apply request declares every field the manager owns, here the whole controller status " +
			"(four conditions and observedGeneration), where a patch carries only what changed."
	case causeWritersPace:
		return fmt.Sprintf("The contention workload lasts as long as the writers take plus the time the controller needs to "+
			"settle after them. The writers' edits went slower in tenon's runs than in the fastest (the API server and "+
			"the machine were busier), but the controller settled after the last edit as fast as the others: %s, "+
			"against %s (seconds).", r.settleList(true), r.settleList(false))
	case causeWallNoise:
		return fmt.Sprintf("The difference is smaller than the spread between runs on this %d-core machine, which the "+
			"control plane, the manager and the writers share.", r.env.Cores)
	}
	return ""
}

// staleCacheText explains causeStaleCache.
func (r *Report) staleCacheText() string {
	floor := contender.FloorName
	v := r.readYourWrites()
	ryw := ""
	if r.in.Params.ReadYourWritesRuns > 0 {
		ryw = fmt.Sprintf(" With read-your-writes on for every contender ([experiment](#experiment-every-contender-reads-its-own-writes)), "+
			"tenon sends %s writes per object to converge, the floor's %s.",
			fmtNum(v.Stat(contender.TenonName, harness.Converge, WritesPerObject).Median, 2),
			fmtNum(v.Stat(floor, harness.Converge, WritesPerObject).Median, 2))
	}
	return fmt.Sprintf("The floor reads its own writes; tenon, like every other contender, reads the informer cache "+
		"as controller-runtime sets it up by default.\n\n"+
		"- **What happens.** Its finalizer patch produces a watch event that requeues the object, and "+
		"controller-runtime's priority queue serves that event before the rest of the initial list, so the next "+
		"reconcile of the object often runs before the informer has delivered the status written by the "+
		"previous one. It sees no status and writes it again.\n"+
		"- **What it costs.** tenon's guarded status patch is refused with a 409 (%s per run), re-read, found "+
		"done, and nothing else is sent: no error, no extra version in etcd (%s new versions per object, the "+
		"floor %s). The excess is wasted requests, not extra writes to storage.\n"+
		"- **Who pays it.** Every contender that reads the cache, as 409s or as requests that change nothing "+
		"(compare its writes with the experiment's).%s\n"+
		"- **Remedy**: give the helper's `patch.Writer` a `patch.History`, which merges onto the controller's own last "+
		"write when the object read is older (this contender does), or turn on `EnableReadYourWritesConsistency`.",
		fmtNum(r.Stat(contender.TenonName, harness.Converge, Conflicts409).Median, 0),
		fmtNum(r.Stat(contender.TenonName, harness.Converge, VersionsPerObject).Median, 2),
		fmtNum(r.Stat(floor, harness.Converge, VersionsPerObject).Median, 2), ryw)
}

// applySkipText explains causeApplySkip.
func (r *Report) applySkipText() string {
	floor := contender.FloorName
	return fmt.Sprintf("`patch.Applier.ApplyStatus` skips an apply in two cases:\n\n"+
		"- it applied the same status and the live object has not changed since (its resourceVersion is the one "+
		"the apply left, or older: a cache that has not caught up);\n"+
		"- every desired field already has its value and its field manager owns exactly those fields.\n\n"+
		"Under contention neither holds. The writers change the object between reconciles, so the first test "+
		"fails. They add conditions of their own to `status.conditions`, so the second does too: it compares "+
		"lists element by element, and a list another manager added to is not proved unchanged. The Applier "+
		"then applies, and the API server finds nothing to change: wasted requests, not conflicts or lost data "+
		"(0 of either).\n\n"+
		"To converge, with no other writer, it sends %s writes per object, the floor %s. Remedy for the patch "+
		"package: compare lists of type map (such as conditions) by key.",
		fmtNum(r.Stat("tenon-ssa", harness.Converge, WritesPerObject).Median, 2),
		fmtNum(r.Stat(floor, harness.Converge, WritesPerObject).Median, 2))
}

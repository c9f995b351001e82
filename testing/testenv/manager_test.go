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
	"fmt"
	"runtime"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tenon-dev/tenon/internal/testtypes"
)

// keys returns the namespace/name of each Widget.
func keys(list *testtypes.WidgetList) []string {
	out := make([]string, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, client.ObjectKeyFromObject(&list.Items[i]).String())
	}
	return out
}

func TestAManagerGivenNamespacesCachesOnlyTheirObjects(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	mine, other := env.Namespace(t), env.Namespace(t)
	scoped := env.NewManager(t, ctrl.Options{}, mine)
	everything := env.NewManager(t, ctrl.Options{})
	StartManager(t, scoped)
	StartManager(t, everything)

	// The other test's Widget is created first: a cache that watches every namespace has it
	// by the time it has the later one.
	theirs := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: other}}
	g.Expect(env.Client().Create(ctx, theirs)).To(Succeed())
	ours := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "ours", Namespace: mine}}
	g.Expect(env.CreateAndWait(ctx, ours, scoped.GetCache())).To(Succeed())
	g.Expect(env.WaitUntilSeen(ctx, everything.GetCache(), ours)).To(Succeed())

	var all testtypes.WidgetList
	g.Expect(everything.GetCache().List(ctx, &all)).To(Succeed())
	g.Expect(keys(&all)).To(ContainElements(mine+"/ours", other+"/theirs"), "without namespaces the cache has every test's objects")

	var seen testtypes.WidgetList
	g.Expect(scoped.GetCache().List(ctx, &seen)).To(Succeed())
	g.Expect(keys(&seen)).To(Equal([]string{mine + "/ours"}))
	err := scoped.GetClient().Get(ctx, client.ObjectKeyFromObject(theirs), &testtypes.Widget{})
	g.Expect(err).To(MatchError(ContainSubstring("unknown namespace for the cache")))
	g.Expect(apierrors.IsNotFound(err)).To(BeFalse())
}

func TestNewManagerAddsNamespacesToThoseOfTheOptions(t *testing.T) {
	g := NewWithT(t)
	first, second := env.Namespace(t), env.Namespace(t)
	opts := ctrl.Options{}
	opts.Cache.DefaultNamespaces = map[string]cache.Config{first: {}}

	mgr := env.NewManager(t, opts, second)
	StartManager(t, mgr)

	g.Expect(opts.Cache.DefaultNamespaces).To(HaveLen(1), "the caller's options are not modified")
	for _, ns := range []string{first, second} {
		w := &testtypes.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}}
		g.Expect(env.CreateAndWait(t.Context(), w, mgr.GetCache())).To(Succeed(), "namespace %s", ns)
	}
}

// fatalTB is the test's TB, except that Fatalf records the failure and ends the goroutine, as
// testing.T's does, without failing the test.
type fatalTB struct {
	TB
	fatal string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fatalOf runs fn with a fatalTB in a goroutine of its own and returns what failed it.
func fatalOf(t *testing.T, fn func(TB)) string {
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(tb)
	}()
	<-done
	return tb.fatal
}

func TestAnEmptyNamespaceIsNotAllNamespaces(t *testing.T) {
	g := NewWithT(t)

	fatal := fatalOf(t, func(tb TB) { env.NewManager(tb, ctrl.Options{}, env.Namespace(t), "") })

	g.Expect(fatal).To(Equal("testenv: failed to create a manager: an empty namespace would cache every namespace; give no namespaces for that"))
}

package kubetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// TestExamplesDryRun sends every object of examples/kubernetes/*.yaml to
// the real API server as a server-side dry-run create (validation,
// defaulting and admission run; nothing is stored). Namespaces the
// namespaced objects name are created first, for real, as a cluster
// would have them; an object without a namespace goes to Namespace.
func TestExamplesDryRun(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "..", "examples", "kubernetes", "*.yaml"))
	if len(files) == 0 {
		t.Fatalf("no examples/kubernetes/*.yaml beside %s", root)
	}
	var objs []*unstructured.Unstructured
	origin := map[*unstructured.Unstructured]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for i := 0; ; i++ {
			var u unstructured.Unstructured
			if err := dec.Decode(&u.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatalf("%s: document %d: %v", f, i, err)
			}
			if len(u.Object) == 0 {
				continue // an empty document (a trailing ---)
			}
			objs = append(objs, &u)
			origin[&u] = filepath.Base(f) + " " + u.GetKind() + "/" + u.GetName()
		}
	}

	s := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(s.Config(Admin))
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(s.Admin.Discovery()))
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Errorf("%s: %s is not served by kube-apiserver v1.37.2: %v", origin[u], gvk, err)
			continue
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := u.GetNamespace()
			if ns == "" {
				ns = Namespace
			}
			_, err := s.Admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("create namespace %s: %v", ns, err)
			}
			ri = dyn.Resource(m.Resource).Namespace(ns)
		}
		if _, err := ri.Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}); err != nil {
			t.Errorf("%s: server-side dry run: %v", origin[u], err)
			continue
		}
		t.Logf("%s: accepted", origin[u])
	}
}

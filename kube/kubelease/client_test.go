package kubelease

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// TestNewClientWire checks NewClient's requests and decoding against the
// API server's wire format (paths, query parameters, bodies, Status
// errors, watch events). The real API server is exercised by the
// command's tests; this pins what the hand-written requests and the JSON
// decoding of Leases, Status errors and watch events must do.
func TestNewClientWire(t *testing.T) {
	const lease = `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"x","namespace":"ns","resourceVersion":"7"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15,"leaseTransitions":3}}`
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen = append(seen, r.Method+" "+r.URL.String())
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "GET" && r.URL.Path == "/apis/coordination.k8s.io/v1/namespaces/ns/leases/x":
			fmt.Fprint(w, lease)
		case r.Method == "GET" && r.URL.Path == "/apis/coordination.k8s.io/v1/namespaces/ns/leases/gone":
			w.WriteHeader(404)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"details":{"name":"gone","group":"coordination.k8s.io","kind":"leases"}}`)
		case r.Method == "PUT" && r.URL.Path == "/apis/coordination.k8s.io/v1/namespaces/ns/leases/x":
			if !strings.Contains(string(body), `"resourceVersion":"7"`) {
				t.Errorf("update without the resourceVersion precondition: %s", body)
			}
			w.WriteHeader(409)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409}`)
		case r.Method == "POST" && r.URL.Path == "/apis/coordination.k8s.io/v1/namespaces/ns/leases":
			w.WriteHeader(201)
			fmt.Fprint(w, strings.Replace(string(body), `"metadata":{`, `"metadata":{"resourceVersion":"8",`, 1))
		case r.Method == "GET" && r.URL.Path == "/apis/coordination.k8s.io/v1/namespaces/ns/leases" && r.URL.Query().Get("watch") == "true":
			fmt.Fprintf(w, `{"type":"MODIFIED","object":%s}`+"\n", lease)
			fmt.Fprint(w, `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410}}`+"\n")
		default:
			w.WriteHeader(500)
		}
	}))
	defer srv.Close()
	cl, err := NewClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ls := cl.Leases("ns")

	got, err := ls.Get(ctx, "x", metav1.GetOptions{})
	if err != nil || deref(got.Spec.HolderIdentity) != "a" || deref(got.Spec.LeaseTransitions) != 3 || got.ResourceVersion != "7" {
		t.Fatalf("get: %v %+v", err, got)
	}
	if _, err := ls.Get(ctx, "gone", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get of an absent Lease: want NotFound, have %v", err)
	}
	if _, err := ls.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("update: want Conflict, have %v", err)
	}
	created, err := ls.Create(ctx, &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "y", Namespace: "ns"}, Spec: holderSpec("me", 15*time.Second, t0, t0, 0)}, metav1.CreateOptions{})
	if err != nil || created.ResourceVersion != "8" || deref(created.Spec.HolderIdentity) != "me" {
		t.Fatalf("create: %v %+v", err, created)
	}
	w, err := ls.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=x", ResourceVersion: "7", TimeoutSeconds: ptr(int64(60))})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := <-w.ResultChan()
	if l, ok := ev.Object.(*coordv1.Lease); ev.Type != watch.Modified || !ok || deref(l.Spec.HolderIdentity) != "a" {
		t.Fatalf("watch: want a MODIFIED Lease, have %v %T", ev.Type, ev.Object)
	}
	ev = <-w.ResultChan()
	if st, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok || st.Code != 410 {
		t.Fatalf("watch: want an ERROR Status 410, have %v %#v", ev.Type, ev.Object)
	}
	last := seen[len(seen)-1]
	for _, want := range []string{"watch=true", "fieldSelector=metadata.name%3Dx", "resourceVersion=7", "timeoutSeconds=60"} {
		if !strings.Contains(last, want) {
			t.Errorf("watch request %s lacks %s", last, want)
		}
	}
}

// TestNewClientErrorsAndStop: an answer that is not a Status (a Go TLS
// server's answer to plain HTTP, a proxy's page) is client-go's generic
// error with the body, which Classify still reads; a watch's channel
// closes once it is stopped, with its request ended.
func TestNewClientErrorsAndStop(t *testing.T) {
	const plain = "Client sent an HTTP request to an HTTPS server.\n"
	ended := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("watch") {
		case "true":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			<-r.Context().Done() // held open until the client ends it
			close(ended)
		default:
			if strings.HasSuffix(r.URL.Path, "/endless") {
				// Not an API server: an answer that does not end.
				chunk := bytes.Repeat([]byte("x"), 64<<10)
				for i := 0; i < (maxBody>>16)+4; i++ {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
				return
			}
			w.WriteHeader(400)
			fmt.Fprint(w, plain)
		}
	}))
	defer srv.Close()
	cl, err := NewClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = cl.Leases("ns").Get(ctx, "x", metav1.GetOptions{})
	if !apierrors.IsBadRequest(err) || !plainAtTLS(err) {
		t.Fatalf("want a bad request that plainAtTLS recognises, have %v", err)
	}
	if _, err = cl.Leases("ns").Get(ctx, "endless", metav1.GetOptions{}); err == nil || !strings.Contains(err.Error(), "not an API server's") {
		t.Fatalf("an answer over %d bytes: want it refused, have %v", maxBody, err)
	}
	w, err := cl.Leases("ns").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	w.Stop() // idempotent
	select {
	case _, ok := <-w.ResultChan():
		if ok {
			t.Fatal("want the channel closed after Stop, have an event")
		}
	case <-ctx.Done():
		t.Fatal("the watch's channel is still open 10s after Stop")
	}
	select {
	case <-ended:
	case <-ctx.Done():
		t.Fatal("the watch request still runs 10s after Stop")
	}
}

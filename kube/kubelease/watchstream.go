package kubelease

import (
	"context"
	"encoding/json"
	"io"
	"sync"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// streamWatch is a watch.Interface over the API server's JSON watch
// stream (one {"type", "object"} per event): a Lease for ADDED, MODIFIED,
// DELETED and BOOKMARK, a *metav1.Status for ERROR. The channel closes
// when the stream ends, fails to decode, or Stop is called.
type streamWatch struct {
	body   io.ReadCloser
	cancel context.CancelFunc
	ch     chan watch.Event
	done   chan struct{}
	once   sync.Once
}

func newStreamWatch(body io.ReadCloser, cancel context.CancelFunc) *streamWatch {
	w := &streamWatch{body: body, cancel: cancel, ch: make(chan watch.Event), done: make(chan struct{})}
	// The decoder of the stream, as client-go's StreamWatcher runs it:
	// ended by Stop (which cancels the request, so the read returns) or
	// by the stream's end; it never outlives the request.
	go w.receive()
	return w
}

func (w *streamWatch) Stop() {
	w.once.Do(func() {
		close(w.done)
		w.cancel()
	})
}

func (w *streamWatch) ResultChan() <-chan watch.Event { return w.ch }

func (w *streamWatch) receive() {
	defer close(w.ch)
	defer w.cancel()
	defer w.body.Close()
	d := json.NewDecoder(w.body)
	for {
		var ev struct {
			Type   watch.EventType `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := d.Decode(&ev); err != nil {
			return
		}
		var obj runtime.Object
		if ev.Type == watch.Error {
			st := &metav1.Status{}
			if err := json.Unmarshal(ev.Object, st); err != nil {
				return
			}
			obj = st
		} else {
			l := &coordv1.Lease{}
			if err := json.Unmarshal(ev.Object, l); err != nil {
				return
			}
			l.TypeMeta = metav1.TypeMeta{}
			obj = l
		}
		select {
		case w.ch <- watch.Event{Type: ev.Type, Object: obj}:
		case <-w.done:
			return
		}
	}
}
